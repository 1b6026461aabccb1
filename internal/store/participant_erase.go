package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/study"
)

// A participant's data-rights deletion (issue 30): found by external or
// public id in a set of studies, previewed, then deleted with everything
// that is theirs.

// eraseMatchSQL finds the participants of studies $1 whose public or
// external id is $2 ($3: lock their rows), grouped by study.
const eraseMatchSQL = `
	SELECT p.study_id, s.slug, s.title, array_agg(p.id ORDER BY p.id)
	FROM participants p JOIN studies s ON s.id = p.study_id AND s.deleted_at IS NULL
	WHERE p.study_id = ANY($1) AND (p.public_id = $2 OR p.external_id = $2)
	GROUP BY p.study_id, s.slug, s.title ORDER BY s.slug`

// eraseCountsSQL counts what participants $1 left behind: questions,
// answers, trial answers, the answers counted in votes (not held-out
// questions', not previews') and those a design question collected.
const eraseCountsSQL = `
	SELECT (SELECT count(*) FROM questions WHERE participant_id = ANY($1))::int,
		(SELECT count(*) FROM answers WHERE participant_id = ANY($1))::int,
		(SELECT count(*) FROM trial_answers WHERE participant_id = ANY($1))::int,
		(SELECT count(*) FROM answers a JOIN questions q ON q.id = a.question_id JOIN participants p ON p.id = a.participant_id
			WHERE a.participant_id = ANY($1) AND q.design <> '` + study.DesignHeldout + `' AND NOT p.preview)::int,
		(SELECT count(*) FROM answers a JOIN questions q ON q.id = a.question_id
			WHERE a.participant_id = ANY($1) AND q.design NOT IN ('` + study.DesignHeldout + `', '` + study.DesignRandom + `'))::int`

// eraseVotesSQL takes participants $1's voting answers out of study $2's votes.
const eraseVotesSQL = `
	WITH gone AS (
		SELECT a.anchor, least(a.closer, a.farther) AS j, greatest(a.closer, a.farther) AS k,
			count(*) FILTER (WHERE a.closer < a.farther) AS jc, count(*) FILTER (WHERE a.closer > a.farther) AS kc
		FROM answers a JOIN questions q ON q.id = a.question_id JOIN participants p ON p.id = a.participant_id
		WHERE a.participant_id = ANY($1) AND q.design <> '` + study.DesignHeldout + `' AND NOT p.preview
		GROUP BY 1, 2, 3)
	UPDATE votes v SET j_closer = v.j_closer - gone.jc, k_closer = v.k_closer - gone.kc
	FROM gone WHERE v.study_id = $2 AND v.anchor = gone.anchor AND v.j = gone.j AND v.k = gone.k`

// eraseLeasesSQL gives the designs back the comparisons participants $1
// held (as a skipped question does), before their leases go.
const eraseLeasesSQL = `
	WITH l AS (DELETE FROM design_leases WHERE participant_id = ANY($1) RETURNING study_id, arm, anchor, j, k)
	UPDATE design_pool p SET taken = p.taken - 1
	FROM l WHERE p.study_id = l.study_id AND p.arm = l.arm AND p.anchor = l.anchor AND p.j = l.j AND p.k = l.k`

// eraseArmCountsSQL takes participants $1 out of study $2's counts per
// arm (arm_counts, a study with arms only), as if they had never joined:
// previews were never counted; a count never goes below zero.
const eraseArmCountsSQL = `
	UPDATE arm_counts c SET counts = (
		SELECT array_agg(greatest(c.counts[i] - coalesce(g.n, 0), 0)::int ORDER BY i)
		FROM generate_subscripts(c.counts, 1) i
		LEFT JOIN (SELECT arm, count(*) AS n FROM participants WHERE id = ANY($1) AND NOT preview GROUP BY arm) g ON g.arm + 1 = i)
	WHERE c.study_id = $2`

// ErasurePreview says what deleting the participants with the public or
// external id in the studies would remove, per study (none: no match).
func (s *Store) ErasurePreview(ctx context.Context, studyIDs []int64, id string) (_ []study.Erasure, err error) {
	defer wrap(&err, "store.ErasurePreview(%v)", studyIDs)
	es, _, err := erasureMatches(ctx, s.pool, studyIDs, id, false)
	return es, err
}

// EraseParticipant deletes the participants with the public or external
// id in the studies, in one transaction: their questions, answers, trial
// answers and tokens, their votes taken out of the studies' votes, their
// arms' participant counts lowered (so the next joins restore the arms'
// shares), their design leases given back and their answers not yet
// written to a design dropped. A design's state keeps what it learned from answers already
// written (its events); the caller recomputes the results.
func (s *Store) EraseParticipant(ctx context.Context, studyIDs []int64, id string) (_ []study.Erasure, err error) {
	defer wrap(&err, "store.EraseParticipant(%v)", studyIDs)
	var es []study.Erasure
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var ids map[int64][]int64
		es, ids, err = erasureMatches(ctx, tx, studyIDs, id, true)
		if err != nil {
			return err
		}
		for _, e := range es {
			pids := ids[e.StudyID]
			if _, err := tx.Exec(ctx, eraseVotesSQL, pids, e.StudyID); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM votes WHERE study_id = $1 AND j_closer = 0 AND k_closer = 0`, e.StudyID); err != nil {
				return err
			}
			// Before the participants' rows go (the counts are read from
			// them). A join locks arm_counts, then inserts; the insert
			// waits on one of these rows only once this transaction has
			// deleted it, which is after it holds arm_counts, so the two
			// cannot deadlock.
			if _, err := tx.Exec(ctx, eraseArmCountsSQL, pids, e.StudyID); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, eraseLeasesSQL, pids); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM design_inbox WHERE study_id = $1 AND participant_id = ANY($2)`, e.StudyID, pids); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM participants WHERE id = ANY($1)`, pids); err != nil {
				return err
			}
		}
		return nil
	})
	return es, err
}

// querier is a pool or a transaction.
type querier interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
	QueryRow(context.Context, string, ...any) pgx.Row
}

// erasureMatches finds the participants (locking their rows first when
// lock) and returns the erasures and each study's participant ids.
func erasureMatches(ctx context.Context, q querier, studyIDs []int64, id string, lock bool) ([]study.Erasure, map[int64][]int64, error) {
	if lock {
		rows, err := q.Query(ctx, `SELECT id FROM participants WHERE study_id = ANY($1) AND (public_id = $2 OR external_id = $2) ORDER BY id FOR UPDATE`, studyIDs, id)
		if err != nil {
			return nil, nil, err
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, nil, err
		}
	}
	rows, err := q.Query(ctx, eraseMatchSQL, studyIDs, id)
	if err != nil {
		return nil, nil, err
	}
	var es []study.Erasure
	ids := map[int64][]int64{}
	for rows.Next() {
		var e study.Erasure
		var pids []int64
		if err := rows.Scan(&e.StudyID, &e.StudySlug, &e.StudyTitle, &pids); err != nil {
			rows.Close()
			return nil, nil, err
		}
		e.Participants = len(pids)
		ids[e.StudyID] = pids
		es = append(es, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	for i := range es {
		e := &es[i]
		if err := q.QueryRow(ctx, eraseCountsSQL, ids[e.StudyID]).Scan(&e.Questions, &e.Answers, &e.TrialAnswers, &e.Votes, &e.DesignAnswers); err != nil {
			return nil, nil, err
		}
	}
	return es, ids, nil
}
