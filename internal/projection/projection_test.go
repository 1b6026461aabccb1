package projection

import (
	"context"
	"flag"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
)

var (
	reproduce  = flag.Bool("reproduce", false, "run the slow reproductions (projection coverage, docs/reproductions.md)")
	repStudies = flag.Int("studies", 10, "simulated studies of the projection reproduction")
	repItems   = flag.Int("items", 100, "items per simulated study")
	repAnswers = flag.Int("answers", 4000, "answers the curve is measured on (the projection is to twice that)")
	repDim     = flag.Int("truedim", 2, "dimension of the simulated points")
	repMethod  = flag.String("method", "tste", "embedding method")
	repRatio   = flag.Float64("ratio", DefaultRatio, "the curve's first point is at answers/ratio")
	repWeight  = flag.Bool("weighted", false, "weigh the curve's points by their answers")
)

// TestFitCurveRecoversPowerLaw: exact points of a known curve give its
// parameters back; AnswersFor inverts ErrorAt; an error at or below the
// asymptote needs infinitely many answers.
func TestFitCurveRecoversPowerLaw(t *testing.T) {
	t.Parallel()
	a, b, c := 0.12, 3.0, 0.6
	var pts []Point
	for _, n := range Sizes(8000, 8, 16) {
		pts = append(pts, Point{n, a + b*math.Pow(float64(n), -c)})
	}
	cv, err := FitCurve(pts, Options{Reps: 50})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(cv.A-a) > 1e-4 || math.Abs(cv.B-b)/b > 1e-2 || math.Abs(cv.C-c) > 1e-3 {
		t.Errorf("fit a=%g b=%g c=%g, want %g %g %g", cv.A, cv.B, cv.C, a, b, c)
	}
	n := cv.AnswersFor(0.15)
	want := math.Pow((0.15-a)/b, -1/c)
	if math.Abs(n.Value-want)/want > 0.01 {
		t.Errorf("AnswersFor(0.15) = %g, want %g", n.Value, want)
	}
	if e := cv.ErrorAt(n.Value); math.Abs(e.Value-0.15) > 1e-9 || !(e.Low <= e.Value && e.Value <= e.High) {
		t.Errorf("ErrorAt(AnswersFor(0.15)) = %+v", e)
	}
	if n := cv.AnswersFor(0.11); !math.IsInf(n.Value, 1) {
		t.Errorf("AnswersFor below the asymptote = %g, want +Inf", n.Value)
	}
}

// TestFitCurveNoisyInterval: with noise on the points the 80% interval of
// the error at twice the answers holds the true curve's value, and is
// wider than the exact points' interval.
func TestFitCurveNoisyInterval(t *testing.T) {
	t.Parallel()
	a, b, c := 0.1, 2.0, 0.5
	rng := triplet.NewRand(4)
	hits, trials := 0, 20
	for k := range trials {
		var pts []Point
		for _, n := range Sizes(4000, 8, 16) {
			pts = append(pts, Point{n, a + b*math.Pow(float64(n), -c) + 0.004*rng.NormFloat64()})
		}
		cv, err := FitCurve(pts, Options{Seed: uint64(k)})
		if err != nil {
			t.Fatal(err)
		}
		e := cv.ErrorAt(8000)
		truth := a + b*math.Pow(8000, -c)
		if e.Low <= truth && truth <= e.High {
			hits++
		}
	}
	t.Logf("80%% interval holds the curve at 2N in %d of %d", hits, trials)
	if hits < trials/2 {
		t.Errorf("interval holds the truth in %d of %d, want most", hits, trials)
	}
}

func TestFitCurveBadInput(t *testing.T) {
	t.Parallel()
	if _, err := FitCurve([]Point{{1, 1}, {2, 1}, {3, 1}}, Options{}); err == nil {
		t.Error("3 points: no error")
	}
	if _, err := FitCurve([]Point{{1, 1}, {2, math.NaN()}, {3, 1}, {4, 1}}, Options{}); err == nil {
		t.Error("NaN point: no error")
	}
}

func TestSizes(t *testing.T) {
	t.Parallel()
	s := Sizes(1600, 5, 16)
	want := []int{100, 200, 400, 800, 1600}
	if fmt.Sprint(s) != fmt.Sprint(want) {
		t.Errorf("Sizes = %v, want %v", s, want)
	}
}

// TestReproduceProjection checks the target of issue 28: in at least 8 of
// 10 simulated studies the 80% interval projected from the learning curve
// of the first N answers holds the held-out error actually reached with
// 2N answers.
//
//	go test ./internal/projection -run TestReproduceProjection -reproduce -v -timeout 60m
func TestReproduceProjection(t *testing.T) {
	t.Parallel()
	if !*reproduce {
		t.Skip("slow reproduction; run with -reproduce")
	}
	m, err := embed.ParseMethod(*repMethod)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	hits, reverse := 0, 0
	t.Logf("| study | error at N | projected at 2N (80%%) | reached at 2N | a, b, c |")
	for s := range *repStudies {
		seed := uint64(100 + s)
		rng := triplet.NewRand(seed)
		x := triplet.Gaussian(rng, *repItems, *repDim, 1)
		o := triplet.NewOracle(x, 0.1, seed)
		all := triplet.RandomTriplets(rng, o, 2**repAnswers)
		test := triplet.RandomTriplets(rng, o, 2000)
		fit := embed.Options{Method: m, Dim: *repDim, Seed: seed}
		pts, err := Measure(context.Background(), *repItems, all, test, Sizes(*repAnswers, DefaultPoints, *repRatio), fit, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("points %v", pts)
		cv, err := FitCurve(pts, Options{Seed: seed, Weighted: *repWeight})
		if err != nil {
			t.Fatal(err)
		}
		proj := cv.ErrorAt(float64(2 * *repAnswers))
		reached, err := Measure(context.Background(), *repItems, all, test, []int{2 * *repAnswers}, fit, 0)
		if err != nil {
			t.Fatal(err)
		}
		in := proj.Low <= reached[0].Error && reached[0].Error <= proj.High
		if in {
			hits++
		}
		// The reverse question, logged: the answers the curve says the
		// reached error needs, against the 2N that reached it.
		need := cv.AnswersFor(reached[0].Error)
		if need.Low <= float64(2**repAnswers) && float64(2**repAnswers) <= need.High {
			reverse++
		}
		t.Logf("answers for %.4f: %s [%s, %s]", reached[0].Error, fmtN(need.Value), fmtN(need.Low), fmtN(need.High))
		t.Logf("| %d | %.4f | %.4f [%.4f, %.4f] | %.4f %v | %.3f, %.3g, %.3f |", s+1, pts[len(pts)-1].Error, proj.Value, proj.Low, proj.High, reached[0].Error, in, cv.A, cv.B, cv.C)
	}
	t.Logf("interval holds the reached error in %d of %d studies; the answers-for interval holds 2N in %d; %.1f s", hits, *repStudies, reverse, time.Since(start).Seconds())
	if hits < 8**repStudies/10 {
		t.Errorf("interval holds the reached error in %d of %d studies, want at least 80%%", hits, *repStudies)
	}
}

// TestFitCurveAsymptoteNotNegative: points that an unconstrained power law
// would follow to a negative asymptote (as the first points of a real
// curve, before the power-law tail, do) give a ≥ 0, so the projection never
// promises an error below zero.
func TestFitCurveAsymptoteNotNegative(t *testing.T) {
	t.Parallel()
	var pts []Point
	for _, n := range Sizes(4000, 8, 16) {
		pts = append(pts, Point{n, -0.3 + 2*math.Pow(float64(n), -0.15)})
	}
	cv, err := FitCurve(pts, Options{Reps: 20})
	if err != nil {
		t.Fatal(err)
	}
	if cv.A < 0 {
		t.Errorf("asymptote %g < 0", cv.A)
	}
	if e := cv.ErrorAt(1e9); e.Value < 0 || e.Low < -0.05 {
		t.Errorf("error at 10⁹ answers %+v", e)
	}
}

func fmtN(v float64) string {
	if math.IsInf(v, 1) {
		return "never"
	}
	return fmt.Sprintf("%.0f", v)
}
