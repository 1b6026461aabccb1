package store

import (
	"context"
	"fmt"
	"time"

	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
	"github.com/jackc/pgx/v5"
)

// The dashboard's reads: a study's answers and votes counted in PostgreSQL,
// the answers after a watermark, the participants of one page of the
// participants table and a fingerprint of what the figures depend on.
// internal/dashboard keeps the counts up to date and draws the page's
// figures from them.

// responseBinCap caps the response-time bins (a day).
const responseBinCap = 24 * 60 * 60 * 1000 / study.ResponseBinMS

// NotPreviewSQL is the condition that leaves a preview participant's
// rows (issue 26) out of a read of study $1's answers, questions or
// trials: their participant_id is none of the study's previews, read
// through participants_preview (a researcher's few tries; usually none).
const NotPreviewSQL = `participant_id <> ALL (ARRAY(SELECT id FROM participants WHERE study_id = $1 AND preview))`

// The SQL of the dashboard, by name so that TestHotQueryPlans explains
// these very strings on a large study. Preview participants and their
// answers are left out of every count (NotPreviewSQL; their questions
// cast no vote).
const (
	dashboardVersionSQL = `
		SELECT (SELECT max(answered_at) FROM answers WHERE study_id = $1 AND ` + NotPreviewSQL + `),
			(SELECT count(*) FROM answers WHERE study_id = $1 AND answered_at > now() - interval '10 minutes' AND ` + NotPreviewSQL + `),
			count(*), count(*) FILTER (WHERE excluded_at IS NOT NULL), coalesce(sum(id) FILTER (WHERE excluded_at IS NOT NULL), 0)
		FROM participants WHERE study_id = $1 AND NOT preview`
	// tallyAnswersSQL counts all the study's answers: the watermark, the
	// count and span, and per second, response-time bin and participant.
	tallyAnswersSQL = `
		WITH a AS MATERIALIZED (
			SELECT seq, participant_id, answered_at, response_ms FROM answers WHERE study_id = $1 AND ` + NotPreviewSQL + `
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
		SELECT count(*), count(*) FILTER (WHERE completed_at IS NOT NULL) FROM participants WHERE study_id = $1 AND NOT preview`
	// tallyCheckSQL counts the answers up to the watermark $2 and the
	// participants.
	tallyCheckSQL = `
		SELECT (SELECT count(*) FROM answers WHERE study_id = $1 AND seq <= $2 AND ` + NotPreviewSQL + `),
			count(*), count(*) FILTER (WHERE completed_at IS NOT NULL)
		FROM participants WHERE study_id = $1 AND NOT preview`
	// tallyNewAnswersSQL reads the answers after the watermark $2, their
	// response times in the bins of tallyAnswersSQL (NULL without a time:
	// least ignores NULLs).
	tallyNewAnswersSQL = `
		SELECT seq, participant_id, anchor, closer, farther,
			CASE WHEN response_ms IS NOT NULL THEN least(response_ms / 10, $3)::bigint END, answered_at
		FROM answers WHERE study_id = $1 AND seq > $2 AND ` + NotPreviewSQL
	tallyTouchedVotesSQL = `
		SELECT v.anchor, v.j, v.k, v.j_closer, v.k_closer
		FROM unnest($2::int[], $3::int[], $4::int[]) AS u(a, j, k)
		JOIN votes v ON v.study_id = $1 AND v.anchor = u.a AND v.j = u.j AND v.k = u.k`
	// tallyPeopleSQL reads the participants of one page of the table. Their
	// answers are counted as the study page counts them (collect's
	// listParticipantsSQL): the rows of answers (triplets, held-out ones
	// too) plus those of trial_answers (catch, repeat, "can't decide"), each
	// by its participant index.
	tallyPeopleSQL = `
		SELECT p.id, p.public_id, coalesce(p.external_id, ''), p.excluded_at, p.created_at,
			(SELECT count(*) FROM answers a WHERE a.participant_id = p.id)::int + t.n,
			p.arm, coalesce(p.completion_code, ''), coalesce(p.excluded_reason, ''),
			t.skipped, t.catches, t.caught, t.repeats, t.same
		FROM participants p CROSS JOIN LATERAL ` + TrialFiguresSQL + ` t
		WHERE p.study_id = $1 AND p.id = ANY($2)`
	// trialCountsSQL counts each participant's trial answers (catch and
	// repeat trials, "can't decide"), through trial_answers' study index.
	trialCountsSQL = `
		SELECT participant_id, count(*)::int FROM trial_answers WHERE study_id = $1 AND ` + NotPreviewSQL + ` GROUP BY participant_id`
)

// readOnlySnapshot runs fn in one read-only snapshot of the database.
var readOnlySnapshot = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}

// DashboardCounts counts all the study's answers and votes from scratch
// (one scan of each, in one snapshot), with the top most contradicted
// comparisons.
func (s *Store) DashboardCounts(ctx context.Context, studyID int64, top int) (_ study.DashboardCounts, err error) {
	defer wrap(&err, "store.DashboardCounts(%d, %d)", studyID, top)
	c := study.DashboardCounts{Seconds: map[int64]int{}, ResponseBins: map[int64]int{}, People: map[int64]int{}}
	err = pgx.BeginTxFunc(ctx, s.pool, readOnlySnapshot, func(tx pgx.Tx) error {
		var secB, secC, rtB, rtC, pB, pC []int64
		err := tx.QueryRow(ctx, tallyAnswersSQL, studyID, responseBinCap).
			Scan(&c.Seq, &c.Answers, &c.First, &c.Last, &secB, &secC, &rtB, &rtC, &pB, &pC)
		if err != nil {
			return err
		}
		for _, g := range []struct {
			m    map[int64]int
			b, c []int64
		}{{c.Seconds, secB, secC}, {c.ResponseBins, rtB, rtC}, {c.People, pB, pC}} {
			for i, b := range g.b {
				g.m[b] += int(g.c[i])
			}
		}
		rows, err := tx.Query(ctx, tallyVotesSQL, studyID, top)
		if err != nil {
			return err
		}
		var v study.VoteCount
		if _, err = pgx.ForEachRow(rows, []any{&v.Anchor, &v.J, &v.K, &v.JCloser, &v.KCloser}, func() error {
			if v.Anchor < 0 {
				c.Comparisons, c.Contradictions = v.JCloser, v.KCloser
			} else {
				c.Contradicted = append(c.Contradicted, v)
			}
			return nil
		}); err != nil {
			return err
		}
		return tx.QueryRow(ctx, tallyParticipantsSQL, studyID).Scan(&c.Participants, &c.Completed)
	})
	if err != nil {
		return study.DashboardCounts{}, err
	}
	return c, nil
}

// DashboardAnswersAfter reads the study's answers after the watermark seq
// through the (study_id, seq) index, the current votes of the comparisons
// they answer, and the checks of DashboardDelta, in one snapshot.
func (s *Store) DashboardAnswersAfter(ctx context.Context, studyID, seq int64) (_ study.DashboardDelta, err error) {
	defer wrap(&err, "store.DashboardAnswersAfter(%d, %d)", studyID, seq)
	var d study.DashboardDelta
	err = pgx.BeginTxFunc(ctx, s.pool, readOnlySnapshot, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, tallyCheckSQL, studyID, seq).Scan(&d.Counted, &d.Participants, &d.Completed)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, tallyNewAnswersSQL, studyID, seq, responseBinCap)
		if err != nil {
			return err
		}
		d.Answers, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (study.DashboardAnswer, error) {
			var a study.DashboardAnswer
			err := r.Scan(&a.Seq, &a.Participant, &a.Anchor, &a.Closer, &a.Farther, &a.ResponseBin, &a.At)
			return a, err
		})
		if err != nil || len(d.Answers) == 0 {
			return err
		}
		var as, js, ks []int32
		seen := map[triplet.Key]bool{}
		for _, a := range d.Answers {
			k := triplet.KeyOf(triplet.Triplet{Anchor: a.Anchor, Closer: a.Closer, Farther: a.Farther})
			if !seen[k] {
				seen[k] = true
				as, js, ks = append(as, int32(k.Anchor)), append(js, int32(k.J)), append(ks, int32(k.K))
			}
		}
		rows, err = tx.Query(ctx, tallyTouchedVotesSQL, studyID, as, js, ks)
		if err != nil {
			return err
		}
		d.Votes, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (study.VoteCount, error) {
			var v study.VoteCount
			err := r.Scan(&v.Anchor, &v.J, &v.K, &v.JCloser, &v.KCloser)
			return v, err
		})
		return err
	})
	if err != nil {
		return study.DashboardDelta{}, err
	}
	return d, nil
}

// DashboardParticipants returns the study's participants with the given
// ids, in no particular order (ids of other studies or of no participant
// are left out), with their answers counted as the study page counts them.
func (s *Store) DashboardParticipants(ctx context.Context, studyID int64, ids []int64) (_ []study.DashboardParticipant, err error) {
	defer wrap(&err, "store.DashboardParticipants(%d, %d ids)", studyID, len(ids))
	rows, err := s.pool.Query(ctx, tallyPeopleSQL, studyID, ids)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (study.DashboardParticipant, error) {
		var p study.DashboardParticipant
		err := r.Scan(&p.ID, &p.PublicID, &p.ExternalID, &p.ExcludedAt, &p.CreatedAt,
			&p.Answers, &p.Arm, &p.Code, &p.ExcludedReason, &p.Skipped, &p.CatchTrials, &p.CatchCorrect, &p.RepeatTrials, &p.RepeatSame)
		return p, err
	})
}

// TrialAnswerCounts returns the number of trial answers (catch and repeat
// trials, "can't decide") of each of the study's participants that has
// any, previews left out: the dashboard lists those who answered only
// trials beside those with answers in its tally.
func (s *Store) TrialAnswerCounts(ctx context.Context, studyID int64) (_ map[int64]int, err error) {
	defer wrap(&err, "store.TrialAnswerCounts(%d)", studyID)
	rows, err := s.pool.Query(ctx, trialCountsSQL, studyID)
	if err != nil {
		return nil, err
	}
	n := map[int64]int{}
	var id int64
	var c int
	_, err = pgx.ForEachRow(rows, []any{&id, &c}, func() error {
		n[id] = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}

// DashboardVersion returns the study's fingerprint. Answers are only ever
// added (with answered_at = now() of their transaction) and deleted with
// their study (or with their preview participant, whose answers no count
// includes), so an unchanged last-answer time means unchanged answers.
func (s *Store) DashboardVersion(ctx context.Context, studyID int64) (_ study.DashboardVersion, err error) {
	defer wrap(&err, "store.DashboardVersion(%d)", studyID)
	v := study.DashboardVersion{RecentWindow: 10 * time.Minute}
	var last *time.Time
	var people, exclSum int64
	err = s.pool.QueryRow(ctx, dashboardVersionSQL, studyID).Scan(&last, &v.Recent, &people, &v.Excluded, &exclSum)
	if err != nil {
		return v, err
	}
	lastS := ""
	if last != nil {
		lastS = last.UTC().Format(time.RFC3339Nano)
	}
	v.Structure = fmt.Sprintf("%d/%d/%d", people, v.Excluded, exclSum)
	v.Key = lastS + "/" + v.Structure
	return v, nil
}

// CantDecideCount counts the study's "can't decide" answers (skips, kept
// in trial_answers apart from the answers), read through trial_answers'
// study index. Only the dashboard page asks for it, not its status poll.
func (s *Store) CantDecideCount(ctx context.Context, studyID int64) (_ int, err error) {
	defer wrap(&err, "store.CantDecideCount(%d)", studyID)
	var n int
	err = s.pool.QueryRow(ctx, `SELECT count(*) FROM trial_answers WHERE study_id = $1 AND closer IS NULL AND `+NotPreviewSQL, studyID).Scan(&n)
	if err != nil {
		return 0, err
	}
	return n, nil
}
