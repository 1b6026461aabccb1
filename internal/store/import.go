package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/closer-lab/closer/internal/secret"
	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Importing a study: the file formats (internal/studyfile) read a file
// into rows, the store stores them. ImportStudy gives the format one
// transaction (an ImportTx) for the whole study, so a row refused anywhere,
// by the format or by the database, stores nothing.

// ImportStudy runs f in one transaction in which f creates a study and
// stores its rows through imp: first CreateStudy, then the settings, the
// items, the arms (SetArms, which checks them against the items), the
// participants and last their answers. Everything is committed
// when f returns nil and nothing is stored otherwise; f's error is returned
// as it is (the ImportTx's methods name themselves in theirs), those of the
// transaction itself wrapped.
func (s *Store) ImportStudy(ctx context.Context, f func(imp study.ImportWriter) error) error {
	var ferr error
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		ferr = f(&ImportTx{s: s, ctx: ctx, tx: tx})
		return ferr
	})
	if err != ferr {
		wrap(&err, "store.ImportStudy()")
	}
	return err
}

// The methods of an ImportTx return their refusals of a step out of order
// ("import: ...") and the reader's own error (a RowSource's Err) as they
// are, and wrap the others.

// wrapCopy is wrap for a copy from a RowSource whose Err is readErr: the
// reader's own error comes back as it is, for the caller to tell it from
// the database's.
func wrapCopy(errp *error, readErr func() error, format string, args ...any) {
	if *errp != nil && *errp != readErr() {
		wrap(errp, format, args...)
	}
}

// ImportTx is the transaction of one ImportStudy. Its methods are not safe
// for concurrent use and only valid within f.
type ImportTx struct {
	s            *Store
	ctx          context.Context
	tx           pgx.Tx
	study        study.Study
	participants bool // CopyParticipants ran: import_participants exists
}

// CreateStudy checks in like CreateStudy does (not its design settings;
// the arms come later, SetArms) and creates the study; a taken slug is a
// KindConflict error.
func (imp *ImportTx) CreateStudy(in study.StudyInput) (_ study.Study, err error) {
	if imp.study.ID != 0 {
		return study.Study{}, errors.New("import: the study is created once")
	}
	if len(in.Arms) > 0 {
		return study.Study{}, errors.New("import: give the arms to SetArms, once the items are in")
	}
	defer wrap(&err, "store.ImportTx.CreateStudy(%q)", in.Slug)
	if err := imp.s.check(&in); err != nil {
		return study.Study{}, err
	}
	st, err := insertStudy(imp.ctx, imp.tx, in)
	if err != nil {
		return study.Study{}, err
	}
	imp.study = st
	return st, nil
}

// SlugTaken reports whether a study has the slug, in the import's
// transaction (a study created since is still a KindConflict error of
// CreateStudy).
func (imp *ImportTx) SlugTaken(slug string) (_ bool, err error) {
	defer wrap(&err, "store.ImportTx.SlugTaken(%q)", slug)
	var taken bool
	err = imp.tx.QueryRow(imp.ctx, slugTakenSQL, slug).Scan(&taken)
	return taken, err
}

// slugTakenSQL: a study with the slug $1, by the slug's unique index.
const slugTakenSQL = `SELECT EXISTS (SELECT 1 FROM studies WHERE slug = $1)`

// Study is the study as created and given its arms so far.
func (imp *ImportTx) Study() study.Study { return imp.study }

// studyID is the created study's id, or an error before CreateStudy.
func (imp *ImportTx) studyID() (int64, error) {
	if imp.study.ID == 0 {
		return 0, errors.New("import: create the study first")
	}
	return imp.study.ID, nil
}

// SetRecomputeSettings checks and stores the study's dashboard settings.
func (imp *ImportTx) SetRecomputeSettings(rs study.RecomputeSettings) (err error) {
	id, err := imp.studyID()
	if err != nil {
		return err
	}
	defer wrap(&err, "store.ImportTx.SetRecomputeSettings()")
	if err := checkRecomputeSettings(rs); err != nil {
		return err
	}
	return setRecomputeSettings(imp.ctx, imp.tx, id, rs)
}

// SetDesignConfig stores the design's settings as they are: raw is the
// JSON of a DesignConfig, which the caller checked (unknown fields are
// kept).
func (imp *ImportTx) SetDesignConfig(raw json.RawMessage) (err error) {
	id, err := imp.studyID()
	if err != nil {
		return err
	}
	defer wrap(&err, "store.ImportTx.SetDesignConfig()")
	_, err = imp.tx.Exec(imp.ctx, `UPDATE studies SET design_config = $2, version = version + 1 WHERE id = $1`, id, raw)
	return err
}

// SetArms checks the study's arms against its items (CopyItems first) as
// a study's arms are checked, and stores them: the study's design and
// design settings become the first arm's. Nil or empty: no arms.
func (imp *ImportTx) SetArms(arms []study.Arm) (err error) {
	id, err := imp.studyID()
	if err != nil {
		return err
	}
	if imp.participants {
		return errors.New("import: set the arms before the participants")
	}
	defer wrap(&err, "store.ImportTx.SetArms(%d arms)", len(arms))
	if len(arms) == 0 {
		return nil
	}
	labels, err := ItemLabels(imp.ctx, imp.tx, id)
	if err != nil {
		return err
	}
	if len(labels) == 0 {
		labels = nil
	}
	if err := study.CheckArms(arms, labels); err != nil {
		return err
	}
	if err := imp.s.checkArmDesigns(arms); err != nil {
		return err
	}
	if _, err := imp.tx.Exec(imp.ctx, `UPDATE studies SET arms = $2, design = $3, design_config = $4, version = version + 1 WHERE id = $1`,
		id, arms, arms[0].Design, arms[0].Config); err != nil {
		return err
	}
	imp.study.Arms, imp.study.Design = arms, arms[0].Design
	return nil
}

// CopyItems stores the study's items as rows gives them and returns how
// many. An index or image (sha256) that repeats an earlier one is a
// *RepeatedRowError.
func (imp *ImportTx) CopyItems(rows study.RowSource[study.ImportItem]) (_ int, err error) {
	id, err := imp.studyID()
	if err != nil {
		return 0, err
	}
	defer wrapCopy(&err, rows.Err, "store.ImportTx.CopyItems()")
	n, err := imp.tx.CopyFrom(imp.ctx, pgx.Identifier{"items"},
		[]string{"study_id", "idx", "kind", "label", "file_name", "content_type", "sha256", "width", "height", "data", "text"},
		copySource(rows, func(it study.ImportItem) []any {
			kind, text := it.Kind, (*string)(nil)
			if kind == "" {
				kind = study.ItemImage
			}
			if kind == study.ItemText {
				text = &it.Text
			}
			return []any{id, it.Index, string(kind), it.Label, it.FileName, it.ContentType, it.SHA256, it.Width, it.Height, it.Data, text}
		}))
	if rerr := rows.Err(); rerr != nil {
		return 0, rerr
	}
	if err != nil {
		return 0, repeated("items", err)
	}
	if err := checkKinds(imp.ctx, imp.tx, id); err != nil {
		return 0, err
	}
	return int(n), nil
}

// CopyParticipants stores the study's participants, in the order rows
// gives them, and returns how many, and counts them per arm. A key that
// repeats an earlier one is a *RepeatedRowError; an arm the study does not
// have is a KindInvalid error.
func (imp *ImportTx) CopyParticipants(rows study.RowSource[study.ImportParticipant]) (_ int, err error) {
	id, err := imp.studyID()
	if err != nil {
		return 0, err
	}
	if imp.participants {
		return 0, errors.New("import: participants are copied once")
	}
	defer wrapCopy(&err, rows.Err, "store.ImportTx.CopyParticipants()")
	// The key column is named bundle_id: PostgreSQL's detail of a repeated
	// key names it, and that detail is shown to the user.
	if _, err := imp.tx.Exec(imp.ctx, `CREATE TEMP TABLE import_keys (
			line int NOT NULL, bundle_id text PRIMARY KEY, public_id text NOT NULL, token_hash bytea NOT NULL,
			external_id text NOT NULL, completion_code text NOT NULL,
			created_at timestamptz NOT NULL, completed_at timestamptz, excluded_at timestamptz, arm int NOT NULL) ON COMMIT DROP`); err != nil {
		return 0, err
	}
	line := 0
	_, err = imp.tx.CopyFrom(imp.ctx, pgx.Identifier{"import_keys"},
		[]string{"line", "bundle_id", "public_id", "token_hash", "external_id", "completion_code", "created_at", "completed_at", "excluded_at", "arm"},
		copySource(rows, func(p study.ImportParticipant) []any {
			line++
			return []any{line, p.Key, secret.NewID(), secret.Hash(secret.NewToken()), p.ExternalID, p.CompletionCode, p.CreatedAt, p.CompletedAt, p.ExcludedAt, p.Arm}
		}))
	if rerr := rows.Err(); rerr != nil {
		return 0, rerr
	}
	if err != nil {
		return 0, repeated("participants", err)
	}
	arms := max(len(imp.study.Arms), 1)
	var badLine, badArm int
	err = imp.tx.QueryRow(imp.ctx, `SELECT line, arm FROM import_keys WHERE arm < 0 OR arm >= $1 ORDER BY line LIMIT 1`, arms).Scan(&badLine, &badArm)
	if err == nil {
		return 0, study.Errorf(study.KindInvalid, "participant %d: arm %d, but the study has %d arm(s)", badLine, badArm, arms)
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return 0, err
	}
	tag, err := imp.tx.Exec(imp.ctx, `
		INSERT INTO participants (public_id, study_id, token_hash, external_id, completion_code, created_at, completed_at, excluded_at,
			arm, external_key)
		SELECT public_id, $1, token_hash, nullif(external_id, ''), nullif(completion_code, ''), created_at, completed_at, excluded_at, arm,
			-- one participant per external id resumes (CreateParticipant):
			-- of a bundle's repeats of one id, the first that completed
			CASE WHEN external_id <> '' AND row_number() OVER (PARTITION BY external_id ORDER BY completed_at IS NULL, line) = 1
				THEN external_id END
		FROM import_keys ORDER BY line`, id)
	if err != nil {
		return 0, err
	}
	if _, err := imp.tx.Exec(imp.ctx, `
		CREATE TEMP TABLE import_participants ON COMMIT DROP AS
		SELECT k.bundle_id AS key, p.id AS participant_id
		FROM import_keys k JOIN participants p ON p.public_id = k.public_id`); err != nil {
		return 0, err
	}
	if len(imp.study.Arms) > 0 {
		if err := countArms(imp.ctx, imp.tx, id, len(imp.study.Arms)); err != nil {
			return 0, err
		}
	}
	imp.participants = true
	return int(tag.RowsAffected()), nil
}

// CopyAnswers stores the study's answers with their questions, in the
// order rows gives them (into a temporary table first, as they are read),
// rebuilds the study's vote counts (held-out answers left out, as they are
// when answered) and returns how many answers. Each
// answer's participant must be a key CopyParticipants stored (else an
// *UnknownParticipantError); a comparison one participant answered twice is
// a *RepeatedRowError.
func (imp *ImportTx) CopyAnswers(rows study.RowSource[study.ImportAnswer]) (_ int, err error) {
	studyID, err := imp.studyID()
	if err != nil {
		return 0, err
	}
	if !imp.participants {
		return 0, errors.New("import: copy the participants before their answers")
	}
	defer wrapCopy(&err, rows.Err, "store.ImportTx.CopyAnswers()")
	ctx, tx := imp.ctx, imp.tx
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE import_answers (
			line int NOT NULL, qid text NOT NULL, participant text NOT NULL,
			anchor int NOT NULL, left_idx int NOT NULL, right_idx int NOT NULL, closer int NOT NULL, farther int NOT NULL,
			design text NOT NULL, response_ms int, asked_at timestamptz NOT NULL, answered_at timestamptz NOT NULL,
			options int[], choices int[], question_anchor int) ON COMMIT DROP`); err != nil {
		return 0, err
	}
	n, err := tx.CopyFrom(ctx, pgx.Identifier{"import_answers"},
		[]string{"line", "qid", "participant", "anchor", "left_idx", "right_idx", "closer", "farther", "design", "response_ms", "asked_at", "answered_at",
			"options", "choices", "question_anchor"},
		copySource(rows, func(a study.ImportAnswer) []any {
			return []any{a.Line, secret.NewID(), a.Participant, a.Anchor, a.Left, a.Right, a.Closer, a.Farther, a.Design, a.ResponseMS, a.AskedAt, a.AnsweredAt,
				a.Options, a.Choices, a.QuestionAnchor}
		}))
	if rerr := rows.Err(); rerr != nil {
		return 0, rerr
	}
	if err != nil {
		return 0, fmt.Errorf("answers: %w", err)
	}
	if _, err := tx.Exec(ctx, `ANALYZE import_answers`); err != nil {
		return 0, err
	}
	var line int
	var who string
	err = tx.QueryRow(ctx, `SELECT a.line, a.participant FROM import_answers a
		WHERE NOT EXISTS (SELECT 1 FROM import_participants p WHERE p.key = a.participant)
		ORDER BY a.line LIMIT 1`).Scan(&line, &who)
	if err == nil {
		return 0, &study.UnknownParticipantError{Line: line, Key: who}
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design, issued_at, options)
		SELECT a.qid, $1, p.participant_id, coalesce(a.question_anchor, a.anchor), a.left_idx, a.right_idx, a.design, a.asked_at, a.options
		FROM import_answers a JOIN import_participants p ON p.key = a.participant ORDER BY a.line`, studyID); err != nil {
		if isUnique(err) {
			return 0, repeated("questions", err)
		}
		return 0, fmt.Errorf("questions: %w", err)
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO answers (question_id, study_id, participant_id, anchor, closer, farther, response_ms, answered_at, choices)
		SELECT a.qid, $1, p.participant_id, a.anchor, a.closer, a.farther, a.response_ms, a.answered_at, a.choices
		FROM import_answers a JOIN import_participants p ON p.key = a.participant ORDER BY a.line`, studyID); err != nil {
		return 0, fmt.Errorf("answers: %w", err)
	}
	if _, err := tx.Exec(ctx, `
		UPDATE participants p SET answered = c.n
		FROM (SELECT participant_id, count(*)::int AS n FROM answers WHERE study_id = $1 GROUP BY participant_id) c
		WHERE p.id = c.participant_id`, studyID); err != nil {
		return 0, fmt.Errorf("participants' answers: %w", err)
	}
	if _, err := tx.Exec(ctx, importVotesSQL, studyID); err != nil {
		return 0, fmt.Errorf("votes: %w", err)
	}
	return int(n), nil
}

// importVotesSQL counts the votes of study $1's answers: a triplet's, and
// every triplet a trial derives (trial.OddOneOut.Triplets: each of the two
// items not chosen is closer to the other than to the odd one;
// trial.Rank.Triplets: for each choice in order, the query's triplet
// against every option ranked below it, the later choices and then the
// options not chosen in display order).
const importVotesSQL = `
	WITH t AS (
		SELECT a.anchor, a.closer, a.farther FROM answers a JOIN questions q ON q.id = a.question_id
		WHERE a.study_id = $1 AND q.design <> 'heldout' AND a.choices IS NULL
		UNION ALL
		SELECT x, y, a.choices[1] FROM answers a JOIN questions q ON q.id = a.question_id,
			unnest(q.options) x, unnest(q.options) y
		WHERE a.study_id = $1 AND q.design <> 'heldout' AND cardinality(a.choices) = 1
			AND x <> y AND x <> a.choices[1] AND y <> a.choices[1]
		UNION ALL
		SELECT o.anchor, o.ordered[r], o.ordered[s] FROM (
			SELECT a.anchor, cardinality(a.choices) AS k, a.choices || ARRAY(
				SELECT u.x FROM unnest(q.options) WITH ORDINALITY u(x, i) WHERE u.x <> ALL (a.choices) ORDER BY u.i) AS ordered
			FROM answers a JOIN questions q ON q.id = a.question_id
			WHERE a.study_id = $1 AND q.design <> 'heldout' AND cardinality(a.choices) >= 2) o,
			generate_series(1, o.k) r, generate_series(r + 1, cardinality(o.ordered)) s)
	INSERT INTO votes (study_id, anchor, j, k, j_closer, k_closer)
	SELECT $1, anchor, least(closer, farther), greatest(closer, farther),
		count(*) FILTER (WHERE closer < farther), count(*) FILTER (WHERE closer > farther)
	FROM t GROUP BY anchor, least(closer, farther), greatest(closer, farther)`

// repeated turns a unique violation into a *RepeatedRowError on rows and
// passes other errors on.
func repeated(rows string, err error) error {
	var pe *pgconn.PgError
	if isUnique(err) && errors.As(err, &pe) {
		return &study.RepeatedRowError{Rows: rows, Detail: pe.Detail}
	}
	return err
}

// copySource turns rows into a pgx.CopyFromSource (COPY pulls one row at a
// time, so memory does not grow with the file).
func copySource[T any](rows study.RowSource[T], values func(T) []any) pgx.CopyFromSource {
	return &copyRows[T]{rows: rows, values: values}
}

type copyRows[T any] struct {
	rows   study.RowSource[T]
	values func(T) []any
}

func (c *copyRows[T]) Next() bool { return c.rows.Next() }

func (c *copyRows[T]) Values() ([]any, error) { return c.values(c.rows.Value()), nil }

func (c *copyRows[T]) Err() error { return c.rows.Err() }
