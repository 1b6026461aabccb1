package store

import (
	"context"
	"errors"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgx/v5"
)

var slugRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`)

// check normalises in and returns a user-facing error naming the first rule
// it breaks.
func (s *Store) check(in *study.StudyInput) error {
	in.Slug = strings.TrimSpace(in.Slug)
	in.Title = strings.TrimSpace(in.Title)
	if in.Status == "" {
		in.Status = study.StatusDraft
	}
	if in.SoundMaxSeconds == 0 {
		in.SoundMaxSeconds = study.DefaultSoundMaxSeconds
	}
	if in.Design == "" {
		in.Design = study.DesignRandom
	}
	switch {
	case in.Title == "":
		return study.Errorf(study.KindInvalid, "the title is empty")
	case len(in.Title) > 200:
		return study.Errorf(study.KindInvalid, "the title is longer than 200 characters")
	case !slugRE.MatchString(in.Slug):
		return study.Errorf(study.KindInvalid, "the URL slug %q must be 1 to 64 lower-case letters, digits and inner dashes", in.Slug)
	case in.QuestionsPerParticipant < 1 || in.QuestionsPerParticipant > 100000:
		return study.Errorf(study.KindInvalid, "questions per participant must be between 1 and 100000")
	case in.SoundMaxSeconds < 0 || in.SoundMaxSeconds > study.MaxSoundMaxSeconds:
		return study.Errorf(study.KindInvalid, "the longest sound must be between 1 and %d seconds", study.MaxSoundMaxSeconds)
	case in.MinViewMS < 0 || in.MinViewMS > 60_000:
		return study.Errorf(study.KindInvalid, "the minimum viewing time must be between 0 and 60000 ms")
	case in.Quota.MaxParticipants < 0 || in.Quota.MaxParticipants > 1_000_000:
		return study.Errorf(study.KindInvalid, "the participant limit must be between 0 (no limit) and 1000000")
	case in.Quota.IdleMinutes < 0 || in.Quota.IdleMinutes > 7*24*60:
		return study.Errorf(study.KindInvalid, "the idle time must be between 0 (never idle) and 10080 minutes (a week)")
	}
	for _, t := range []struct{ name, text string }{{"instructions", in.Instructions}, {"debrief", in.Debrief}, {"consent text", in.Consent}} {
		if len(t.text) > study.MaxStudyTextBytes {
			return study.Errorf(study.KindInvalid, "the %s is %d bytes long; at most %d bytes (UTF-8) are allowed", t.name, len(t.text), study.MaxStudyTextBytes)
		}
	}
	okStatus := false
	for _, st := range study.Statuses {
		okStatus = okStatus || st == in.Status
	}
	if !okStatus {
		return study.Errorf(study.KindInvalid, "unknown status %q (draft, open, paused or closed)", in.Status)
	}
	if len(in.Arms) > 0 {
		in.Design = in.Arms[0].Design
		if err := s.checkArmDesigns(in.Arms); err != nil {
			return err
		}
	}
	if err := study.CheckFormat(in); err != nil {
		return err
	}
	if !s.knownDesign(in.Design) {
		return study.Errorf(study.KindInvalid, "unknown design %q (known: %s)", in.Design, strings.Join(s.Designs(), ", "))
	}
	if math.IsNaN(in.HeldoutShare) || in.HeldoutShare < 0 || in.HeldoutShare > study.MaxHeldoutShare {
		return study.Errorf(study.KindInvalid, "the held-out share must be between 0 and %g", study.MaxHeldoutShare)
	}
	if err := study.CheckLayout(&in.Layout); err != nil {
		return err
	}
	if err := study.CheckExclusionRules(in.Exclusion); err != nil {
		return err
	}
	if err := study.CheckQuality(&in.Quality, in.QuestionsPerParticipant); err != nil {
		return err
	}
	if len(in.ExcludeStudies) > 100 {
		return study.Errorf(study.KindInvalid, "a study can name at most 100 earlier studies whose participants it refuses")
	}
	if err := study.CheckLanguage(in); err != nil {
		return err
	}
	return study.CheckPlatform(&in.Platform)
}

const studyCols = `id, slug, title, instructions, debrief, consent, questions_per_participant, status, design, platform,
	max_participants, idle_minutes, min_view_ms, exclusion, exclude_studies, quality, arms, heldout_share, language, text_overrides, layout, format, mixed_kinds, play_to_end, sound_max_seconds, created_at, updated_at`

// scanStudy scans the studyCols of row, then the columns after them into
// more.
func scanStudy(row pgx.Row, more ...any) (study.Study, error) {
	var st study.Study
	err := row.Scan(append([]any{&st.ID, &st.Slug, &st.Title, &st.Instructions, &st.Debrief, &st.Consent,
		&st.QuestionsPerParticipant, &st.Status, &st.Design, &st.Platform, &st.Quota.MaxParticipants, &st.Quota.IdleMinutes,
		&st.MinViewMS, &st.Exclusion, &st.ExcludeStudies, &st.Quality, &st.Arms, &st.HeldoutShare, &st.Language, &st.TextOverrides, &st.Layout, &st.Format, &st.MixedKinds, &st.PlayToEnd, &st.SoundMaxSeconds, &st.CreatedAt, &st.UpdatedAt}, more...)...)
	if len(st.Arms) == 0 {
		st.Arms = nil
	}
	if len(st.TextOverrides) == 0 {
		st.TextOverrides = nil
	}
	return st, err
}

// CreateStudy creates a study.
func (s *Store) CreateStudy(ctx context.Context, in study.StudyInput) (_ study.Study, err error) {
	defer wrap(&err, "store.CreateStudy(%q)", in.Slug)
	if err := s.check(&in); err != nil {
		return study.Study{}, err
	}
	if err := study.CheckDesignConfig(&in, nil); err != nil {
		return study.Study{}, err
	}
	var st study.Study
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		st, err = scanStudy(tx.QueryRow(ctx, `
			INSERT INTO studies (slug, title, instructions, debrief, questions_per_participant, status, design, design_config, platform, consent,
				max_participants, idle_minutes, min_view_ms, exclusion, exclude_studies, quality, arms, heldout_share, language, text_overrides, layout, format, mixed_kinds, play_to_end, sound_max_seconds)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25) RETURNING `+studyCols,
			in.Slug, in.Title, in.Instructions, in.Debrief, in.QuestionsPerParticipant, in.Status, in.Design, in.DesignConfig, in.Platform, in.Consent,
			in.Quota.MaxParticipants, in.Quota.IdleMinutes, in.MinViewMS, in.Exclusion, excludeList(in.ExcludeStudies), in.Quality,
			armsJSON(in.Arms), in.HeldoutShare, in.Language, overridesJSON(in.TextOverrides), in.Layout, in.Format, in.MixedKinds, in.PlayToEnd, in.SoundMaxSeconds))
		if isUnique(err) {
			return study.Errorf(study.KindConflict, "the URL slug %q is taken", in.Slug)
		}
		if err != nil || len(in.Arms) == 0 {
			return err
		}
		return assignArms(ctx, tx, st.ID, in.Arms)
	})
	if err != nil {
		return study.Study{}, err
	}
	return st, nil
}

// insertStudy inserts a checked study in tx (without its design settings,
// with its arms as given and no arm counts yet); a taken slug is a
// KindConflict error.
func insertStudy(ctx context.Context, tx pgx.Tx, in study.StudyInput) (study.Study, error) {
	st, err := scanStudy(tx.QueryRow(ctx, `
		INSERT INTO studies (slug, title, instructions, debrief, questions_per_participant, status, design, platform, consent,
			max_participants, idle_minutes, min_view_ms, exclusion, quality, arms, heldout_share, language, text_overrides, layout, format, mixed_kinds, play_to_end, sound_max_seconds)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23) RETURNING `+studyCols,
		in.Slug, in.Title, in.Instructions, in.Debrief, in.QuestionsPerParticipant, in.Status, in.Design, in.Platform, in.Consent,
		in.Quota.MaxParticipants, in.Quota.IdleMinutes, in.MinViewMS, in.Exclusion, in.Quality, armsJSON(in.Arms), in.HeldoutShare,
		in.Language, overridesJSON(in.TextOverrides), in.Layout, study.MustStudyFormat(in.Format).String(), in.MixedKinds, in.PlayToEnd, in.SoundMaxSeconds))
	if isUnique(err) {
		return study.Study{}, study.Errorf(study.KindConflict, "the URL slug %q is taken", in.Slug)
	}
	return st, err
}

// checkOpenable refuses to open a study that has items without images
// (imported from a triplet CSV): annotators would have nothing to look at.
func checkOpenable(ctx context.Context, tx pgx.Tx, studyID int64) error {
	var missing int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM items WHERE study_id = $1 AND kind = 'image' AND data IS NULL`, studyID).Scan(&missing); err != nil {
		return err
	}
	if missing > 0 {
		return study.Errorf(study.KindConflict, "this study cannot be opened to annotators: %d of its items have a label but no image (it was imported from a triplet file); create a study with images to collect answers", missing)
	}
	return nil
}

// questionsIssuedSQL reports whether a study issued any question. It asks
// for the first issued_at (never NULL) rather than EXISTS: min() reads one
// entry of questions_study, while EXISTS is planned as a sequential scan
// that stops at the first row found whenever the planner cannot tell how
// many rows match (the generic plan of a cached statement, a correlated
// subquery), and for a study without questions that reads the whole table.
// A preview participant's questions freeze nothing (issue 26): the walk
// along questions_study skips them, and they are few (a researcher's
// tries; participants_preview lists their askers).
const questionsIssuedSQL = `SELECT (SELECT min(issued_at) FROM questions WHERE study_id = $1
	AND participant_id <> ALL (ARRAY(SELECT id FROM participants WHERE study_id = $1 AND preview))) IS NOT NULL`

// UpdateStudy changes the study with id. The design, its settings, the
// arms and the held-out share cannot change once questions were issued;
// before, a change of arms assigns the participants who joined already
// again (assignArms).
func (s *Store) UpdateStudy(ctx context.Context, id int64, in study.StudyInput) (_ study.Study, err error) {
	defer wrap(&err, "store.UpdateStudy(%d)", id)
	if err := s.check(&in); err != nil {
		return study.Study{}, err
	}
	var st study.Study
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		old, err := scanStudy(tx.QueryRow(ctx, `SELECT `+studyCols+` FROM studies WHERE id = $1 AND deleted_at IS NULL FOR UPDATE`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return study.NotFound("study")
		}
		if err != nil {
			return err
		}
		if in.Status == study.StatusOpen {
			if err := checkOpenable(ctx, tx, id); err != nil {
				return err
			}
		}
		if old.MixedKinds && !in.MixedKinds {
			var kinds int
			if err := tx.QueryRow(ctx, itemKindsSQL, id).Scan(&kinds); err != nil {
				return err
			}
			if kinds > 1 {
				return study.Errorf(study.KindConflict, "the study's items are of %d kinds: it must allow mixed kinds while it holds them", kinds)
			}
		}
		labels, err := ItemLabels(ctx, tx, id)
		if err != nil {
			return err
		}
		if len(labels) == 0 {
			labels = nil
		}
		if err := study.CheckDesignConfig(&in, labels); err != nil {
			return err
		}
		var oldConfig []byte
		if err := tx.QueryRow(ctx, `SELECT design_config FROM studies WHERE id = $1`, id).Scan(&oldConfig); err != nil {
			return err
		}
		newDesign := old.Design != in.Design || designConfigChanged(oldConfig, in.DesignConfig) || old.Format != in.Format
		newArms := armsChanged(old.Arms, in.Arms)
		if newDesign || newArms || old.HeldoutShare != in.HeldoutShare {
			var asked bool
			if err := tx.QueryRow(ctx, questionsIssuedSQL, id).Scan(&asked); err != nil {
				return err
			}
			if asked {
				if newDesign {
					return study.Errorf(study.KindConflict, "the design, its settings and the question format cannot change after questions were issued")
				}
				return study.Errorf(study.KindConflict, "the arms and the held-out share cannot change after questions were issued")
			}
		}
		if newArms {
			if err := assignArms(ctx, tx, id, in.Arms); err != nil {
				return err
			}
		}
		st, err = scanStudy(tx.QueryRow(ctx, `
			UPDATE studies SET version = version + 1, slug = $2, title = $3, instructions = $4, debrief = $5,
				questions_per_participant = $6, status = $7, design = $8, design_config = $9, platform = $10, consent = $11,
				max_participants = $12, idle_minutes = $13, min_view_ms = $14, exclusion = $15, exclude_studies = $16, quality = $17,
				arms = $18, heldout_share = $19, language = $20, text_overrides = $21, layout = $22, format = $23, mixed_kinds = $24, play_to_end = $25, sound_max_seconds = $26, updated_at = now()
			WHERE id = $1 RETURNING `+studyCols,
			id, in.Slug, in.Title, in.Instructions, in.Debrief, in.QuestionsPerParticipant, in.Status, in.Design, in.DesignConfig, in.Platform, in.Consent,
			in.Quota.MaxParticipants, in.Quota.IdleMinutes, in.MinViewMS, in.Exclusion, excludeList(in.ExcludeStudies), in.Quality,
			armsJSON(in.Arms), in.HeldoutShare, in.Language, overridesJSON(in.TextOverrides), in.Layout, in.Format, in.MixedKinds, in.PlayToEnd, in.SoundMaxSeconds))
		if isUnique(err) {
			return study.Errorf(study.KindConflict, "the URL slug %q is taken", in.Slug)
		}
		return err
	})
	if err != nil {
		return study.Study{}, err
	}
	return st, nil
}

// overridesJSON is a study's text overrides as stored: an object, never
// NULL.
func overridesJSON(o map[string]string) map[string]string {
	if o == nil {
		return map[string]string{}
	}
	return o
}

// excludeList is ids as stored: an empty list, never NULL.
func excludeList(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// SetStudyStatus changes only the study's status (open, paused, closed or
// draft); opening checks, as UpdateStudy does, that every item has an
// image.
func (s *Store) SetStudyStatus(ctx context.Context, id int64, status string) (err error) {
	defer wrap(&err, "store.SetStudyStatus(%d, %q)", id, status)
	if !slices.Contains(study.Statuses, status) {
		return study.Errorf(study.KindInvalid, "unknown status %q (draft, open, paused or closed)", status)
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var found bool
		if err := tx.QueryRow(ctx, `SELECT true FROM studies WHERE id = $1 AND deleted_at IS NULL FOR UPDATE`, id).Scan(&found); errors.Is(err, pgx.ErrNoRows) {
			return study.NotFound("study")
		} else if err != nil {
			return err
		}
		if status == study.StatusOpen {
			if err := checkOpenable(ctx, tx, id); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `UPDATE studies SET version = version + 1, status = $2, updated_at = now() WHERE id = $1`, id, status)
		return err
	})
}

// StudyBySlug returns the study with slug (never one being deleted).
func (s *Store) StudyBySlug(ctx context.Context, slug string) (_ study.Study, err error) {
	defer wrap(&err, "store.StudyBySlug(%q)", slug)
	st, err := scanStudy(s.pool.QueryRow(ctx, `SELECT `+studyCols+` FROM studies WHERE slug = $1 AND deleted_at IS NULL`, slug))
	if errors.Is(err, pgx.ErrNoRows) {
		return study.Study{}, study.NotFound("study")
	}
	if err != nil {
		return study.Study{}, err
	}
	return st, nil
}

// listStudiesSQL reads every study with its counts in one query: each
// table is counted once, grouped by study (TestHotQueryPlans checks that no
// table is read once per study, as a subquery per study would), rather
// than through a StudyStats per study. Preview sessions and their answers
// are not counted: their answers (few, found from participants_preview)
// are taken off each study's count.
const listStudiesSQL = `
	SELECT ` + studyCols + `, coalesce(i.n, 0), coalesce(p.n, 0), coalesce(a.n, 0) - coalesce(pa.n, 0)
	FROM studies s
	LEFT JOIN (SELECT study_id, count(*) AS n FROM items GROUP BY study_id) i ON i.study_id = s.id
	LEFT JOIN (SELECT study_id, count(*) AS n FROM participants WHERE NOT preview GROUP BY study_id) p ON p.study_id = s.id
	LEFT JOIN (SELECT study_id, count(*) AS n FROM answers GROUP BY study_id) a ON a.study_id = s.id
	LEFT JOIN (SELECT pp.study_id, count(*) AS n FROM participants pp JOIN answers x ON x.participant_id = pp.id
		WHERE pp.preview GROUP BY pp.study_id) pa ON pa.study_id = s.id
	WHERE s.deleted_at IS NULL
	ORDER BY s.id DESC`

// ListStudies returns all studies with their counts of items, participants
// and answers, newest first (not those being deleted).
func (s *Store) ListStudies(ctx context.Context) (_ []study.StudySummary, err error) {
	defer wrap(&err, "store.ListStudies()")
	rows, err := s.pool.Query(ctx, listStudiesSQL)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (study.StudySummary, error) {
		x := study.StudySummary{}
		var err error
		x.Study, err = scanStudy(r, &x.Items, &x.Participants, &x.Answers)
		return x, err
	})
}

// CountStudies returns the number of studies (not those being deleted).
func (s *Store) CountStudies(ctx context.Context) (_ int, err error) {
	defer wrap(&err, "store.CountStudies()")
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM studies WHERE deleted_at IS NULL`).Scan(&n); err != nil {
		return 0, err
	}
	return n, nil
}

// studyStatsSQL reads the counts of Stats (by name so that
// TestHotQueryPlans explains this very string on a large study); preview
// participants and their answers are not counted (their questions cast no
// vote).
const studyStatsSQL = `
	SELECT
		(SELECT count(*) FROM items WHERE study_id = $1),
		(SELECT count(*) FROM participants WHERE study_id = $1 AND NOT preview),
		(SELECT count(*) FROM participants WHERE study_id = $1 AND completed_at IS NOT NULL AND NOT preview),
		(SELECT count(*) FROM answers WHERE study_id = $1 AND ` + NotPreviewSQL + `),
		(SELECT count(*) FROM answers WHERE study_id = $1 AND answered_at > now() - interval '10 minutes' AND ` + NotPreviewSQL + `),
		(SELECT max(answered_at) FROM answers WHERE study_id = $1 AND ` + NotPreviewSQL + `),
		(SELECT count(*) FROM votes WHERE study_id = $1),
		(SELECT count(*) FROM votes WHERE study_id = $1 AND j_closer > 0 AND k_closer > 0)`

// StudyStats returns the study's counts.
func (s *Store) StudyStats(ctx context.Context, studyID int64) (_ study.Stats, err error) {
	defer wrap(&err, "store.StudyStats(%d)", studyID)
	st := study.Stats{RateWindow: 10 * time.Minute}
	var recent int
	err = s.pool.QueryRow(ctx, studyStatsSQL, studyID).
		Scan(&st.Items, &st.Participants, &st.Completed, &st.Answers, &recent, &st.LastAnswer, &st.Comparisons, &st.Contradictions)
	if err != nil {
		return study.Stats{}, err
	}
	st.AnswersPerMinute = float64(recent) / st.RateWindow.Minutes()
	return st, nil
}
