package collect

import (
	"context"
	"fmt"
	"math"
	"time"
)

// DashboardFigures are the aggregates the dashboard shows besides the
// recompute results, drawn from a DashboardTally (grouped in PostgreSQL, so
// the page does not load the answers one by one).
type DashboardFigures struct {
	Excluded         int     // excluded participants
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
	Contradicted []VoteCount
}

// VoteCount is a comparison with its votes: JCloser said d(a,j) < d(a,k).
type VoteCount struct {
	Anchor, J, K     int
	JCloser, KCloser int
}

// The SQL of the dashboard's live figures and fingerprint, by name so that
// TestHotQueryPlans explains these very strings on a large study.
const (
	// dashboardLiveSQL: the answers of the last ten minutes and the
	// excluded participants.
	dashboardLiveSQL = `
		SELECT (SELECT count(*) FROM answers WHERE study_id = $1 AND answered_at > now() - interval '10 minutes'),
			(SELECT count(*) FROM participants WHERE study_id = $1 AND excluded_at IS NOT NULL)`
	dashboardVersionSQL = `
		SELECT (SELECT max(answered_at) FROM answers WHERE study_id = $1),
			(SELECT count(*) FROM answers WHERE study_id = $1 AND answered_at > now() - interval '10 minutes'),
			count(*), count(*) FILTER (WHERE excluded_at IS NOT NULL), coalesce(sum(id) FILTER (WHERE excluded_at IS NOT NULL), 0)
		FROM participants WHERE study_id = $1`
)

// Dashboard computes the dashboard's figures over all answers of the study
// from scratch (excluded participants included: they describe the
// collection): the counts of Stats and the aggregates of DashboardFigures,
// with buckets time intervals, bins response-time bins and the top
// contradicted comparisons. It is NewDashboardTally (one scan of the
// answers, one of the votes) and its Figures, plus the rate of the last ten
// minutes and the excluded participants.
func (s *Store) Dashboard(ctx context.Context, studyID int64, buckets, bins, top int) (Stats, DashboardFigures, error) {
	t, err := s.NewDashboardTally(ctx, studyID, top)
	if err != nil {
		return Stats{}, DashboardFigures{}, fmt.Errorf("dashboard: %w", err)
	}
	st, f := t.Figures(buckets, bins)
	var recent int
	err = s.pool.QueryRow(ctx, dashboardLiveSQL, studyID).
		Scan(&recent, &f.Excluded)
	if err != nil {
		return st, f, fmt.Errorf("dashboard: %w", err)
	}
	st.AnswersPerMinute = float64(recent) / st.RateWindow.Minutes()
	return st, f, nil
}

// NiceStep rounds x up to 1, 2 or 5 times a power of ten: bin widths and
// axis ticks a reader takes in at a glance.
func NiceStep(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// DashboardVersion is a cheap fingerprint of what the dashboard's figures
// depend on (the last answer's time, the participants and who is
// excluded), read through indexes without scanning the answers, and the
// live figures that change with the clock alone.
type DashboardVersion struct {
	Key string
	// Structure leaves out the last answer's time: what the additive
	// tally of the answers cannot follow by itself (participants added,
	// excluded or included again).
	Structure    string
	Recent       int // answers in the last RecentWindow
	RecentWindow time.Duration
	Excluded     int
}

// DashboardVersion returns the study's fingerprint. Answers are only ever
// added (with answered_at = now() of their transaction) and deleted with
// their study, so an unchanged last-answer time means unchanged answers.
func (s *Store) DashboardVersion(ctx context.Context, studyID int64) (DashboardVersion, error) {
	v := DashboardVersion{RecentWindow: 10 * time.Minute}
	var last *time.Time
	var people, exclSum int64
	err := s.pool.QueryRow(ctx, dashboardVersionSQL, studyID).Scan(&last, &v.Recent, &people, &v.Excluded, &exclSum)
	if err != nil {
		return v, fmt.Errorf("dashboard version: %w", err)
	}
	lastS := ""
	if last != nil {
		lastS = last.UTC().Format(time.RFC3339Nano)
	}
	v.Structure = fmt.Sprintf("%d/%d/%d", people, v.Excluded, exclSum)
	v.Key = lastS + "/" + v.Structure
	return v, nil
}
