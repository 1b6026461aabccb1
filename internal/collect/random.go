package collect

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/triplet"
)

// DesignRandom names the random design.
const DesignRandom = "random"

// RandomScheduler is the random design: every question is a uniformly random
// triple of distinct items (anchor, then an unordered pair), never a
// comparison the participant was already asked, shown with left and right
// in random order. It keeps no state.
type RandomScheduler struct{}

// enumerateBelow is the number of remaining comparisons under which Next
// lists them all instead of sampling with rejection.
const enumerateBelow = 200_000

// Next implements Scheduler.
func (RandomScheduler) Next(ctx context.Context, tx pgx.Tx, ask Ask) (Comparison, error) {
	n := ask.Items
	if n < 3 {
		return Comparison{}, ErrExhausted
	}
	asked, err := askedKeys(ctx, tx, ask.ParticipantID)
	if err != nil {
		return Comparison{}, fmt.Errorf("random design: %w", err)
	}
	total := n * (n - 1) * (n - 2) / 2
	if total-len(asked) <= 0 {
		return Comparison{}, ErrExhausted
	}
	var k triplet.Key
	found := false
	// Rejection sampling is uniform over the comparisons not yet asked; it
	// needs few draws while most comparisons are fresh.
	if len(asked)*2 <= total {
		for range 64 {
			k = randomKey(n)
			if _, dup := asked[k]; !dup {
				found = true
				break
			}
		}
	}
	if !found && total <= enumerateBelow+len(asked) {
		// Few left: pick uniformly among the ones not asked.
		left := total - len(asked)
		r := rand.IntN(left)
		for a := 0; a < n && !found; a++ {
			for j := 0; j < n && !found; j++ {
				for l := j + 1; l < n && !found; l++ {
					if a == j || a == l {
						continue
					}
					key := triplet.Key{Anchor: a, J: j, K: l}
					if _, dup := asked[key]; dup {
						continue
					}
					if r == 0 {
						k, found = key, true
					}
					r--
				}
			}
		}
	}
	for !found {
		// Huge space, mostly asked: keep sampling (a participant holds at
		// most questions_per_participant comparisons, so this ends).
		k = randomKey(n)
		_, dup := asked[k]
		found = !dup
	}
	c := Comparison{Anchor: k.Anchor, Left: k.J, Right: k.K}
	if rand.IntN(2) == 1 {
		c.Left, c.Right = c.Right, c.Left
	}
	return c, nil
}

// Record implements Scheduler; the random design has no state.
func (RandomScheduler) Record(context.Context, pgx.Tx, Study, triplet.Triplet) error { return nil }

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
