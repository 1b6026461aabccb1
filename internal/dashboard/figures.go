package dashboard

import (
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/closer-lab/closer/internal/plot"
	"github.com/closer-lab/closer/internal/study"
)

// Figures are the aggregates the dashboard shows besides the recompute
// results, drawn from a Tally.
type Figures struct {
	Excluded         int     // excluded participants (the caller's: they change without answers)
	MedianResponseMS float64 // NaN without any response time
	// AnswersOverTime counts answers in equal intervals from First's
	// second over the span to Last, each answer in the interval of its
	// answered_at second (cumulative counts are the caller's business).
	First, Last     *time.Time
	AnswersOverTime []int
	// ResponseHist counts response times in equal bins of ResponseBinMS
	// from 0; the last bin also holds everything slower.
	ResponseBinMS float64
	ResponseHist  []int
	// Contradicted are the comparisons answered both ways most often.
	Contradicted []study.VoteCount
}

// rateWindow is the window of Stats.AnswersPerMinute (study.DashboardVersion's).
const rateWindow = 10 * time.Minute

// Stats returns the tally's counts. AnswersPerMinute is the caller's (it
// changes with the clock).
func (t *Tally) Stats() study.Stats {
	st := study.Stats{RateWindow: rateWindow, Participants: t.Participants, Completed: t.Completed, Answers: t.Answers,
		Comparisons: t.Comparisons, Contradictions: t.Contradictions}
	if t.Last != nil {
		last := *t.Last
		st.LastAnswer = &last
	}
	return st
}

// Figures returns the tally's counts and figures: buckets equal time
// intervals from the first answer's second over the span to the last one
// (each answer counted in the interval of its second); the median response
// time and bins response-time bins of a round width covering up to the
// 95th percentile, both from the tally's fine bins (each bin's answers
// taken at the bin's middle); and the top contradicted comparisons.
// AnswersPerMinute and Excluded are the caller's (they change with the
// clock and the participants).
func (t *Tally) Figures(buckets, bins int) (study.Stats, Figures) {
	st := t.Stats()
	var f Figures
	if t.First != nil {
		first, last := *t.First, *t.Last
		f.First, f.Last = &first, &last
		f.AnswersOverTime = answersOverTime(t.seconds, first, last, buckets)
	}
	f.MedianResponseMS = math.NaN()
	if len(t.rt) > 0 {
		ms, n := t.responseTimes()
		f.MedianResponseMS = stat.Quantile(0.5, stat.Empirical, ms, n)
		p95 := stat.Quantile(0.95, stat.Empirical, ms, n)
		// Bins of a round width (at least the fine bins' width) covering
		// 0..p95, on the plot's tick steps; slower answers land in the
		// last bin.
		f.ResponseBinMS = math.Max(study.ResponseBinMS, plot.NiceStep(math.Max(p95, 1)/float64(bins-1)))
		f.ResponseHist = make([]int, bins)
		for b, n := range t.rt {
			f.ResponseHist[min(int(float64(b)*study.ResponseBinMS/f.ResponseBinMS), bins-1)] += n
		}
	}
	f.Contradicted = slices.Clone(t.top)
	return st, f
}

// answersOverTime counts the answers per second in buckets equal intervals
// from first's second over the span to last.
func answersOverTime(seconds map[int64]int, first, last time.Time, buckets int) []int {
	lo := unixFloor(first)
	step := math.Max(last.Sub(first).Seconds(), 1) / float64(buckets)
	out := make([]int, buckets)
	for sec, n := range seconds {
		b := int(math.Floor(float64(sec-lo) / step))
		out[max(0, min(b, buckets-1))] += n
	}
	return out
}

// responseTimes returns the middles of the tally's response-time bins in
// increasing order and their answer counts, as stat.Quantile takes
// weighted samples.
func (t *Tally) responseTimes() (ms, n []float64) {
	keys := make([]int64, 0, len(t.rt))
	for b := range t.rt {
		keys = append(keys, b)
	}
	slices.Sort(keys)
	ms, n = make([]float64, len(keys)), make([]float64, len(keys))
	for i, b := range keys {
		ms[i] = float64(b)*study.ResponseBinMS + 0.5*study.ResponseBinMS
		n[i] = float64(t.rt[b])
	}
	return ms, n
}
