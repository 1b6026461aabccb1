package collect

import (
	"context"
	"math/rand/v2"
	"slices"

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

// dress makes random comparison c a question of the study's format: a
// triplet as it is; an odd-one-out trial shows its three items in a
// random order; a rank trial asks of c.Anchor, the query, with c.Left,
// c.Right and N-2 other items drawn uniformly as the references, in a
// random order. The comparison stays the trial's key (n must exceed N).
func (st studyState) dress(c study.Comparison, n int) study.Comparison {
	switch st.Format.Format {
	case study.FormatOddOneOut:
		c.Options = []int{c.Anchor, c.Left, c.Right}
	case study.FormatRank:
		// (A catch trial's Left is its query: the references include it.)
		c.Options = make([]int, 2, st.Format.Rank.N)
		c.Options[0], c.Options[1] = c.Left, c.Right
		for len(c.Options) < st.Format.Rank.N {
			o := rand.IntN(n)
			if o != c.Anchor && !slices.Contains(c.Options, o) {
				c.Options = append(c.Options, o)
			}
		}
	default:
		return c
	}
	c.Format, c.Choose = st.Format.Format, st.Format.Choices()
	rand.Shuffle(len(c.Options), func(i, j int) { c.Options[i], c.Options[j] = c.Options[j], c.Options[i] })
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
