package trial

import (
	"fmt"
	"strconv"
	"strings"
)

// Format is the shape of a question: what it shows, by role, and what an
// answer chooses (study.Format is this type: the study's vocabulary, kept
// here so that the trial files, the fits and the study share it without
// the study's packages in between).
type Format string

// FormatTriplet is closer's first format: an anchor and two options shown
// left and right; the participant chooses the option closer to the
// anchor.
const FormatTriplet Format = "triplet"

// FormatOddOneOut shows three items side by side, with no anchor; the
// participant chooses the one least like the other two (issue 27).
const FormatOddOneOut Format = "odd-one-out"

// FormatRank shows a query and N references; the participant chooses K of
// them in order of similarity to the query, the most similar first (issue
// 27; psiz's "rank" trials). Its parameters are a RankSpec.
const FormatRank Format = "rank"

// The bounds of a rank trial's size: 2 ≤ K < N ≤ MaxRankOptions.
const (
	MinRankChoices = 2
	MaxRankOptions = 9
)

// RankSpec is the size of a rank trial: N references shown, K chosen in
// order. Its text form is "rank:N:K" (rank:8:2 is psiz's 8-choose-2).
type RankSpec struct {
	N, K int
}

// Validate reports whether 2 ≤ K < N ≤ 9.
func (s RankSpec) Validate() error {
	switch {
	case s.K < MinRankChoices:
		return fmt.Errorf("rank %d-choose-%d: at least %d choices", s.N, s.K, MinRankChoices)
	case s.K >= s.N:
		return fmt.Errorf("rank %d-choose-%d: the choices must be fewer than the references", s.N, s.K)
	case s.N > MaxRankOptions:
		return fmt.Errorf("rank %d-choose-%d: at most %d references", s.N, s.K, MaxRankOptions)
	}
	return nil
}

// String is the spec's text form, "rank:N:K".
func (s RankSpec) String() string { return fmt.Sprintf("%s:%d:%d", FormatRank, s.N, s.K) }

// ParseRankSpec parses "rank:N:K" (for example "rank:8:2") and validates it.
func ParseRankSpec(text string) (RankSpec, error) {
	parts := strings.Split(strings.TrimSpace(text), ":")
	if len(parts) != 3 || Format(parts[0]) != FormatRank {
		return RankSpec{}, fmt.Errorf("rank format %q: want rank:N:K, e.g. rank:8:2", text)
	}
	n, errN := strconv.Atoi(parts[1])
	k, errK := strconv.Atoi(parts[2])
	if errN != nil || errK != nil {
		return RankSpec{}, fmt.Errorf("rank format %q: N and K must be integers", text)
	}
	s := RankSpec{N: n, K: k}
	if err := s.Validate(); err != nil {
		return RankSpec{}, err
	}
	return s, nil
}
