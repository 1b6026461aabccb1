package design

import (
	"errors"
	"fmt"
	"math"

	"github.com/closer-lab/closer/internal/triplet"
)

// Arms: a study may run several designs at once. Each participant is
// assigned to one arm when they start, by the arms' shares (NextArm), and
// a share of every participant's questions are held out (HeldOut): random
// comparisons that no arm's design or fit sees, the study's common test
// set. Both rules are pure functions of small state (the counts of
// participants per arm; a participant's number and the position of the
// question), so a store can apply them without keeping more, and the
// simulator applies the same rules.

// ShareTolerance is how far the shares of a study's arms may sum from 1.
const ShareTolerance = 1e-9

// CheckShares reports whether shares are usable arm proportions: at least
// one, each positive and finite, summing to 1 within ShareTolerance.
func CheckShares(shares []float64) error {
	if len(shares) == 0 {
		return errors.New("design: no arms")
	}
	sum := 0.0
	for i, s := range shares {
		if !(s > 0) || math.IsInf(s, 0) {
			return fmt.Errorf("design: arm %d has share %g, want a positive number", i, s)
		}
		sum += s
	}
	if math.Abs(sum-1) > ShareTolerance {
		return fmt.Errorf("design: the arms' shares sum to %.10g, want 1", sum)
	}
	return nil
}

// NextArm returns the arm of the next participant, given the shares of
// the arms (CheckShares) and counts[i], the participants assigned to arm i
// so far. It is deterministic and balanced: after any number t of
// participants, every arm's count is within one participant of share·t
// (exactly: |count_i − share_i·t| ≤ 1 − 1/(2A − 2) for A ≥ 2 arms).
//
// The rule is Tijdeman's solution of the chairman assignment problem
// (R. Tijdeman, "The chairman assignment problem", Discrete Mathematics 32
// (1980) 323–330), a refinement of deficit round robin: with t the number
// of the participant to assign (1 for the first) and δ = 1/(2A − 2), the
// arms eligible are those at least δ below their share (share_i·t − count_i
// ≥ δ); among them the participant goes to the arm whose next participant
// is due soonest, the least (count_i + 1 − δ)/share_i; ties go to the
// earlier arm. (The paper is not in /work/shared/papers: the rule is
// written from memory, and its bound is checked by the tests on 3,000
// random share vectors.) Plain deficit round robin (the arm furthest below share·t)
// stays within one participant for two or three arms, but not always for
// four or more with uneven shares (an arm runs 1.11 participants ahead of
// its share within 2,000 participants with shares 0.0027, 0.4893, 0.0023,
// 0.0849, 0.0026, 0.0025, 0.4157).
func NextArm(shares []float64, counts []int) int {
	a := len(shares)
	if a == 1 {
		return 0
	}
	if len(counts) != a {
		panic("design: NextArm with counts for a different number of arms")
	}
	t := 1.0
	for _, c := range counts {
		t += float64(c)
	}
	const eps = 1e-9 // rounding of the shares
	delta := 1 / float64(2*a-2)
	best, bestDue := -1, math.Inf(1)
	for i, s := range shares {
		if s*t-float64(counts[i]) < delta-eps {
			continue
		}
		if due := (float64(counts[i]) + 1 - delta) / s; due < bestDue-eps {
			best, bestDue = i, due
		}
	}
	if best < 0 {
		// The deficits sum to 1, so some arm is at least 1/A ≥ δ below its
		// share; only shares that do not sum to 1 end here.
		for i, s := range shares {
			if best < 0 || s*t-float64(counts[i]) > shares[best]*t-float64(counts[best]) {
				best = i
			}
		}
	}
	return best
}

// HeldOut reports whether the question at position pos (0 for a
// participant's first) of participant p is held out, for a held-out share
// h in [0, 1] and the study's seed. The positions are spread evenly with a
// per-participant offset u in [0, 1) (a hash of seed and p): position pos
// is held out when ⌊(pos+1)·h + u⌋ > ⌊pos·h + u⌋. So every prefix of a
// participant's questions holds ⌊h·len⌋ or ⌈h·len⌉ held-out ones (with
// h = 0.1, one in every ten, at a position that differs between
// participants), whatever the number of questions per participant.
func HeldOut(h float64, seed, p uint64, pos int) bool {
	if !(h > 0) {
		return false
	}
	if h >= 1 {
		return true
	}
	u := float64(splitmix(seed^splitmix(p+0x68656c64))>>11) / (1 << 53) // "held"
	return math.Floor(float64(pos+1)*h+u) > math.Floor(float64(pos)*h+u)
}

// splitmix is one step of splitmix64: the finaliser of z + Golden.
func splitmix(z uint64) uint64 { return triplet.Mix64(z + triplet.Golden) }
