package collect

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// DashboardTally is the additive part of a study's dashboard figures over
// its answers with answers.seq <= Seq (the watermark; migration 000004): the
// answer count and time span, answers per second of answered_at, per 10 ms
// response-time bin and per participant, and the vote figures (distinct
// comparisons, contradicted ones and the most contradicted). A tally is
// brought up to date by AdvanceDashboardTally, which reads only the answers
// after the watermark (and the votes of the comparisons they touched), so a
// study receiving answers does not rescan its answers on every page load.
// A tally is not safe for concurrent use.
type DashboardTally struct {
	StudyID int64
	Seq     int64 // the largest answers.seq counted (0: none)
	Answers int   // answers counted (all with seq <= Seq when they were read)
	// First and Last are the earliest and latest answered_at (nil: none).
	First, Last *time.Time
	// Participants and Completed are re-read on every advance (not additive).
	Participants, Completed     int
	Comparisons, Contradictions int

	seconds map[int64]int // answers per Unix second of answered_at
	rt      map[int64]int // answers per 10 ms response-time bin
	people  map[int64]int // answers per participant id
	top     []VoteCount   // the most contradicted comparisons, first first
	topN    int
}

// rtBinCap caps the 10 ms response-time bins (a day).
const rtBinCap = 8640000

// The SQL of the dashboard tally, by name so that TestHotQueryPlans explains
// these very strings on a large study.
const (
	// tallyAnswersSQL counts all the study's answers: the watermark, the
	// count and span, and per second, response-time bin and participant.
	tallyAnswersSQL = `
		WITH a AS MATERIALIZED (
			SELECT seq, participant_id, answered_at, response_ms FROM answers WHERE study_id = $1
		)
		SELECT s.mx, s.n, s.lo, s.hi, tt.b, tt.c, rr.b, rr.c, pp.b, pp.c
		FROM (SELECT coalesce(max(seq), 0) AS mx, count(*) AS n, min(answered_at) AS lo, max(answered_at) AS hi FROM a) s,
			(SELECT coalesce(array_agg(b), '{}') AS b, coalesce(array_agg(c), '{}') AS c FROM
				(SELECT floor(date_part('epoch', answered_at))::bigint AS b, count(*) AS c FROM a GROUP BY 1) x) tt,
			(SELECT coalesce(array_agg(b), '{}') AS b, coalesce(array_agg(c), '{}') AS c FROM
				(SELECT least(response_ms / 10, $2)::bigint AS b, count(*) AS c FROM a WHERE response_ms IS NOT NULL GROUP BY 1) x) rr,
			(SELECT coalesce(array_agg(b), '{}') AS b, coalesce(array_agg(c), '{}') AS c FROM
				(SELECT participant_id AS b, count(*) AS c FROM a GROUP BY 1) x) pp`
	// tallyVotesSQL: a first row (-1, -1, -1, comparisons, contradicted),
	// then the $2 most contradicted comparisons.
	tallyVotesSQL = `
		WITH v AS MATERIALIZED (SELECT anchor, j, k, j_closer, k_closer FROM votes WHERE study_id = $1)
		SELECT -1, -1, -1, (SELECT count(*) FROM v)::int, (SELECT count(*) FROM v WHERE j_closer > 0 AND k_closer > 0)::int
		UNION ALL
		(SELECT anchor, j, k, j_closer, k_closer FROM v
		WHERE j_closer > 0 AND k_closer > 0
		ORDER BY least(j_closer, k_closer) DESC, j_closer + k_closer DESC, anchor, j, k
		LIMIT $2)`
	tallyParticipantsSQL = `
		SELECT count(*), count(*) FILTER (WHERE completed_at IS NOT NULL) FROM participants WHERE study_id = $1`
	// tallyCheckSQL counts the answers up to the watermark $2 and the
	// participants.
	tallyCheckSQL = `
		SELECT (SELECT count(*) FROM answers WHERE study_id = $1 AND seq <= $2),
			count(*), count(*) FILTER (WHERE completed_at IS NOT NULL)
		FROM participants WHERE study_id = $1`
	tallyNewAnswersSQL = `
		SELECT seq, participant_id, anchor, closer, farther, response_ms, answered_at
		FROM answers WHERE study_id = $1 AND seq > $2`
	tallyTouchedVotesSQL = `
		SELECT v.anchor, v.j, v.k, v.j_closer, v.k_closer
		FROM unnest($2::int[], $3::int[], $4::int[]) AS u(a, j, k)
		JOIN votes v ON v.study_id = $1 AND v.anchor = u.a AND v.j = u.j AND v.k = u.k`
	tallyPeopleSQL = `
		SELECT id, public_id, coalesce(external_id, ''), excluded_at, created_at
		FROM participants WHERE study_id = $1 AND id = ANY($2)`
)

// NewDashboardTally counts all the study's answers and votes from scratch
// (one scan of each, in one snapshot), keeping the top most contradicted
// comparisons.
func (s *Store) NewDashboardTally(ctx context.Context, studyID int64, top int) (*DashboardTally, error) {
	t := &DashboardTally{StudyID: studyID, topN: top, seconds: map[int64]int{}, rt: map[int64]int{}, people: map[int64]int{}}
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var secB, secC, rtB, rtC, pB, pC []int64
		err := tx.QueryRow(ctx, tallyAnswersSQL, studyID, rtBinCap).
			Scan(&t.Seq, &t.Answers, &t.First, &t.Last, &secB, &secC, &rtB, &rtC, &pB, &pC)
		if err != nil {
			return err
		}
		for i, b := range secB {
			t.seconds[b] += int(secC[i])
		}
		for i, b := range rtB {
			t.rt[b] += int(rtC[i])
		}
		for i, b := range pB {
			t.people[b] += int(pC[i])
		}
		rows, err := tx.Query(ctx, tallyVotesSQL, studyID, top)
		if err != nil {
			return err
		}
		var v VoteCount
		if _, err = pgx.ForEachRow(rows, []any{&v.Anchor, &v.J, &v.K, &v.JCloser, &v.KCloser}, func() error {
			if v.Anchor < 0 {
				t.Comparisons, t.Contradictions = v.JCloser, v.KCloser
			} else {
				t.top = append(t.top, v)
			}
			return nil
		}); err != nil {
			return err
		}
		return tx.QueryRow(ctx, tallyParticipantsSQL, studyID).Scan(&t.Participants, &t.Completed)
	})
	if err != nil {
		return nil, fmt.Errorf("dashboard tally: %w", err)
	}
	return t, nil
}

// deltaAnswer is an answer after the watermark.
type deltaAnswer struct {
	seq, participant        int64
	anchor, closer, farther int
	ms                      *int
	at                      time.Time
}

// AdvanceDashboardTally adds the answers after t's watermark to t, reading
// them through the (study_id, seq) index, and re-reads the votes of the
// comparisons they touched. It returns false, leaving t unchanged, when the
// answers up to the watermark are no longer the ones counted: an answer
// committed late with a sequence number below the watermark (sequence
// numbers are taken at insert, not at commit) or answers removed. The
// caller then counts from scratch. On an error t is unchanged too.
func (s *Store) AdvanceDashboardTally(ctx context.Context, t *DashboardTally) (bool, error) {
	var before, people, completed int
	var delta []deltaAnswer
	var touched map[voteKey]VoteCount
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, tallyCheckSQL, t.StudyID, t.Seq).Scan(&before, &people, &completed)
		if err != nil || before != t.Answers {
			return err
		}
		rows, err := tx.Query(ctx, tallyNewAnswersSQL, t.StudyID, t.Seq)
		if err != nil {
			return err
		}
		var d deltaAnswer
		if _, err := pgx.ForEachRow(rows, []any{&d.seq, &d.participant, &d.anchor, &d.closer, &d.farther, &d.ms, &d.at}, func() error {
			if d.ms != nil {
				ms := *d.ms
				d.ms = &ms
			}
			delta = append(delta, d)
			return nil
		}); err != nil {
			return err
		}
		if len(delta) == 0 {
			return nil
		}
		var as, js, ks []int32
		seen := map[voteKey]bool{}
		for _, d := range delta {
			k := keyOfAnswer(d.anchor, d.closer, d.farther)
			if !seen[k] {
				seen[k] = true
				as, js, ks = append(as, int32(k.anchor)), append(js, int32(k.j)), append(ks, int32(k.k))
			}
		}
		rows, err = tx.Query(ctx, tallyTouchedVotesSQL, t.StudyID, as, js, ks)
		if err != nil {
			return err
		}
		touched = make(map[voteKey]VoteCount, len(seen))
		var v VoteCount
		_, err = pgx.ForEachRow(rows, []any{&v.Anchor, &v.J, &v.K, &v.JCloser, &v.KCloser}, func() error {
			touched[voteKey{v.Anchor, v.J, v.K}] = v
			return nil
		})
		return err
	})
	if err != nil {
		return false, fmt.Errorf("dashboard tally: advance: %w", err)
	}
	if before != t.Answers {
		return false, nil
	}
	// Every read succeeded: merge (nothing below can fail).
	t.Participants, t.Completed = people, completed
	added := map[voteKey]VoteCount{} // the delta's own votes per comparison
	for _, d := range delta {
		t.Seq = max(t.Seq, d.seq)
		t.Answers++
		at := d.at
		if t.First == nil || at.Before(*t.First) {
			t.First = &at
		}
		if t.Last == nil || at.After(*t.Last) {
			t.Last = &at
		}
		t.seconds[unixFloor(at)]++
		if d.ms != nil {
			t.rt[min(int64(*d.ms)/10, rtBinCap)]++
		}
		t.people[d.participant]++
		k := keyOfAnswer(d.anchor, d.closer, d.farther)
		a := added[k]
		if d.closer == k.j {
			a.JCloser++
		} else {
			a.KCloser++
		}
		added[k] = a
	}
	// Votes only grow, so a comparison's rank among the contradicted only
	// rises: the new top comes from the old top and the touched comparisons.
	cands := map[voteKey]VoteCount{}
	for _, v := range t.top {
		cands[voteKey{v.Anchor, v.J, v.K}] = v
	}
	for k, a := range added {
		now, ok := touched[k]
		if !ok {
			continue // cannot happen with votes written with their answer
		}
		oldJ, oldK := now.JCloser-a.JCloser, now.KCloser-a.KCloser
		if oldJ+oldK == 0 {
			t.Comparisons++
		}
		contra := now.JCloser > 0 && now.KCloser > 0
		if contra && !(oldJ > 0 && oldK > 0) {
			t.Contradictions++
		}
		if contra {
			cands[k] = now
		}
	}
	t.top = t.top[:0]
	for _, v := range cands {
		t.top = append(t.top, v)
	}
	slices.SortFunc(t.top, compareContradicted)
	t.top = t.top[:min(len(t.top), t.topN)]
	return true, nil
}

type voteKey struct{ anchor, j, k int }

func keyOfAnswer(anchor, closer, farther int) voteKey {
	return voteKey{anchor, min(closer, farther), max(closer, farther)}
}

// compareContradicted orders as the votes query does: most votes on the
// weaker side first, then most votes, then by key.
func compareContradicted(a, b VoteCount) int {
	return cmp.Or(
		cmp.Compare(min(b.JCloser, b.KCloser), min(a.JCloser, a.KCloser)),
		cmp.Compare(b.JCloser+b.KCloser, a.JCloser+a.KCloser),
		cmp.Compare(a.Anchor, b.Anchor), cmp.Compare(a.J, b.J), cmp.Compare(a.K, b.K))
}

// unixFloor is the Unix second of x, as floor(date_part('epoch', x)).
func unixFloor(x time.Time) int64 {
	return x.Unix() // seconds rounded down, also before 1970
}

// Figures returns the tally's counts and figures: buckets equal time
// intervals from the first answer's second over the span to the last one
// (each answer counted in the interval of its second), the median and
// bins response-time bins from the 10 ms bins as Dashboard describes, and
// the top contradicted comparisons. AnswersPerMinute and Excluded are the
// caller's (they change with the clock and the participants).
func (t *DashboardTally) Figures(buckets, bins int) (Stats, DashboardFigures) {
	st := Stats{RateWindow: 10 * time.Minute, Participants: t.Participants, Completed: t.Completed, Answers: t.Answers,
		Comparisons: t.Comparisons, Contradictions: t.Contradictions}
	var f DashboardFigures
	if t.First != nil {
		first, last := *t.First, *t.Last
		f.First, f.Last, st.LastAnswer = &first, &last, &last
		lo := unixFloor(first)
		step := math.Max(last.Sub(first).Seconds(), 1) / float64(buckets)
		f.AnswersOverTime = make([]int, buckets)
		for sec, n := range t.seconds {
			b := int(math.Floor(float64(sec-lo) / step))
			f.AnswersOverTime[max(0, min(b, buckets-1))] += n
		}
	}
	rtB := make([][2]int64, 0, len(t.rt)) // (10 ms bin, count)
	for b, n := range t.rt {
		rtB = append(rtB, [2]int64{b, int64(n)})
	}
	f.MedianResponseMS = math.NaN()
	if len(rtB) > 0 {
		slices.SortFunc(rtB, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
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
		p95 := quantile(0.95)
		// Bins of a round width (at least the 10 ms of the fine bins)
		// covering 0..p95; slower answers land in the last bin.
		f.ResponseBinMS = math.Max(10, NiceStep(math.Max(p95, 1)/float64(bins-1)))
		f.ResponseHist = make([]int, bins)
		for _, bc := range rtB {
			f.ResponseHist[min(int(float64(bc[0])*10/f.ResponseBinMS), bins-1)] += int(bc[1])
		}
	}
	f.Contradicted = slices.Clone(t.top)
	return st, f
}

// DashboardTallyParticipants returns the participants with at least one answer, most
// answers first (then by id), at most limit after skipping offset, with
// their counts from the tally, and how many there are.
func (s *Store) DashboardTallyParticipants(ctx context.Context, t *DashboardTally, limit, offset int) ([]DashboardParticipant, int, error) {
	type pc struct {
		id int64
		n  int
	}
	all := make([]pc, 0, len(t.people))
	for id, n := range t.people {
		if n > 0 {
			all = append(all, pc{id, n})
		}
	}
	slices.SortFunc(all, func(a, b pc) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.id, b.id)) })
	page := all[min(offset, len(all)):min(offset+limit, len(all))]
	if len(page) == 0 {
		return nil, len(all), nil
	}
	ids := make([]int64, len(page))
	for i, p := range page {
		ids[i] = p.id
	}
	rows, err := s.pool.Query(ctx, tallyPeopleSQL, t.StudyID, ids)
	if err != nil {
		return nil, 0, fmt.Errorf("dashboard participants: %w", err)
	}
	byID := map[int64]DashboardParticipant{}
	var p DashboardParticipant
	if _, err := pgx.ForEachRow(rows, []any{&p.ID, &p.PublicID, &p.ExternalID, &p.ExcludedAt, &p.CreatedAt}, func() error {
		byID[p.ID] = p
		return nil
	}); err != nil {
		return nil, 0, fmt.Errorf("dashboard participants: %w", err)
	}
	out := make([]DashboardParticipant, 0, len(page))
	for _, c := range page {
		if q, ok := byID[c.id]; ok {
			q.Answers = c.n
			out = append(out, q)
		}
	}
	return out, len(all), nil
}
