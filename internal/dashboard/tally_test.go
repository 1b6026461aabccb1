package dashboard_test

import (
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/dashboard"
	"github.com/closer-lab/closer/internal/study"
)

// hourAt is 2026-11-01 12:00:00 plus d.
func hourAt(d time.Duration) *time.Time {
	x := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC).Add(d)
	return &x
}

// byHand are counts whose figures are worked out by hand below.
func byHand() study.DashboardCounts {
	noon := hourAt(0).Unix()
	return study.DashboardCounts{
		Seq: 10, Answers: 7, First: hourAt(400 * time.Millisecond), Last: hourAt(9900 * time.Millisecond),
		Seconds:      map[int64]int{noon: 2, noon + 2: 1, noon + 3: 1, noon + 9: 3},
		ResponseBins: map[int64]int{50: 3, 80: 1, 120: 1, 400: 2},
		People:       map[int64]int{7: 3, 5: 3, 9: 1},
		Comparisons:  6, Contradictions: 2,
		Contradicted: []study.VoteCount{{Anchor: 0, J: 1, K: 2, JCloser: 1, KCloser: 1}, {Anchor: 4, J: 1, K: 3, JCloser: 2, KCloser: 1}},
		Participants: 4, Completed: 1,
	}
}

func TestFiguresByHand(t *testing.T) {
	t.Parallel()
	tally := dashboard.NewTally(byHand(), 5)
	st, f := tally.Figures(4, 5)
	if st.Answers != 7 || st.Participants != 4 || st.Completed != 1 || st.Comparisons != 6 || st.Contradictions != 2 ||
		st.RateWindow != 10*time.Minute || st.LastAnswer == nil || !st.LastAnswer.Equal(*hourAt(9900 * time.Millisecond)) {
		t.Fatalf("stats %+v", st)
	}
	// Span 9.5 s in 4 buckets of 2.375 s from 12:00:00: seconds 0 and 2 in
	// bucket 0 (2 + 1), second 3 in bucket 1 (3/2.375 = 1.26), second 9 in
	// bucket 3 (3.79).
	if want := []int{3, 1, 0, 3}; !slices.Equal(f.AnswersOverTime, want) {
		t.Errorf("answers over time %v, want %v", f.AnswersOverTime, want)
	}
	// Response times at the bins' middles: 505 ms ×3, 805 ×1, 1205 ×1,
	// 4005 ×2 (7 answers). Median: the first with at least 3.5 answers at
	// or below it, 805 (3, then 4). 95th percentile: at least 6.65, 4005.
	// Bin width: NiceStep(4005 / 4 = 1001.25) = 2000 ms; 500, 800 and 1200
	// ms start in bin 0, 4000 in bin 2.
	if f.MedianResponseMS != 805 {
		t.Errorf("median %v ms, want 805", f.MedianResponseMS)
	}
	if f.ResponseBinMS != 2000 {
		t.Errorf("response bins of %v ms, want 2000", f.ResponseBinMS)
	}
	if want := []int{5, 0, 2, 0, 0}; !slices.Equal(f.ResponseHist, want) {
		t.Errorf("response histogram %v, want %v", f.ResponseHist, want)
	}
	// Most votes on the weaker side first (1 and 1), then most votes: (2, 1)
	// before (1, 1).
	want := []study.VoteCount{{Anchor: 4, J: 1, K: 3, JCloser: 2, KCloser: 1}, {Anchor: 0, J: 1, K: 2, JCloser: 1, KCloser: 1}}
	if !slices.Equal(f.Contradicted, want) {
		t.Errorf("contradicted %v, want %v", f.Contradicted, want)
	}
	// The figures are the caller's: changing them leaves the tally alone.
	f.Contradicted[0].JCloser = 99
	*f.First = f.First.Add(time.Hour)
	*f.Last = time.Time{}
	if _, again := tally.Figures(4, 5); again.Contradicted[0].JCloser != 2 ||
		!again.First.Equal(*hourAt(400 * time.Millisecond)) || !again.Last.Equal(*hourAt(9900 * time.Millisecond)) {
		t.Error("changing the figures changed the tally")
	}

	// One fast answer: the histogram's bins are the fine bins' width at
	// least (NiceStep(15 / 4) = 5 ms would split them).
	one := study.DashboardCounts{Answers: 1, First: hourAt(0), Last: hourAt(0), Seconds: map[int64]int{hourAt(0).Unix(): 1},
		ResponseBins: map[int64]int{1: 1}, People: map[int64]int{1: 1}}
	_, f = dashboard.NewTally(one, 5).Figures(4, 5)
	if f.MedianResponseMS != 15 || f.ResponseBinMS != 10 || !slices.Equal(f.ResponseHist, []int{0, 1, 0, 0, 0}) {
		t.Errorf("one answer of 15 ms: median %v, bins of %v ms %v", f.MedianResponseMS, f.ResponseBinMS, f.ResponseHist)
	}
	// A span under a second is a second: all in the first bucket.
	if !slices.Equal(f.AnswersOverTime, []int{1, 0, 0, 0}) {
		t.Errorf("one answer over time: %v", f.AnswersOverTime)
	}

	// Nothing: no span, no median, no histogram.
	st, f = dashboard.NewTally(study.DashboardCounts{}, 5).Figures(4, 5)
	if st.LastAnswer != nil || f.First != nil || f.AnswersOverTime != nil || !math.IsNaN(f.MedianResponseMS) || f.ResponseHist != nil || len(f.Contradicted) != 0 {
		t.Errorf("empty tally: %+v %+v", st, f)
	}
}

// TestAdvanceByHand adds three answers to byHand's tally, with the votes
// the store would read, and checks every count by hand.
func TestAdvanceByHand(t *testing.T) {
	t.Parallel()
	bin := func(b int64) *int64 { return &b }
	d := study.DashboardDelta{
		Counted: 7, Participants: 5, Completed: 2,
		Answers: []study.DashboardAnswer{
			// (0; 1, 2) answered "2 closer": was (1, 1), now (1, 2).
			{Seq: 11, Participant: 8, Anchor: 0, Closer: 2, Farther: 1, ResponseBin: bin(30), At: *hourAt(20 * time.Second)},
			// (3; 4, 5) answered both ways: new, and contradicted.
			{Seq: 13, Participant: 7, Anchor: 3, Closer: 4, Farther: 5, At: *hourAt(-time.Second)},
			{Seq: 12, Participant: 8, Anchor: 3, Closer: 5, Farther: 4, ResponseBin: bin(400), At: *hourAt(5 * time.Second)},
		},
		Votes: []study.VoteCount{{Anchor: 0, J: 1, K: 2, JCloser: 1, KCloser: 2}, {Anchor: 3, J: 4, K: 5, JCloser: 1, KCloser: 1}},
	}
	tally := dashboard.NewTally(byHand(), 2)

	// A delta that does not start from the counted answers is refused,
	// and leaves the tally as it was.
	beforeS, beforeF := tally.Figures(4, 5)
	stale := d
	stale.Counted = 6
	if tally.Advance(stale) {
		t.Fatal("advance from 6 answers onto a tally of 7: accepted")
	}
	if s, f := tally.Figures(4, 5); tally.Seq != 10 || !reflect.DeepEqual(s, beforeS) || !reflect.DeepEqual(f.ResponseHist, beforeF.ResponseHist) {
		t.Fatalf("a refused advance changed the tally: %+v", tally)
	}

	if !tally.Advance(d) {
		t.Fatal("advance refused")
	}
	// 7 + 3 answers up to seq 13; comparisons 6 + 1 (3; 4, 5), contradicted
	// 2 + 1; participants as re-read.
	if tally.Seq != 13 || tally.Answers != 10 || tally.Comparisons != 7 || tally.Contradictions != 3 ||
		tally.Participants != 5 || tally.Completed != 2 {
		t.Fatalf("after the advance: %+v", tally)
	}
	// The span grows both ways: 11:59:59 to 12:00:20.
	if !tally.First.Equal(*hourAt(-time.Second)) || !tally.Last.Equal(*hourAt(20 * time.Second)) {
		t.Fatalf("span %v to %v", tally.First, tally.Last)
	}
	st, f := tally.Figures(3, 5)
	// 21 s in 3 buckets of 7 s from 11:59:59: the new answer at -1 s and
	// the old ones at 0 and 2 s (1 + 2 + 1) in bucket 0, those at 3 and 5 s
	// (1 + 1) in bucket 0 too (4 / 7 = 0.57, 6 / 7 = 0.86), 9 s (3) in
	// bucket 1 (10 / 7 = 1.43), 20 s (1) in bucket 2 (21 / 7 = 3 → last).
	if want := []int{6, 3, 1}; !slices.Equal(f.AnswersOverTime, want) || st.Answers != 10 {
		t.Errorf("answers over time %v, want %v", f.AnswersOverTime, want)
	}
	// Response bins now 30 ×1, 50 ×3, 80, 120 ×1, 400 ×3 (9 with a time):
	// median the first with 4.5 at or below it: 305 (1), 505 (4), 805 (5).
	if f.MedianResponseMS != 805 {
		t.Errorf("median %v ms, want 805", f.MedianResponseMS)
	}
	// Top 2: (0; 1, 2) at (1, 2) and (4; 1, 3) at (2, 1) tie on the
	// weaker side and the votes: by key; (3; 4, 5) at (1, 1) is third.
	want := []study.VoteCount{{Anchor: 0, J: 1, K: 2, JCloser: 1, KCloser: 2}, {Anchor: 4, J: 1, K: 3, JCloser: 2, KCloser: 1}}
	if !slices.Equal(f.Contradicted, want) {
		t.Errorf("contradicted %v, want %v", f.Contradicted, want)
	}
	// Answers per participant: 7 had 3 and answered once more, 8 is new
	// with 2, 5 and 9 keep 3 and 1.
	if got, wantP := tally.ParticipantsByAnswers(nil), []dashboard.ParticipantCount{{7, 4}, {5, 3}, {8, 2}, {9, 1}}; !slices.Equal(got, wantP) {
		t.Errorf("participants %v, want %v", got, wantP)
	}
}

func TestParticipantsByAnswers(t *testing.T) {
	t.Parallel()
	// Most answers first, ties by id; participants without answers left out.
	tally := dashboard.NewTally(study.DashboardCounts{People: map[int64]int{4: 2, 2: 5, 9: 2, 3: 2, 6: 1, 8: 0}}, 0)
	if got, want := tally.ParticipantsByAnswers(nil), []dashboard.ParticipantCount{{2, 5}, {3, 2}, {4, 2}, {9, 2}, {6, 1}}; !slices.Equal(got, want) {
		t.Errorf("ParticipantsByAnswers(nil) = %v, want %v", got, want)
	}
	if got := dashboard.NewTally(study.DashboardCounts{}, 0).ParticipantsByAnswers(nil); len(got) != 0 {
		t.Errorf("no answers: %v", got)
	}
	// Trials add to the answers: 8 and 11 answered only trials.
	trials := map[int64]int{6: 3, 8: 1, 11: 4, 12: 0}
	if got, want := tally.ParticipantsByAnswers(trials), []dashboard.ParticipantCount{{2, 5}, {6, 4}, {11, 4}, {3, 2}, {4, 2}, {9, 2}, {8, 1}}; !slices.Equal(got, want) {
		t.Errorf("ParticipantsByAnswers(%v) = %v, want %v", trials, got, want)
	}
}

func TestInPageOrder(t *testing.T) {
	t.Parallel()
	// The rows in the page's order with their own counts (not the page's
	// triplet counts); ids without a row (4) and rows not on the page (77)
	// left out.
	rows := []study.DashboardParticipant{{ID: 9, PublicID: "nine", Answers: 4}, {ID: 3, PublicID: "three", Answers: 3}, {ID: 77, PublicID: "other"}}
	got := dashboard.InPageOrder([]dashboard.ParticipantCount{{3, 2}, {4, 2}, {9, 2}}, rows)
	want := []study.DashboardParticipant{{ID: 3, PublicID: "three", Answers: 3}, {ID: 9, PublicID: "nine", Answers: 4}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("InPageOrder: %+v, want %+v", got, want)
	}
}
