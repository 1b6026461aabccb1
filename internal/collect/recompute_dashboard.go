package collect

import (
	"context"
	"fmt"
	"math"
	"slices"
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

// Dashboard computes the dashboard's figures over all answers of the study
// (excluded participants included: they describe the collection): the
// counts of Stats and the aggregates of DashboardFigures, with buckets time
// intervals, bins response-time bins and the top contradicted comparisons.
// It reads the study's answers once (into a materialised CTE that the
// histograms group in memory) and its votes once, so a large study costs
// two scans instead of one per figure.
func (s *Store) Dashboard(ctx context.Context, studyID int64, buckets, bins, top int) (Stats, DashboardFigures, error) {
	st := Stats{RateWindow: 10 * time.Minute}
	var f DashboardFigures
	var p95 *float64
	var timeB, timeC, rtBins, rtC []int64
	var recent int
	// Response times go into fine 10 ms bins here; the median, the 95th
	// percentile and the round bins of the histogram come from them below.
	err := s.pool.QueryRow(ctx, `
		WITH a AS MATERIALIZED (
			SELECT answered_at, response_ms FROM answers WHERE study_id = $1
		), s AS (
			SELECT count(*) AS n, min(answered_at) AS lo, max(answered_at) AS hi,
				count(*) FILTER (WHERE answered_at > now() - interval '10 minutes') AS recent
			FROM a
		), t AS (
			SELECT least(width_bucket(date_part('epoch', a.answered_at), date_part('epoch', s.lo),
				date_part('epoch', s.hi) + 1e-6, $2), $2) - 1 AS b, count(*) AS c
			FROM a, s GROUP BY 1
		), r AS (
			SELECT least(response_ms / 10, 8640000) AS b, count(*) AS c FROM a WHERE response_ms IS NOT NULL GROUP BY 1
		)
		SELECT s.n, s.lo, s.hi, s.recent,
			(SELECT coalesce(array_agg(b), '{}') FROM t), (SELECT coalesce(array_agg(c), '{}') FROM t),
			(SELECT coalesce(array_agg(b), '{}') FROM r), (SELECT coalesce(array_agg(c), '{}') FROM r),
			(SELECT count(*) FROM participants WHERE study_id = $1),
			(SELECT count(*) FROM participants WHERE study_id = $1 AND completed_at IS NOT NULL),
			(SELECT count(*) FROM participants WHERE study_id = $1 AND excluded_at IS NOT NULL)
		FROM s`, studyID, buckets).
		Scan(&st.Answers, &f.First, &f.Last, &recent, &timeB, &timeC, &rtBins, &rtC,
			&st.Participants, &st.Completed, &f.Excluded)
	if err != nil {
		return st, f, fmt.Errorf("dashboard: %w", err)
	}
	st.LastAnswer = f.Last
	rtB := make([][2]int64, len(rtBins)) // (10 ms bin, count)
	for i := range rtBins {
		rtB[i] = [2]int64{rtBins[i], rtC[i]}
	}
	st.AnswersPerMinute = float64(recent) / st.RateWindow.Minutes()
	// The median and the 95th percentile from the 10 ms bins (to 10 ms).
	f.MedianResponseMS = math.NaN()
	if len(rtB) > 0 {
		slices.SortFunc(rtB, func(a, b [2]int64) int { return int(a[0] - b[0]) })
		total := int64(0)
		for _, bc := range rtB {
			total += bc[1]
		}
		quantile := func(q float64) float64 {
			seen := int64(0)
			for _, bc := range rtB {
				seen += bc[1]
				if float64(seen) >= q*float64(total) {
					return float64(bc[0])*10 + 5
				}
			}
			return float64(rtB[len(rtB)-1][0])*10 + 5
		}
		f.MedianResponseMS = quantile(0.5)
		p := quantile(0.95)
		p95 = &p
	}
	if f.First != nil {
		f.AnswersOverTime = make([]int, buckets)
		for i, b := range timeB {
			if b >= 0 && int(b) < buckets {
				f.AnswersOverTime[b] += int(timeC[i])
			}
		}
	}
	if p95 != nil {
		// Bins of a round width (at least the 10 ms of the fine bins)
		// covering 0..p95; slower answers land in the last bin.
		f.ResponseBinMS = math.Max(10, niceStep(math.Max(*p95, 1)/float64(bins-1)))
		f.ResponseHist = make([]int, bins)
		for _, bc := range rtB {
			f.ResponseHist[min(int(float64(bc[0])*10/f.ResponseBinMS), bins-1)] += int(bc[1])
		}
	}

	// The votes once: their counts and the most contradicted comparisons.
	rows, err := s.pool.Query(ctx, `
		WITH v AS MATERIALIZED (SELECT anchor, j, k, j_closer, k_closer FROM votes WHERE study_id = $1)
		SELECT -1, -1, -1, (SELECT count(*) FROM v)::int, (SELECT count(*) FROM v WHERE j_closer > 0 AND k_closer > 0)::int
		UNION ALL
		(SELECT anchor, j, k, j_closer, k_closer FROM v
		WHERE j_closer > 0 AND k_closer > 0
		ORDER BY least(j_closer, k_closer) DESC, j_closer + k_closer DESC, anchor, j, k
		LIMIT $2)`, studyID, top)
	if err != nil {
		return st, f, fmt.Errorf("dashboard: votes: %w", err)
	}
	var v VoteCount
	_, err = pgx.ForEachRow(rows, []any{&v.Anchor, &v.J, &v.K, &v.JCloser, &v.KCloser}, func() error {
		if v.Anchor < 0 {
			st.Comparisons, st.Contradictions = v.JCloser, v.KCloser
		} else {
			f.Contradicted = append(f.Contradicted, v)
		}
		return nil
	})
	if err != nil {
		return st, f, fmt.Errorf("dashboard: votes: %w", err)
	}
	return st, f, nil
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
