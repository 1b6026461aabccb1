package study

import (
	"encoding/binary"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// The designs recorded on the questions that check a participant rather
// than ask the study's design: they never reach votes, a design, recompute
// or triplets.csv (their answers go to trial_answers).
const (
	// DesignCatch: one option is the anchor itself; the right answer is
	// that option.
	DesignCatch = "catch"
	// DesignRepeat: a comparison the participant answered before, asked
	// again with left and right swapped.
	DesignRepeat = "repeat"
)

// The kinds of export rows (triplets.csv's kind column).
const (
	KindDesign   = "design"
	KindFallback = "fallback"
	KindCatch    = "catch"
	KindRepeat   = "repeat"
	KindHeldout  = "heldout"
)

// kindOf is the export kind of a question recorded as design.
func ExportKind(design string) string {
	switch design {
	case DesignFallback:
		return KindFallback
	case DesignCatch:
		return KindCatch
	case DesignRepeat:
		return KindRepeat
	case DesignHeldout:
		return KindHeldout
	}
	return KindDesign
}

// MaxTrialPercent bounds the share of a participant's questions that are
// catch or repeat trials, each.
const MaxTrialPercent = 50

// QualityControl are a study's quality-control settings (studies.quality).
// A trial is placed at a question number (1 is a participant's first
// question) either at the numbers listed (CatchAt, RepeatAt) or, when none
// are listed, as exactly that percentage of the questions per participant
// (rounded) at numbers drawn from the participant's id: the same
// participant always gets the
// same trial at the same number. A catch trial wins where both fall on one
// number; a repeat trial where the participant has answered nothing to
// repeat yet becomes an ordinary question. Trials and "can't decide"
// answers count toward the participant's questions.
type QualityControl struct {
	CatchPercent  int   `json:"catch_percent,omitempty"`
	CatchAt       []int `json:"catch_at,omitempty"`
	RepeatPercent int   `json:"repeat_percent,omitempty"`
	RepeatAt      []int `json:"repeat_at,omitempty"`
	// CantDecide offers a third button, "can't decide": the question is
	// recorded as skipped, never as a triplet.
	CantDecide bool `json:"cant_decide,omitempty"`
}

// Active reports whether any setting is on.
func (q QualityControl) Active() bool {
	return q.CatchPercent > 0 || len(q.CatchAt) > 0 || q.RepeatPercent > 0 || len(q.RepeatAt) > 0 || q.CantDecide
}

// maxTrialPositions bounds the question numbers a study may list.
const maxTrialPositions = 1000

// checkQuality normalises q (sorted, unique positions) and returns a
// user-facing error naming the first rule it breaks.
func CheckQuality(q *QualityControl, perParticipant int) error {
	for _, t := range []struct {
		name    string
		percent int
		at      *[]int
	}{{"catch", q.CatchPercent, &q.CatchAt}, {"repeat", q.RepeatPercent, &q.RepeatAt}} {
		if t.percent < 0 || t.percent > MaxTrialPercent {
			return Errorf(KindInvalid, "the share of %s trials must be between 0%% (off) and %d%%", t.name, MaxTrialPercent)
		}
		if len(*t.at) > maxTrialPositions {
			return Errorf(KindInvalid, "at most %d question numbers for %s trials", maxTrialPositions, t.name)
		}
		if t.percent > 0 && len(*t.at) > 0 {
			return Errorf(KindInvalid, "give %s trials either a share or question numbers, not both", t.name)
		}
		slices.Sort(*t.at)
		*t.at = slices.Compact(*t.at)
		for _, p := range *t.at {
			if p < 1 || p > perParticipant {
				return Errorf(KindInvalid, "%s trial at question %d: the numbers must be between 1 and the questions per participant (%d)",
					t.name, p, perParticipant)
			}
		}
		if 2*len(*t.at) > perParticipant {
			return Errorf(KindInvalid, "at most half of a participant's questions (%d of %d) may be %s trials",
				perParticipant/2, perParticipant, t.name)
		}
	}
	return nil
}

// ParsePositions reads question numbers written as "5, 12, 30" (commas or
// spaces); "" is none.
func ParsePositions(s string) ([]int, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == ';' || r == '\t' })
	if len(fields) > maxTrialPositions {
		return nil, Errorf(KindInvalid, "at most %d question numbers", maxTrialPositions)
	}
	out := make([]int, 0, len(fields))
	for _, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, Errorf(KindInvalid, "%q is not a question number (1, 2, ...)", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// FormatPositions writes question numbers as ParsePositions reads them.
func FormatPositions(ps []int) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ", ")
}

// trialSeed is a number drawn from the participant, their question number
// and salt: the same inputs always give the same number, so a participant's
// trials are where they were on every replica and after a reload.
func trialSeed(participantID int64, position int, salt string) uint64 {
	h := fnv.New64a()
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(participantID))
	binary.LittleEndian.PutUint64(b[8:], uint64(position))
	h.Write(b[:])
	h.Write([]byte(salt))
	return h.Sum64()
}

// TrialAt returns the trial the participant gets as their question number
// position (1-based) of total: DesignCatch, DesignRepeat or "" (an
// ordinary question). A share places exactly round(percent · total / 100)
// trials of its kind (5 % of 60 questions: 3, for every participant), at
// numbers drawn for the participant (sharePositions); listed numbers are
// used as they are.
func (q QualityControl) TrialAt(participantID int64, position, total int) string {
	catch := sharePositions(q.CatchPercent, q.CatchAt, participantID, total, "catch", nil)
	if slices.Contains(catch, position) {
		return DesignCatch
	}
	if slices.Contains(sharePositions(q.RepeatPercent, q.RepeatAt, participantID, total, "repeat", catch), position) {
		return DesignRepeat
	}
	return ""
}

// sharePositions returns the question numbers of a kind of trial: list
// when it is set, else round(percent · total / 100) numbers of 1..total
// drawn without replacement, seeded by the participant and salt (so the
// same on every replica and after a reload), leaving out the numbers in
// taken (a catch trial's) and, for repeats, number 1 (nothing to repeat
// yet), so that the count is exact.
func sharePositions(percent int, list []int, participantID int64, total int, salt string, taken []int) []int {
	if len(list) > 0 {
		return list
	}
	if percent <= 0 || total <= 0 {
		return nil
	}
	skip := make([]bool, total+2) // by question number: taken, or 1 for a repeat
	for _, pos := range taken {
		if pos >= 1 && pos <= total {
			skip[pos] = true
		}
	}
	skip[1] = skip[1] || salt == "repeat"
	free := make([]int, 0, total)
	for pos := 1; pos <= total; pos++ {
		if !skip[pos] {
			free = append(free, pos)
		}
	}
	k := min((percent*total+50)/100, len(free))
	rng := rand.New(rand.NewPCG(trialSeed(participantID, 0, salt), 0))
	for i := range k { // a partial Fisher–Yates shuffle
		j := i + rng.IntN(len(free)-i)
		free[i], free[j] = free[j], free[i]
	}
	return free[:k]
}

// catchItems are the items of the participant's anchor-identical catch
// trial at position among n >= 2 items: anchor a shown with options a and
// another item x, a on the right when swap (drawn like the rest).
func CatchItems(participantID int64, position, n int) (a, x int, swap bool) {
	h := trialSeed(participantID, position, "catch-items")
	a = int(h % uint64(n))
	x = (a + 1 + int((h>>20)%uint64(n-1))) % n
	return a, x, h>>63 == 1
}
