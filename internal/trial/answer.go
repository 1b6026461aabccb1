package trial

import "fmt"

// The reasons an answer is refused (AnswerError.Kind).
const (
	NotShown = "not-shown" // a choice that is not one of the options
	Repeated = "repeated"  // the same option chosen twice
	TooMany  = "too-many"  // more choices than the format takes
	TooFew   = "too-few"   // fewer choices than the format takes
)

// AnswerError is a refused answer: which check failed (Kind, one of the
// constants above) and why, in words a participant's client can show.
type AnswerError struct {
	Kind   string
	Reason string
}

func (e *AnswerError) Error() string { return e.Reason }

// CheckOddOneOut checks an odd-one-out answer: exactly one choice, one of
// the three items shown. It returns the trial on success.
func CheckOddOneOut(items [3]int, choices []int) (OddOneOut, error) {
	switch {
	case len(choices) == 0:
		return OddOneOut{}, &AnswerError{TooFew, "no choice: an odd-one-out answer chooses one item"}
	case len(choices) > 1:
		return OddOneOut{}, &AnswerError{TooMany, fmt.Sprintf("%d choices: an odd-one-out answer chooses one item", len(choices))}
	}
	c := choices[0]
	if c != items[0] && c != items[1] && c != items[2] {
		return OddOneOut{}, &AnswerError{NotShown, fmt.Sprintf("choice %d is not one of the items shown", c)}
	}
	return OddOneOut{Items: items, Odd: c}, nil
}

// CheckRank checks a rank answer: exactly k choices, each one of the
// options, none twice. The order of choices is the answer's ranking.
func CheckRank(options []int, k int, choices []int) error {
	switch {
	case len(choices) < k:
		return &AnswerError{TooFew, fmt.Sprintf("%d choice(s), want %d in order", len(choices), k)}
	case len(choices) > k:
		return &AnswerError{TooMany, fmt.Sprintf("%d choices, want %d in order", len(choices), k)}
	}
	for r, c := range choices {
		shown := false
		for _, o := range options {
			if o == c {
				shown = true
				break
			}
		}
		if !shown {
			return &AnswerError{NotShown, fmt.Sprintf("choice %d (item %d) is not one of the references shown", r+1, c)}
		}
		for _, p := range choices[:r] {
			if p == c {
				return &AnswerError{Repeated, fmt.Sprintf("item %d chosen twice", c)}
			}
		}
	}
	return nil
}

// RankAnswer is CheckRank returning the trial of query, options and
// choices (the slices are kept, not copied).
func RankAnswer(query int, options []int, k int, choices []int) (Rank, error) {
	if err := CheckRank(options, k, choices); err != nil {
		return Rank{}, err
	}
	return Rank{Query: query, Options: options, Choices: choices}, nil
}

// CatchOddOneOut judges the answer to an odd-one-out catch trial: two of
// the items shown are the same and the third differs, so the right answer
// is the item shown once. It returns whether choice is that item; the
// items must be a catch trial (exactly two equal) and the choice one of
// them, else an *AnswerError (a catch trial gives no triplet).
func CatchOddOneOut(items [3]int, choice int) (bool, error) {
	a, b, c := items[0], items[1], items[2]
	var single int
	switch {
	case a == b && b != c:
		single = c
	case a == c && b != c:
		single = b
	case b == c && a != b:
		single = a
	default:
		return false, &AnswerError{NotShown, fmt.Sprintf("(%d, %d, %d) is not an odd-one-out catch trial (two of the same item and one other)", a, b, c)}
	}
	if choice != a && choice != b && choice != c {
		return false, &AnswerError{NotShown, fmt.Sprintf("choice %d is not one of the items shown", choice)}
	}
	return choice == single, nil
}

// CatchRank judges the answer to a rank catch trial, whose references
// include the query itself: it passes when the query is chosen first. The
// answer must pass CheckRank.
func CatchRank(query int, options []int, k int, choices []int) (bool, error) {
	if err := CheckRank(options, k, choices); err != nil {
		return false, err
	}
	shown := false
	for _, o := range options {
		shown = shown || o == query
	}
	if !shown {
		return false, &AnswerError{NotShown, fmt.Sprintf("the query %d is not among the references: not a rank catch trial", query)}
	}
	return choices[0] == query, nil
}
