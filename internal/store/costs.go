package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/study"
)

// measuredPaceSQL is the median seconds between a participant's
// consecutive answers among study $1's latest $3 answers (answered_at
// apart; gaps over $2 seconds, a break, left out) and how many gaps it is
// measured on: the pace of the study's own crowd, reading included.
// Excluded participants and previews are left out. The latest answers
// alone, read backwards through answers_study_seq, keep it cheap on every
// page that shows it, however large the study.
const measuredPaceSQL = `
	SELECT coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY gap), 0), count(*)
	FROM (
		SELECT extract(epoch FROM answered_at - lag(answered_at) OVER (PARTITION BY participant_id ORDER BY answered_at)) AS gap
		FROM (
			SELECT a.participant_id, a.answered_at
			FROM answers a JOIN participants p ON p.id = a.participant_id
			WHERE a.study_id = $1 AND p.excluded_at IS NULL AND NOT p.preview
			ORDER BY a.seq DESC LIMIT $3
		) recent
	) g
	WHERE gap > 0 AND gap <= $2`

// PaceAnswers is how many of a study's latest answers measure its pace.
const PaceAnswers = 5000

// MaxPaceGap is the longest gap between two answers that measures the
// pace (seconds); longer ones are breaks.
const MaxPaceGap = 600

// StudyCosts returns the study's costs (study.DefaultCosts before they
// were set).
func (s *Store) StudyCosts(ctx context.Context, studyID int64) (_ study.Costs, err error) {
	defer wrap(&err, "store.StudyCosts(%d)", studyID)
	c := study.DefaultCosts()
	err = s.pool.QueryRow(ctx, `SELECT pay_per_hour, currency, seconds_per_question FROM study_costs WHERE study_id = $1`, studyID).
		Scan(&c.PayPerHour, &c.Currency, &c.SecondsPerQuestion)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, nil
	}
	return c, err
}

// SetStudyCosts stores the study's costs.
func (s *Store) SetStudyCosts(ctx context.Context, studyID int64, c study.Costs) (err error) {
	defer wrap(&err, "store.SetStudyCosts(%d)", studyID)
	if !c.Valid() {
		return study.Errorf(study.KindInvalid, "the pay per hour must be between 0 and 10,000, the currency 1 to 8 characters and the seconds per question between 0 and 3,600")
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO study_costs (study_id, pay_per_hour, currency, seconds_per_question) VALUES ($1, $2, $3, $4)
		ON CONFLICT (study_id) DO UPDATE SET pay_per_hour = $2, currency = $3, seconds_per_question = $4`,
		studyID, c.PayPerHour, c.Currency, c.SecondsPerQuestion)
	return err
}

// MeasuredPace returns the median seconds between consecutive answers of
// a participant of the study, among its latest PaceAnswers answers
// (measuredPaceSQL), and the number of gaps it
// was measured on (0: none yet).
func (s *Store) MeasuredPace(ctx context.Context, studyID int64) (_ float64, _ int, err error) {
	defer wrap(&err, "store.MeasuredPace(%d)", studyID)
	var sec float64
	var n int
	err = s.pool.QueryRow(ctx, measuredPaceSQL, studyID, MaxPaceGap, PaceAnswers).Scan(&sec, &n)
	return sec, n, err
}
