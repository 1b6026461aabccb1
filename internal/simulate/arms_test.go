package simulate

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/active"
	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/landmark"
	"github.com/closer-lab/closer/internal/triplet"
)

// anchored is a design double that asks only questions about anchor 0
// (a fresh random pair each time), refuses answers to anything else, and
// remembers every answer Record was given and every set of answers its
// worker fitted. It is a Refresher, warmed up from the start.
type anchored struct {
	n        int
	seen     []triplet.Triplet
	fitted   [][]triplet.Triplet
	refreshs int
}

func (a *anchored) Open(dst []design.Need, limit int) []design.Need {
	for i := range max(limit, 1) {
		j := 1 + (len(a.seen)*7+i*3)%(a.n-1)
		k := 1 + (len(a.seen)*5+i*11+1)%(a.n-1)
		if j == k {
			k = 1 + k%(a.n-1)
		}
		dst = append(dst, design.Need{Key: triplet.QuestionKey(0, j, k), Answers: 1})
	}
	return dst
}
func (a *anchored) Record(t triplet.Triplet) bool {
	a.seen = append(a.seen, t)
	return t.Anchor == 0
}
func (a *anchored) Done() bool                    { return false }
func (a *anchored) MarshalState() ([]byte, error) { return nil, nil }
func (a *anchored) WarmedUp() bool                { return true }
func (a *anchored) Refresh(x *mat.Dense, ts []triplet.Triplet) error {
	a.refreshs++
	return nil
}

func recordingWorker(a *anchored, every int) *Worker {
	return &Worker{Every: every, Fit: func(ctx context.Context, ts []triplet.Triplet, prev *mat.Dense) (*mat.Dense, error) {
		a.fitted = append(a.fitted, slices.Clone(ts))
		return mat.NewDense(a.n, 2, nil), nil
	}}
}

// TestArmsAssignment runs three arms with shares 0.5/0.3/0.2, 7 questions
// per annotator and 4 annotators at once: at every checkpoint each arm's
// annotators are within one of its share of those started, every
// annotator who has finished answered exactly 7 questions, and after 700
// answers the 100 annotators split exactly 50/30/20.
func TestArmsAssignment(t *testing.T) {
	t.Parallel()
	o := points(30, 2, 1)
	shares := []float64{0.5, 0.3, 0.2}
	var arms []Arm
	for i, s := range shares {
		r, _ := landmark.NewRandom(30, uint64(i))
		arms = append(arms, Arm{Name: []string{"a", "b", "c"}[i], Share: s, Design: r})
	}
	checked := 0
	ss, err := RunArms(context.Background(), arms, Crowd{Oracle: o, Annotators: 4, Seed: 2}, Study{PerAnnotator: 7}, 700, Even(700, 70), func(cp StudyCheckpoint) error {
		checked++
		total := 0
		for i, a := range cp.Arms {
			total += a.Annotators
			if dev := math.Abs(float64(a.Annotators) - shares[i]*float64(cp.Annotators)); dev > 1 {
				t.Errorf("after %d answers, %d annotators: arm %s has %d", cp.Answers, cp.Annotators, a.Name, a.Annotators)
			}
			// An arm's answers: 7 from each annotator, fewer from those
			// still answering (at most 4 of them in all).
			if a.Answers > 7*a.Annotators || a.Answers < 7*(a.Annotators-4) {
				t.Errorf("after %d answers: arm %s has %d answers from %d annotators", cp.Answers, a.Name, a.Answers, a.Annotators)
			}
		}
		if total != cp.Annotators || len(cp.Heldout) != 0 {
			t.Errorf("after %d answers: %d annotators in arms of %d started, %d held out", cp.Answers, total, cp.Annotators, len(cp.Heldout))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked != 70 {
		t.Errorf("%d checkpoints, want 70", checked)
	}
	if ss.Annotators != 100 || ss.Answers != 700 || ss.Rounds != 175 {
		t.Errorf("stats %+v: want 100 annotators, 700 answers in 175 rounds", ss)
	}
	for i, want := range []int{50, 30, 20} {
		if a := ss.Arms[i]; a.Annotators != want || a.Answers != 7*want || a.Fallbacks != 0 {
			t.Errorf("arm %s: %+v, want %d annotators and %d answers", a.Name, a, want, 7*want)
		}
	}
}

// TestArmsHeldoutKeptOut: with a held-out share of 0.1 and 20 questions
// per annotator, exactly 2 of every annotator's 20 answers are held out;
// no held-out question reaches any arm's Record or worker. The arms ask
// only about anchor 0 and refuse anything else, while held-out questions
// are uniformly random, so a held-out answer that leaked would show as a
// refusal or as an answer about another anchor.
func TestArmsHeldoutKeptOut(t *testing.T) {
	t.Parallel()
	const n = 30
	o := triplet.NewOracle(triplet.Gaussian(triplet.NewRand(3), n, 2, 1), 0.2, 4)
	a1, a2 := &anchored{n: n}, &anchored{n: n}
	arms := []Arm{
		{Name: "one", Share: 0.5, Design: a1, Worker: recordingWorker(a1, 50)},
		{Name: "two", Share: 0.5, Design: a2, Worker: recordingWorker(a2, 50)},
	}
	var last StudyCheckpoint
	ss, err := RunArms(context.Background(), arms, Crowd{Oracle: o, Annotators: 4, Seed: 5}, Study{PerAnnotator: 20, HeldoutShare: 0.1}, 2000, []int{1000}, func(cp StudyCheckpoint) error {
		if cp.Answers == 1000 && len(cp.Heldout) < 95 {
			t.Errorf("%d held out after 1000 answers", len(cp.Heldout))
		}
		last = cp
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ss.Annotators != 100 || ss.Heldout != 200 || len(last.Heldout) != 200 {
		t.Fatalf("stats %+v, %d held-out answers: want 100 annotators and 200 held out", ss, len(last.Heldout))
	}
	otherAnchors := 0
	for _, h := range last.Heldout {
		if h.Anchor != 0 {
			otherAnchors++
		}
	}
	if otherAnchors < 150 {
		t.Fatalf("only %d of 200 held-out questions are about anchors other than 0: not uniformly random", otherAnchors)
	}
	total := 0
	for i, a := range []*anchored{a1, a2} {
		st, cp := ss.Arms[i], last.Arms[i]
		total += st.Answers
		if st.Refused != 0 || st.Fallbacks != 0 || st.Answers != 18*st.Annotators || st.Annotators != 50 {
			t.Errorf("arm %s: %+v; want 50 annotators, 18 answers each, none refused", st.Name, st)
		}
		if !slices.Equal(a.seen, cp.Triplets) {
			t.Errorf("arm %s: Record saw %d answers, the arm has %d", st.Name, len(a.seen), len(cp.Triplets))
		}
		for _, tr := range a.seen {
			if tr.Anchor != 0 {
				t.Fatalf("arm %s: Record saw %v, a held-out answer", st.Name, tr)
			}
		}
		if len(a.fitted) != st.Fits || st.Fits < 10 || a.refreshs != st.Fits {
			t.Errorf("arm %s: %d fits recorded, stats %d, refreshes %d", st.Name, len(a.fitted), st.Fits, a.refreshs)
		}
		for _, ts := range a.fitted {
			if !slices.Equal(ts, cp.Triplets[:len(ts)]) {
				t.Fatalf("arm %s: a fit of %d answers is not a prefix of the arm's answers", st.Name, len(ts))
			}
		}
	}
	if total+ss.Heldout != 2000 {
		t.Errorf("arms %d + held out %d answers, want 2000", total, ss.Heldout)
	}
}

// TestArmsDeterministic: the same seeds give the same answers, arm by
// arm, and the same held-out answers, with a noisy crowd, a landmark arm
// (with fallbacks once it is done), a random arm and held-out questions.
func TestArmsDeterministic(t *testing.T) {
	t.Parallel()
	run := func() StudyCheckpoint {
		x := triplet.UniformCube(triplet.NewRand(5), 40, 2)
		o := triplet.NewOracle(x, 0.2, 6)
		ld, _ := landmark.New(40, landmark.Config{Variant: landmark.K1, NumLandmarks: 3, Seed: 7})
		r, _ := landmark.NewRandom(40, 8)
		var last StudyCheckpoint
		arms := []Arm{{Name: "lm", Share: 0.6, Design: ld}, {Name: "random", Share: 0.4, Design: r}}
		if _, err := RunArms(context.Background(), arms, Crowd{Oracle: o, Annotators: 5, Seed: 9}, Study{PerAnnotator: 13, HeldoutShare: 0.15}, 500, nil, func(cp StudyCheckpoint) error {
			last = cp
			last.Heldout = slices.Clone(cp.Heldout)
			for i := range last.Arms {
				last.Arms[i].Triplets = slices.Clone(cp.Arms[i].Triplets)
				last.Arms[i].Fallback = slices.Clone(cp.Arms[i].Fallback)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return last
	}
	a, b := run(), run()
	if !slices.Equal(a.Heldout, b.Heldout) || len(a.Heldout) == 0 {
		t.Errorf("held-out answers differ (%d, %d)", len(a.Heldout), len(b.Heldout))
	}
	for i := range a.Arms {
		if !slices.Equal(a.Arms[i].Triplets, b.Arms[i].Triplets) || !slices.Equal(a.Arms[i].Fallback, b.Arms[i].Fallback) || a.Arms[i].Annotators != b.Arms[i].Annotators {
			t.Errorf("arm %s differs between two runs", a.Arms[i].Name)
		}
	}
	if a.Arms[0].Fallbacks == 0 {
		t.Errorf("the landmark arm (%d comparisons) had no fallbacks in %d answers", 37*3+3, a.Arms[0].Answers)
	}
}

// TestRunArmsOneArmIsRun: one arm with share 1, no limit per annotator and
// nothing held out collects exactly what Run collects.
func TestRunArmsOneArmIsRun(t *testing.T) {
	t.Parallel()
	o1 := triplet.NewOracle(triplet.UniformCube(triplet.NewRand(5), 40, 2), 0.2, 6)
	o2 := triplet.NewOracle(triplet.UniformCube(triplet.NewRand(5), 40, 2), 0.2, 6)
	d1, _ := landmark.New(40, landmark.Config{Variant: landmark.K2, NumLandmarks: 3, Seed: 7})
	d2, _ := landmark.New(40, landmark.Config{Variant: landmark.K2, NumLandmarks: 3, Seed: 7})
	var want []triplet.Triplet
	st, err := Run(context.Background(), d1, Crowd{Oracle: o1, Annotators: 5, Seed: 8}, 500, nil, func(cp Checkpoint) error {
		want = slices.Clone(cp.Triplets)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []triplet.Triplet
	ss, err := RunArms(context.Background(), []Arm{{Name: "only", Share: 1, Design: d2}}, Crowd{Oracle: o2, Annotators: 5, Seed: 8}, Study{}, 500, nil, func(cp StudyCheckpoint) error {
		got = slices.Clone(cp.Arms[0].Triplets)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) || ss.Annotators != 5 || ss.Arms[0].Stats != st {
		t.Errorf("one arm: %d answers, stats %+v, annotators %d; Run: %d answers, stats %+v", len(got), ss.Arms[0].Stats, ss.Annotators, len(want), st)
	}
}

func TestRunArmsErrors(t *testing.T) {
	t.Parallel()
	o := points(10, 2, 1)
	r1, _ := landmark.NewRandom(10, 1)
	r2, _ := landmark.NewRandom(10, 2)
	noop := func(StudyCheckpoint) error { return nil }
	for _, c := range []struct {
		arms  []Arm
		study Study
		want  string
	}{
		{[]Arm{{Name: "a", Share: 0.5, Design: r1}, {Name: "a", Share: 0.5, Design: r2}}, Study{}, `two arms named "a"`},
		{[]Arm{{Name: "a", Share: 0.5, Design: r1}, {Name: "b", Share: 0.4, Design: r2}}, Study{}, "sum to 0.9"},
		{[]Arm{{Name: "a", Share: 1.5, Design: r1}, {Name: "b", Share: -0.5, Design: r2}}, Study{}, "share -0.5"},
		{[]Arm{{Name: "", Share: 1, Design: r1}}, Study{}, "no name"},
		{[]Arm{{Name: "a", Share: 1}}, Study{}, "no design"},
		{nil, Study{}, "no arms"},
		{[]Arm{{Name: "a", Share: 1, Design: r1}}, Study{HeldoutShare: 1}, "held-out share 1"},
		{[]Arm{{Name: "a", Share: 1, Design: r1}}, Study{PerAnnotator: -1}, "-1 questions per annotator"},
	} {
		if _, err := RunArms(context.Background(), c.arms, Crowd{Oracle: o, Annotators: 2}, c.study, 10, nil, noop); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v", c.want, err)
		}
	}
}

// TestArmsActiveBeatsRandom is a small mixed run: 50 items in 3-D, no
// noise, the active design (uncertainty under t-STE, warm-up 5 per item)
// and random in equal shares, 10% held out, 20 questions per annotator, 4
// annotators at once, 3,000 answers (1,350 per arm). Judged by t-STE (one
// random start) on each arm's answers, the active arm's error on fresh
// held-out triplets must be at most 0.6 of random's, and on the crowd's
// 300 held-out answers at most 0.8 of random's. The expectation comes
// from docs/active.md's reproduction (error-free, the uncertainty score
// reaches random's final error with 37–44% of random's answers on three
// of four sets); on five seeds of this setting, when the test was
// written, active's fresh error was 0.026–0.038 against random's
// 0.086–0.118 and on the crowd's held-out answers 0.027–0.043 against
// 0.070–0.090. Not 2-D: there a random-start t-STE fit of the active
// arm's answers often stops in a poor local optimum (docs/active.md,
// "Arms in the simulator"), so the comparison is noisy.
func TestArmsActiveBeatsRandom(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a mixed run of 3,000 answers")
	}
	const n, dim, budget = 50, 3, 3000
	x := triplet.Gaussian(triplet.NewRand(21), n, dim, 1)
	o := triplet.NewOracle(x, 0, 22)
	ad, err := active.New(n, active.Config{Seed: 23, WarmupPerItem: 5, Pool: n, Score: active.ScoreConfig{Rule: active.Uncertainty, Model: active.TSTE, Candidates: 300}})
	if err != nil {
		t.Fatal(err)
	}
	w := &Worker{Every: n, Fit: func(ctx context.Context, ts []triplet.Triplet, prev *mat.Dense) (*mat.Dense, error) {
		res, err := embed.Fit(ctx, n, ts, embed.Options{Method: embed.TSTE, Dim: dim, Seed: 24, Init: prev})
		if err != nil {
			return nil, err
		}
		return res.X, nil
	}}
	r, _ := landmark.NewRandom(n, 25)
	arms := []Arm{{Name: "active", Share: 0.5, Design: ad, Worker: w}, {Name: "random", Share: 0.5, Design: r}}
	truth := Truth{X: x, Heldout: Heldout(x, 5000, 26)}
	est := Estimator{Method: TSTE, Dim: dim, Seed: 27}
	var q [2]Quality
	var answers [2]int
	ss, err := RunArms(context.Background(), arms, Crowd{Oracle: o, Annotators: 4, Seed: 28}, Study{PerAnnotator: 20, HeldoutShare: 0.1}, budget, nil, func(cp StudyCheckpoint) error {
		tr := truth
		tr.CrowdHeldout = cp.Heldout
		for i, a := range cp.Arms {
			var err error
			if q[i], err = Assess(context.Background(), a.Checkpoint, tr, est); err != nil {
				return err
			}
			answers[i] = a.Answers
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("active: %d answers, test error %.4f, fresh held-out %.4f; random: %d answers, %.4f, %.4f; %d held out",
		answers[0], q[0].CrowdHeldout, q[0].Heldout, answers[1], q[1].CrowdHeldout, q[1].Heldout, ss.Heldout)
	if answers[0] != answers[1] || ss.Heldout != 300 {
		t.Errorf("arms answered %v, %d held out; want equal shares of 2,700 and 300", answers, ss.Heldout)
	}
	if q[0].Heldout > 0.6*q[1].Heldout || q[0].CrowdHeldout > 0.8*q[1].CrowdHeldout {
		t.Errorf("active %+v, random %+v: want active's errors at most 0.6 (fresh) and 0.8 (crowd's held-out) of random's", q[0], q[1])
	}
}
