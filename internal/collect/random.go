package collect

import (
	"context"
	"math/rand/v2"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// enumerateBelow is the number of remaining comparisons under which
// pickRandom lists them all instead of sampling with rejection.
const enumerateBelow = 200_000

// comparisons returns how many comparisons n items have (anchor and
// unordered pair of the others).
func comparisons(n int) int { return n * (n - 1) * (n - 2) / 2 }

// blindRandom draws a uniformly random comparison without looking at what
// the participant was asked: the store inserts it and lets the unique index
// refuse a repeat (then it asks pickRandom). Worth it while a random draw
// is most likely new: the participant was asked at most half of them.
func blindRandom(n, asked int) (study.Comparison, bool) {
	if n < 3 || 2*(asked+1) > comparisons(n) {
		return study.Comparison{}, false
	}
	return displayOrder(randomKey(n)), true
}

// pickRandom draws uniformly among the comparisons of n items not in asked,
// or returns ErrExhausted.
func pickRandom(n int, asked map[triplet.Key]struct{}) (study.Comparison, error) {
	if n < 3 {
		return study.Comparison{}, ErrExhausted
	}
	total := comparisons(n)
	if total-len(asked) <= 0 {
		return study.Comparison{}, ErrExhausted
	}
	// Rejection sampling is uniform over the comparisons not yet asked; it
	// needs few draws while most comparisons are fresh.
	if len(asked)*2 <= total {
		for range 64 {
			k := randomKey(n)
			if _, dup := asked[k]; !dup {
				return displayOrder(k), nil
			}
		}
	}
	if total <= enumerateBelow+len(asked) {
		// Few left: pick uniformly among the ones not asked.
		r := rand.IntN(total - len(asked))
		for a := range n {
			for j := range n {
				for l := j + 1; l < n; l++ {
					if a == j || a == l {
						continue
					}
					key := triplet.Key{Anchor: a, J: j, K: l}
					if _, dup := asked[key]; dup {
						continue
					}
					if r == 0 {
						return displayOrder(key), nil
					}
					r--
				}
			}
		}
	}
	// Huge space, mostly asked: keep sampling (a participant holds at most
	// questions_per_participant comparisons, so this ends).
	for {
		k := randomKey(n)
		if _, dup := asked[k]; !dup {
			return displayOrder(k), nil
		}
	}
}

// displayOrder shows the pair of k with left and right in random order.
func displayOrder(k triplet.Key) study.Comparison {
	c := study.Comparison{Anchor: k.Anchor, Left: k.J, Right: k.K}
	if rand.IntN(2) == 1 {
		c.Left, c.Right = c.Right, c.Left
	}
	return c
}

// randomKey draws a uniformly random anchor and unordered pair of distinct items.
func randomKey(n int) triplet.Key {
	a := rand.IntN(n)
	j := rand.IntN(n - 1)
	if j >= a {
		j++
	}
	k := rand.IntN(n - 2)
	lo, hi := min(a, j), max(a, j)
	if k >= lo {
		k++
	}
	if k >= hi {
		k++
	}
	if j > k {
		j, k = k, j
	}
	return triplet.Key{Anchor: a, J: j, K: k}
}

// askedKeysSQL reads the comparisons issued to a participant (migration
// 000006 indexes questions.participant_id for it).
const askedKeysSQL = `
	SELECT anchor, least(left_idx, right_idx), greatest(left_idx, right_idx)
	FROM questions WHERE participant_id = $1`

// askedKeys returns the comparisons already issued to a participant.
func askedKeys(ctx context.Context, tx pgx.Tx, participantID int64) (map[triplet.Key]struct{}, error) {
	rows, err := tx.Query(ctx, askedKeysSQL, participantID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[triplet.Key]struct{}{}
	for rows.Next() {
		var k triplet.Key
		if err := rows.Scan(&k.Anchor, &k.J, &k.K); err != nil {
			return nil, err
		}
		m[k] = struct{}{}
	}
	return m, rows.Err()
}
