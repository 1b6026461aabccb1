package store

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func checkRecomputeSettings(in study.RecomputeSettings) error {
	switch {
	case in.MinNewAnswers < 1 || in.MinNewAnswers > 10_000_000:
		return study.Errorf(study.KindInvalid, "new answers before a recompute must be between 1 and 10000000")
	case in.MaxAge < 10*time.Second || in.MaxAge > 30*24*time.Hour:
		return study.Errorf(study.KindInvalid, "the longest wait between recomputes must be between 10 seconds and 30 days")
	case in.Dim < 1 || in.Dim > 10:
		return study.Errorf(study.KindInvalid, "the embedding dimensions must be between 1 and 10")
	case in.Clusters < 0 || in.Clusters > 50:
		return study.Errorf(study.KindInvalid, "clusters must be between 0 (automatic) and 50")
	case in.Trust.MaxDim < 0 || in.Trust.MaxDim > 10:
		return study.Errorf(study.KindInvalid, "the largest dimension tried must be between 0 (no dimension choice) and 10")
	case in.Trust.Folds != 0 && (in.Trust.Folds < 2 || in.Trust.Folds > 10):
		return study.Errorf(study.KindInvalid, "the cross-validation folds must be 0 (the default, 5) or between 2 and 10")
	case in.Trust.Bootstrap < 0 || in.Trust.Bootstrap == 1 || in.Trust.Bootstrap > 1000:
		return study.Errorf(study.KindInvalid, "the bootstrap replicates must be 0 (none) or between 2 and 1000")
	case !(in.Trust.TargetError >= 0 && in.Trust.TargetError < 1):
		return study.Errorf(study.KindInvalid, "the target error must be at least 0 (automatic) and below 1")
	}
	if _, err := embed.ParseMethod(in.Method); err != nil {
		return study.Errorf(study.KindInvalid, "unknown embedding method %q (known: %s)", in.Method, strings.Join(embed.MethodNames(), ", "))
	}
	return nil
}

// RecomputeSettings returns the study's dashboard settings (the defaults if
// it never set any).
func (s *Store) RecomputeSettings(ctx context.Context, studyID int64) (_ study.RecomputeSettings, err error) {
	defer wrap(&err, "store.RecomputeSettings(%d)", studyID)
	return recomputeSettings(ctx, s.pool, studyID)
}

// recomputeSettings reads the study's dashboard settings through q (the
// pool, or a snapshot's transaction).
func recomputeSettings(ctx context.Context, q Querier, studyID int64) (study.RecomputeSettings, error) {
	rs := study.DefaultRecomputeSettings()
	var ageS int
	t := &rs.Trust
	err := q.QueryRow(ctx, `
		SELECT min_new_answers, max_age_seconds, method, dim, clusters,
			trust_max_dim, trust_folds, bootstrap_reps, project, target_error
		FROM recompute_settings WHERE study_id = $1`, studyID).
		Scan(&rs.MinNewAnswers, &ageS, &rs.Method, &rs.Dim, &rs.Clusters,
			&t.MaxDim, &t.Folds, &t.Bootstrap, &t.Project, &t.TargetError)
	if errors.Is(err, pgx.ErrNoRows) {
		return rs, nil
	}
	if err != nil {
		return study.RecomputeSettings{}, err
	}
	rs.MaxAge = time.Duration(ageS) * time.Second
	return rs, nil
}

// SetRecomputeSettings stores the study's dashboard settings.
func (s *Store) SetRecomputeSettings(ctx context.Context, studyID int64, in study.RecomputeSettings) (err error) {
	defer wrap(&err, "store.SetRecomputeSettings(%d)", studyID)
	in.Method = strings.ToLower(strings.TrimSpace(in.Method))
	if err := checkRecomputeSettings(in); err != nil {
		return err
	}
	return setRecomputeSettings(ctx, s.pool, studyID, in)
}

func setRecomputeSettings(ctx context.Context, db interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, studyID int64, in study.RecomputeSettings) error {
	var id int64
	err := db.QueryRow(ctx, `
		INSERT INTO recompute_settings (study_id, min_new_answers, max_age_seconds, method, dim, clusters,
			trust_max_dim, trust_folds, bootstrap_reps, project, target_error)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (study_id) DO UPDATE SET min_new_answers = $2, max_age_seconds = $3,
			method = $4, dim = $5, clusters = $6, trust_max_dim = $7, trust_folds = $8,
			bootstrap_reps = $9, project = $10, target_error = $11, updated_at = now()
		RETURNING study_id`,
		studyID, in.MinNewAnswers, int(in.MaxAge/time.Second), in.Method, in.Dim, in.Clusters,
		in.Trust.MaxDim, in.Trust.Folds, in.Trust.Bootstrap, in.Trust.Project, in.Trust.TargetError).Scan(&id)
	if isForeignKey(err) {
		return study.NotFound("study")
	}
	return err
}

// isForeignKey reports whether err is a foreign-key violation.
func isForeignKey(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23503"
}

const runCols = `id, study_id, coalesce(job_id, 0), status, stage, started_at, finished_at, coalesce(duration_ms, 0),
	answers, items, settings, train_error, heldout_error, heldout_answers, error`

func scanRun(row pgx.Row) (study.Run, error) {
	var r study.Run
	var ms int64
	err := row.Scan(&r.ID, &r.StudyID, &r.JobID, &r.Status, &r.Stage, &r.StartedAt, &r.FinishedAt, &ms,
		&r.Answers, &r.Items, &r.Settings, &r.TrainError, &r.HeldoutError, &r.HeldoutAnswers, &r.Error)
	r.Duration = time.Duration(ms) * time.Millisecond
	return r, err
}

// StartRun records that a run of the study began (status running) with the
// number of answers and items it uses and its settings (any JSON value). A
// study being deleted is KindNotFound.
func (s *Store) StartRun(ctx context.Context, studyID, jobID int64, answers, items int, settings any) (_ int64, err error) {
	defer wrap(&err, "store.StartRun(%d, %d, %d, %d)", studyID, jobID, answers, items)
	js, err := json.Marshal(settings)
	if err != nil {
		return 0, err
	}
	var id int64
	err = s.pool.QueryRow(ctx, `
		INSERT INTO recompute_runs (study_id, job_id, answers, items, settings)
		SELECT $1, nullif($2, 0), $3, $4, $5
		WHERE EXISTS (SELECT FROM studies WHERE id = $1 AND deleted_at IS NULL)
		RETURNING id`, studyID, jobID, answers, items, js).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, study.NotFound("study")
	}
	if err != nil {
		return 0, err
	}
	return id, nil
}

// SetRunStage records the stage a running run is in (its progress).
func (s *Store) SetRunStage(ctx context.Context, runID int64, stage string) (err error) {
	defer wrap(&err, "store.SetRunStage(%d, %q)", runID, stage)
	_, err = s.pool.Exec(ctx, `UPDATE recompute_runs SET stage = $2 WHERE id = $1 AND status = 'running'`, runID, stage)
	return err
}

// FinishRun records how a run ended.
func (s *Store) FinishRun(ctx context.Context, runID int64, o study.RunOutcome) (err error) {
	defer wrap(&err, "store.FinishRun(%d, %q)", runID, o.Status)
	_, err = s.pool.Exec(ctx, `
		UPDATE recompute_runs SET status = $2, finished_at = now(), duration_ms = $3,
			train_error = $4, heldout_error = $5, error = $6, result = $7, stage = '', heldout_answers = nullif($8, 0)
		WHERE id = $1`, runID, o.Status, o.Duration.Milliseconds(), o.TrainError, o.HeldoutError, o.Error, o.Result, o.HeldoutAnswers)
	return err
}

// LatestRun returns the study's most recent run of any status, or nil.
func (s *Store) LatestRun(ctx context.Context, studyID int64) (_ *study.Run, err error) {
	defer wrap(&err, "store.LatestRun(%d)", studyID)
	r, err := scanRun(s.pool.QueryRow(ctx, `SELECT `+runCols+` FROM recompute_runs WHERE study_id = $1 ORDER BY id DESC LIMIT 1`, studyID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// LatestResult returns the study's most recent finished (done) run and its
// encoded results, or nil.
func (s *Store) LatestResult(ctx context.Context, studyID int64) (_ *study.Run, _ []byte, err error) {
	defer wrap(&err, "store.LatestResult(%d)", studyID)
	var blob []byte
	var r study.Run
	var ms int64
	err = s.pool.QueryRow(ctx, `SELECT `+runCols+`, result FROM recompute_runs
		WHERE study_id = $1 AND status = 'done' ORDER BY id DESC LIMIT 1`, studyID).
		Scan(&r.ID, &r.StudyID, &r.JobID, &r.Status, &r.Stage, &r.StartedAt, &r.FinishedAt, &ms,
			&r.Answers, &r.Items, &r.Settings, &r.TrainError, &r.HeldoutError, &r.HeldoutAnswers, &r.Error, &blob)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	r.Duration = time.Duration(ms) * time.Millisecond
	return &r, blob, nil
}

// Runs returns the study's runs in order (without their results), for the
// learning curve.
func (s *Store) Runs(ctx context.Context, studyID int64) (_ []study.Run, err error) {
	defer wrap(&err, "store.Runs(%d)", studyID)
	rows, err := s.pool.Query(ctx, `SELECT `+runCols+` FROM recompute_runs WHERE study_id = $1 ORDER BY id`, studyID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (study.Run, error) { return scanRun(r) })
}

// The SQL of DueStudies and RunAnswers, by name so that TestHotQueryPlans
// explains these very strings on a large study.
const (
	// dueStudiesSQL: the open studies (not being deleted) with new answers
	// since their last run, due by count ($1 by default) or by age ($2
	// seconds by default).
	dueStudiesSQL = `
		SELECT s.id
		FROM studies s
		LEFT JOIN recompute_settings rs ON rs.study_id = s.id
		LEFT JOIN LATERAL (SELECT r.started_at FROM recompute_runs r WHERE r.study_id = s.id
			ORDER BY r.id DESC LIMIT 1) last ON true
		CROSS JOIN LATERAL (SELECT count(*) AS n FROM answers a WHERE a.study_id = s.id
			AND a.answered_at > coalesce(last.started_at, '-infinity')
			AND a.participant_id <> ALL (ARRAY(SELECT id FROM participants WHERE study_id = s.id AND preview))) fresh
		WHERE s.status = 'open' AND s.deleted_at IS NULL AND fresh.n > 0
			AND (last.started_at IS NULL
				OR fresh.n >= coalesce(rs.min_new_answers, $1)
				OR last.started_at <= now() - make_interval(secs => coalesce(rs.max_age_seconds, $2)))
		ORDER BY s.id`
	// runAnswersSQL: a.closer = q.left_idx says whether the closer item
	// was the question's left option.
	runAnswersSQL = `
		SELECT a.question_id, a.participant_id, p.public_id, p.excluded_at IS NOT NULL,
			a.anchor, a.closer, a.farther, coalesce(a.response_ms, -1), a.answered_at,
			a.closer = q.left_idx AND a.choices IS NULL, q.design, p.arm, q.options, a.choices
		FROM answers a JOIN participants p ON p.id = a.participant_id JOIN questions q ON q.id = a.question_id
		WHERE a.study_id = $1 AND ($2 OR p.excluded_at IS NULL) AND NOT p.preview
		ORDER BY a.answered_at, a.question_id`
)

// DueStudies returns the open studies whose recompute is due at now: at
// least min_new_answers answers since the last run started, or any new
// answer and max_age since it (any answer at all when it never ran).
func (s *Store) DueStudies(ctx context.Context) (_ []int64, err error) {
	defer wrap(&err, "store.DueStudies()")
	d := study.DefaultRecomputeSettings()
	rows, err := s.pool.Query(ctx, dueStudiesSQL, d.MinNewAnswers, int(d.MaxAge/time.Second))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// RunAnswers returns the study's answers in answer order; those of excluded
// participants only when includeExcluded. An odd-one-out or rank trial's
// answer is the triplets it derives (derivedTriplets), one after the
// other, the first with the trial's response time and the others with
// none (-1), so that response times count each trial once.
func (s *Store) RunAnswers(ctx context.Context, studyID int64, includeExcluded bool) (_ []study.RunAnswer, err error) {
	defer wrap(&err, "store.RunAnswers(%d, %t)", studyID, includeExcluded)
	rows, err := s.pool.Query(ctx, runAnswersSQL, studyID, includeExcluded)
	if err != nil {
		return nil, err
	}
	var out []study.RunAnswer
	var a study.RunAnswer
	var options, choices []int
	_, err = pgx.ForEachRow(rows, []any{&a.QuestionID, &a.Participant, &a.PublicID, &a.Excluded,
		&a.Anchor, &a.Closer, &a.Farther, &a.ResponseMS, &a.AnsweredAt, &a.ChoseLeft, &a.Design, &a.Arm, &options, &choices}, func() error {
		derived := derivedTriplets(a.Anchor, options, choices)
		if derived == nil {
			out = append(out, a)
			return nil
		}
		d := a
		d.Options, d.Choices = slices.Clone(options), slices.Clone(choices)
		for i, t := range derived {
			d.Anchor, d.Closer, d.Farther = t.Anchor, t.Closer, t.Farther
			if i > 0 {
				d.ResponseMS = -1
			}
			out = append(out, d)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// LatestDoneRun returns the study's most recent finished (done) run
// without its results, or nil.
func (s *Store) LatestDoneRun(ctx context.Context, studyID int64) (_ *study.Run, err error) {
	defer wrap(&err, "store.LatestDoneRun(%d)", studyID)
	r, err := scanRun(s.pool.QueryRow(ctx, `SELECT `+runCols+` FROM recompute_runs
		WHERE study_id = $1 AND status = 'done' ORDER BY id DESC LIMIT 1`, studyID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// RunResult returns a run's encoded results (nil if it has none).
func (s *Store) RunResult(ctx context.Context, runID int64) (_ []byte, err error) {
	defer wrap(&err, "store.RunResult(%d)", runID)
	var blob []byte
	err = s.pool.QueryRow(ctx, `SELECT result FROM recompute_runs WHERE id = $1`, runID).Scan(&blob)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, study.NotFound("run")
	}
	if err != nil {
		return nil, err
	}
	return blob, nil
}
