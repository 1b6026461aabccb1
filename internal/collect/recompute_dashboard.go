package collect

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
)

// DashboardFigures are the aggregates the dashboard shows besides the
// recompute results, computed in PostgreSQL so the page does not load the
// answers.
type DashboardFigures struct {
	Excluded         int     // excluded participants
	MedianResponseMS float64 // NaN without any response time
	// AnswersOverTime counts answers in Buckets equal intervals from First
	// to Last (cumulative counts are the caller's business).
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

// Dashboard computes the dashboard's aggregates over all answers of the
// study (excluded participants included: these figures describe the
// collection), with buckets time intervals, bins response-time bins and the
// top contradicted comparisons.
func (s *Store) Dashboard(ctx context.Context, studyID int64, buckets, bins, top int) (DashboardFigures, error) {
	var f DashboardFigures
	var med, p95 *float64
	err := s.pool.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM participants WHERE study_id = $1 AND excluded_at IS NOT NULL),
			min(answered_at), max(answered_at),
			percentile_cont(0.5) WITHIN GROUP (ORDER BY response_ms),
			percentile_cont(0.95) WITHIN GROUP (ORDER BY response_ms)
		FROM answers WHERE study_id = $1`, studyID).Scan(&f.Excluded, &f.First, &f.Last, &med, &p95)
	if err != nil {
		return f, fmt.Errorf("dashboard: %w", err)
	}
	f.MedianResponseMS = math.NaN()
	if med != nil {
		f.MedianResponseMS = *med
	}
	if f.First != nil {
		lo, hi := float64(f.First.UnixMicro()), float64(f.Last.UnixMicro())+1
		f.AnswersOverTime = make([]int, buckets)
		rows, err := s.pool.Query(ctx, `
			SELECT least(width_bucket(date_part('epoch', answered_at) * 1e6, $2::float8, $3::float8, $4), $4) - 1, count(*)
			FROM answers WHERE study_id = $1 GROUP BY 1`, studyID, lo, hi, buckets)
		if err := fill(rows, err, f.AnswersOverTime); err != nil {
			return f, fmt.Errorf("dashboard: answers over time: %w", err)
		}
	}
	if p95 != nil {
		// Bins of a round width covering 0..p95; slower answers land in the last bin.
		f.ResponseBinMS = niceStep(math.Max(*p95, 1) / float64(bins-1))
		f.ResponseHist = make([]int, bins)
		rows, err := s.pool.Query(ctx, `
			SELECT least(floor(response_ms / $2::float8)::int, $3 - 1), count(*)
			FROM answers WHERE study_id = $1 AND response_ms IS NOT NULL GROUP BY 1`, studyID, f.ResponseBinMS, bins)
		if err := fill(rows, err, f.ResponseHist); err != nil {
			return f, fmt.Errorf("dashboard: response times: %w", err)
		}
	}
	rows, err := s.pool.Query(ctx, `
		SELECT anchor, j, k, j_closer, k_closer FROM votes
		WHERE study_id = $1 AND j_closer > 0 AND k_closer > 0
		ORDER BY least(j_closer, k_closer) DESC, j_closer + k_closer DESC, anchor, j, k
		LIMIT $2`, studyID, top)
	if err != nil {
		return f, fmt.Errorf("dashboard: contradictions: %w", err)
	}
	f.Contradicted, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (VoteCount, error) {
		var v VoteCount
		err := r.Scan(&v.Anchor, &v.J, &v.K, &v.JCloser, &v.KCloser)
		return v, err
	})
	if err != nil {
		return f, fmt.Errorf("dashboard: contradictions: %w", err)
	}
	return f, nil
}

// fill adds (bucket, count) rows into dst.
func fill(rows pgx.Rows, err error, dst []int) error {
	if err != nil {
		return err
	}
	var b, n int
	_, err = pgx.ForEachRow(rows, []any{&b, &n}, func() error {
		if b >= 0 && b < len(dst) {
			dst[b] += n
		}
		return nil
	})
	return err
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
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
	Key          string
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
	err := s.pool.QueryRow(ctx, `
		SELECT (SELECT max(answered_at) FROM answers WHERE study_id = $1),
			(SELECT count(*) FROM answers WHERE study_id = $1 AND answered_at > now() - interval '10 minutes'),
			count(*), count(*) FILTER (WHERE excluded_at IS NOT NULL), coalesce(sum(id) FILTER (WHERE excluded_at IS NOT NULL), 0)
		FROM participants WHERE study_id = $1`, studyID).Scan(&last, &v.Recent, &people, &v.Excluded, &exclSum)
	if err != nil {
		return v, fmt.Errorf("dashboard version: %w", err)
	}
	lastS := ""
	if last != nil {
		lastS = last.UTC().Format(time.RFC3339Nano)
	}
	v.Key = fmt.Sprintf("%s/%d/%d/%d", lastS, people, v.Excluded, exclSum)
	return v, nil
}
