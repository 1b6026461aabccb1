package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgx/v5"
)

// Arms (issue 16): a study may run several designs at once, each an arm
// with a share of the participants. A participant is assigned to one arm
// when they join (CreateParticipant, by design.NextArm over the counts of
// participants per arm so far) and keeps it, so all their questions come
// from one design and the arms' crowds are comparable; the export's arm
// column says which arm each answer's participant was in. A study without
// arms (Study.Arms empty) has one implicit arm 0, its Design with its
// DesignConfig, named after the design.
//
// Each stateful arm keeps a design state of its own (design_states and the
// other design tables are keyed by (study, arm)), so two arms never see
// each other's answers, pools or leases; a participant's design questions
// and their answers go to their arm's design alone.

// checkArmDesigns refuses an arm whose stateful design this store does not
// run (checkArms refuses the names of no design at all).
func (s *Store) checkArmDesigns(arms []study.Arm) error {
	for _, a := range arms {
		if study.IsStateful(a.Design) && !s.knownDesign(a.Design) {
			return study.Errorf(study.KindInvalid, "arm %s: the design %q is not available (known: %s)", a.Name, a.Design, strings.Join(s.Designs(), ", "))
		}
	}
	return nil
}

// StudyArms returns the arms study studyID runs (ArmsOf).
func (s *Store) StudyArms(ctx context.Context, studyID int64) (_ []study.Arm, err error) {
	defer wrap(&err, "store.StudyArms(%d)", studyID)
	st, err := s.StudyByID(ctx, studyID)
	if err != nil {
		return nil, err
	}
	cfg, err := s.DesignConfigOf(ctx, studyID)
	if err != nil {
		return nil, err
	}
	return study.ArmsOf(st, cfg), nil
}

// armsJSON is a study's arms as stored (studies.arms): never NULL.
func armsJSON(arms []study.Arm) []study.Arm {
	if arms == nil {
		return []study.Arm{}
	}
	return arms
}

// armsChanged reports whether two lists of arms differ in what the
// designs use.
func armsChanged(old, arms []study.Arm) bool {
	if len(old) == 0 && len(arms) == 0 {
		return false
	}
	a, _ := json.Marshal(old)
	b, _ := json.Marshal(arms)
	return string(a) != string(b)
}

// shares returns the arms' shares.
func shares(arms []study.Arm) []float64 {
	out := make([]float64, len(arms))
	for i, a := range arms {
		out[i] = a.Share
	}
	return out
}

// The SQL of the arms' assignment, by name so that TestHotQueryPlans
// explains these very strings on a large study.
const (
	// lockArmCountsSQL locks study $1's participant counts per arm for the
	// join's transaction (a study with arms has the row).
	lockArmCountsSQL = `SELECT counts FROM arm_counts WHERE study_id = $1 FOR UPDATE`
	// JoinArmSQL is joinSQL for a study with arms: the participant goes to
	// arm $6, which counts them (nothing when the external id resumes).
	JoinArmSQL = `
		WITH p AS (
			INSERT INTO participants (public_id, study_id, token_hash, external_id, external_key, platform_params, last_active_at, arm)
			VALUES ($1, $2, $3, nullif($4, ''), nullif($4, ''), $5, now(), $6)
			ON CONFLICT (study_id, external_key) DO NOTHING
			RETURNING id, created_at),
		c AS (
			UPDATE arm_counts SET counts[$6 + 1] = counts[$6 + 1] + 1
			WHERE study_id = $2 AND EXISTS (SELECT FROM p))
		SELECT id, created_at FROM p`
)

// NextArm locks the study's arm counts in tx and returns the arm the next
// new participant goes to.
func NextArm(ctx context.Context, tx pgx.Tx, studyID int64, arms []study.Arm) (int, error) {
	var counts []int32
	err := tx.QueryRow(ctx, lockArmCountsSQL, studyID).Scan(&counts)
	if errors.Is(err, pgx.ErrNoRows) {
		// Not created with the arms (cannot happen through the store):
		// create the counts from the participants.
		if err := countArms(ctx, tx, studyID, len(arms)); err != nil {
			return 0, err
		}
		err = tx.QueryRow(ctx, lockArmCountsSQL, studyID).Scan(&counts)
	}
	if err != nil {
		return 0, err
	}
	c := make([]int, len(arms))
	for i := range c {
		if i < len(counts) {
			c[i] = int(counts[i])
		}
	}
	return design.NextArm(shares(arms), c), nil
}

// countArms writes study's arm_counts row (n arms) from its participants.
func countArms(ctx context.Context, tx pgx.Tx, studyID int64, n int) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO arm_counts (study_id, counts)
		SELECT $1, array_agg(coalesce(c.n, 0)::int ORDER BY a)
		FROM generate_series(0, $2 - 1) a
		LEFT JOIN (SELECT arm, count(*) AS n FROM participants WHERE study_id = $1 AND NOT preview GROUP BY arm) c ON c.arm = a
		ON CONFLICT (study_id) DO UPDATE SET counts = excluded.counts`, studyID, n)
	return err
}

// assignArms sets a study's arms in tx: the arm counts row (none without
// arms), and the participants who joined before (a study whose arms change
// before its first question) assigned again, in the order they joined, as
// if they joined now.
func assignArms(ctx context.Context, tx pgx.Tx, studyID int64, arms []study.Arm) error {
	if _, err := tx.Exec(ctx, `DELETE FROM arm_counts WHERE study_id = $1`, studyID); err != nil {
		return err
	}
	if len(arms) == 0 {
		_, err := tx.Exec(ctx, `UPDATE participants SET arm = 0 WHERE study_id = $1 AND arm <> 0`, studyID)
		return err
	}
	rows, err := tx.Query(ctx, `SELECT id FROM participants WHERE study_id = $1 AND NOT preview ORDER BY id`, studyID)
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	counts := make([]int, len(arms))
	assigned := make([]int16, len(ids))
	sh := shares(arms)
	for i := range ids {
		a := design.NextArm(sh, counts)
		counts[a]++
		assigned[i] = int16(a)
	}
	if len(ids) > 0 {
		if _, err := tx.Exec(ctx, `
			UPDATE participants p SET arm = u.arm FROM unnest($2::bigint[], $3::smallint[]) AS u(id, arm)
			WHERE p.study_id = $1 AND p.id = u.id`, studyID, ids, assigned); err != nil {
			return err
		}
	}
	c32 := make([]int32, len(counts))
	for i, c := range counts {
		c32[i] = int32(c)
	}
	_, err = tx.Exec(ctx, `INSERT INTO arm_counts (study_id, counts) VALUES ($1, $2)`, studyID, c32)
	return err
}
