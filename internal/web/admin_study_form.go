package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/i18n"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// trialForm is the quality-control question numbers as typed (catch_at,
// repeat_at), and why they could not be read (nil: they were).
type trialForm struct {
	catchAt, repeatAt string
	err               error
}

// trialFormOf is the form's text of stored settings.
func trialFormOf(q study.QualityControl) trialForm {
	return trialForm{catchAt: study.FormatPositions(q.CatchAt), repeatAt: study.FormatPositions(q.RepeatAt)}
}

// maxPositionsText bounds a question-number field.
const maxPositionsText = 10_000

// readTrials reads the quality-control fields into in.
func readTrials(f map[string][]string, in *study.StudyInput) trialForm {
	get := func(k string) string {
		if v := f[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	t := trialForm{catchAt: get("catch_at"), repeatAt: get("repeat_at")}
	in.Quality = study.QualityControl{CatchPercent: atoiOr(get("catch_pct"), -1), RepeatPercent: atoiOr(get("repeat_pct"), -1),
		CantDecide: get("cant_decide") == "on"}
	for _, fld := range []struct {
		name, text string
		into       *[]int
	}{{"catch trials", t.catchAt, &in.Quality.CatchAt}, {"repeat trials", t.repeatAt, &in.Quality.RepeatAt}} {
		if len(fld.text) > maxPositionsText {
			t.err = &study.Error{Kind: study.KindInvalid, Msg: "the question numbers for " + fld.name + " are too long a list"}
			return t
		}
		ps, err := study.ParsePositions(fld.text)
		if err != nil {
			t.err = &study.Error{Kind: study.KindInvalid, Msg: "question numbers for " + fld.name + ": " + userMessage(err)}
			return t
		}
		*fld.into = ps
	}
	return t
}

// studyInput reads the study form: the study's fields, and its design
// settings as typed (designConfig turns them into the stored settings).
func studyInput(r *http.Request) (study.StudyInput, designForm, trialForm, error) {
	if err := r.ParseForm(); err != nil {
		return study.StudyInput{}, designForm{}, trialForm{}, badRequest("unreadable form")
	}
	f := r.PostForm
	in := study.StudyInput{
		Slug: strings.TrimSpace(f.Get("slug")), Title: f.Get("title"),
		Instructions: f.Get("instructions"), Debrief: f.Get("debrief"), Consent: f.Get("consent"),
		Status: f.Get("status"), Design: f.Get("design"), Layout: f.Get("layout"), MixedKinds: f.Get("mixed_kinds") == "on",
		PlayToEnd: f.Get("play_to_end") == "on",
		Platform: study.Platform{Kind: f.Get("platform"), CompletionCode: f.Get("completion_code"),
			ScreenedOutCode: f.Get("screened_out_code"), IDParam: f.Get("id_param"), ReturnURL: f.Get("return_url")},
	}
	n, err := strconv.Atoi(strings.TrimSpace(f.Get("questions_per_participant")))
	if err != nil {
		n = 0 // reported by the store's check
	}
	in.QuestionsPerParticipant = n
	in.Format = formatOfForm(f)
	in.Quota.MaxParticipants = atoiOr(f.Get("max_participants"), -1)
	in.Quota.IdleMinutes = atoiOr(f.Get("idle_minutes"), -1)
	in.MinViewMS = atoiOr(f.Get("min_view_ms"), -1)
	// Empty (or a form from before the setting) takes the default; 0 or
	// text that is no number is refused by the store's bounds.
	if v := f.Get("sound_max_seconds"); strings.TrimSpace(v) != "" {
		if in.SoundMaxSeconds = atoiOr(v, -1); in.SoundMaxSeconds == 0 {
			in.SoundMaxSeconds = -1
		}
	}
	in.Exclusion = study.ExclusionRules{FastMS: atoiOr(f.Get("fast_ms"), -1),
		MaxFastShare: float64(atoiOr(f.Get("max_fast_pct"), -1)) / 100, MaxSideShare: float64(atoiOr(f.Get("max_side_pct"), -1)) / 100,
		MinCatchAccuracy: float64(atoiOr(f.Get("min_catch_pct"), -1)) / 100, MinConsistency: float64(atoiOr(f.Get("min_consistency_pct"), -1)) / 100}
	t := readTrials(f, &in)
	d := parseDesignForm(f)
	in.DesignConfig = d.config
	return in, d, t, nil
}

// formatOfForm is the question format the form posts: format (triplet,
// odd-one-out or rank), with rank_n references and rank_k choices for a
// rank study, in the text form study.ParseStudyFormat reads (the store
// refuses what it cannot read, with the reason).
func formatOfForm(f url.Values) string {
	format := strings.TrimSpace(f.Get("format"))
	if study.Format(format) == study.FormatRank {
		return format + ":" + strings.TrimSpace(f.Get("rank_n")) + ":" + strings.TrimSpace(f.Get("rank_k"))
	}
	return format
}

// armsView is the arms part of the form's view: the arms field's text,
// the table's rows, the arms shown (arms_shown) and the held-out share.
type armsView struct {
	text    string
	rows    []templates.ArmInput
	shown   string
	heldout string
}

// storedArms is the arms view of a study's stored arms and share.
func storedArms(arms []study.Arm, heldout float64) armsView {
	t := armsText(arms)
	return armsView{text: t, rows: rowsOf(arms), shown: t, heldout: heldoutText(heldout)}
}

// typedArms is the arms view of a refused form: what was typed.
func typedArms(d designForm) armsView {
	return armsView{text: d.arms, rows: d.rows, shown: d.armsShown, heldout: d.heldout}
}

// studyForm fills the form's view; picks is the landmark_picks text,
// excluded the exclude_studies text; frozen says that questions were
// issued.
func (s *Server) studyForm(isNew bool, action string, in study.StudyInput, picks, excluded string, t trialForm,
	arms armsView, frozen bool, errMsg string) templates.StudyForm {
	return templates.StudyForm{New: isNew, Action: action, Input: in, LandmarkPicks: picks, ExcludeStudies: excluded,
		CatchAt: t.catchAt, RepeatAt: t.repeatAt, Arms: arms.text, ArmRows: arms.rows, ArmsShown: arms.shown, HeldoutPct: arms.heldout,
		Frozen: frozen, Designs: s.store.Designs(), Statuses: study.Statuses, Error: errMsg}
}

// maxOverridesText bounds the text_overrides field (every key overridden
// at its longest fits).
const maxOverridesText = 256 << 10

// readLanguage reads the participants' language and the text overrides
// ("key = text" lines) of the form f into in, and returns the overrides
// as typed, for the form shown again. A post without the fields keeps
// old's (nil: a new study's default, English without overrides). The
// store checks the language and the keys and placeholders
// (study.CheckLanguage); an unreadable line is an error here.
func readLanguage(f url.Values, in *study.StudyInput, old *study.Study) (string, error) {
	in.Language = f.Get("language")
	if !f.Has("language") && old != nil {
		in.Language = old.Language
	}
	if !f.Has("text_overrides") {
		if old != nil {
			in.TextOverrides = old.TextOverrides
		}
		return i18n.FormatOverrides(in.TextOverrides), nil
	}
	text := f.Get("text_overrides")
	if len(text) > maxOverridesText {
		return text, &study.Error{Kind: study.KindInvalid, Msg: "the text overrides are too long"}
	}
	o, err := i18n.ParseOverrides(text)
	if err != nil {
		return text, &study.Error{Kind: study.KindInvalid, Msg: err.Error()}
	}
	in.TextOverrides = o
	return text, nil
}

// readArms reads the arms and the held-out share of the form into in.
func readArms(d designForm, in *study.StudyInput) (armsForm, error) {
	if d.rowsErr != nil {
		return armsForm{}, d.rowsErr
	}
	af, err := chooseArms(d)
	if err != nil {
		return af, err
	}
	in.Arms = af.arms
	in.HeldoutShare, err = parseHeldout(d.heldout)
	return af, err
}

// maxExcludedText bounds the exclude_studies field, maxExcludedStudies
// the studies it names (as the store does).
const (
	maxExcludedText    = 10_000
	maxExcludedStudies = 100
)

// excludedStudies resolves the exclude_studies field (study URL slugs,
// separated by commas or spaces) to the studies' ids; an unknown slug, or
// the study itself (self), is the user's to fix.
func (s *Server) excludedStudies(ctx context.Context, text string, self int64) ([]int64, error) {
	if len(text) > maxExcludedText {
		return nil, &study.Error{Kind: study.KindInvalid, Msg: "the list of earlier studies is too long"}
	}
	slugs := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })
	// Each slug costs a lookup: the store's limit is checked before any.
	if len(slugs) > maxExcludedStudies {
		return nil, &study.Error{Kind: study.KindInvalid,
			Msg: fmt.Sprintf("a study can name at most %d earlier studies whose participants it refuses", maxExcludedStudies)}
	}
	var ids []int64
	for _, slug := range slugs {
		st, err := s.store.StudyBySlug(ctx, slug)
		if err == nil {
			err = s.mustSee(ctx, st.ID) // another lab's study is not there (issue 30)
		}
		if collect.KindOf(err) == study.KindNotFound {
			return nil, &study.Error{Kind: study.KindInvalid, Msg: fmt.Sprintf("there is no study %q to refuse the participants of", slug)}
		}
		if err != nil {
			return nil, err
		}
		if st.ID == self {
			return nil, &study.Error{Kind: study.KindInvalid, Msg: "a study cannot refuse its own participants"}
		}
		if !slices.Contains(ids, st.ID) {
			ids = append(ids, st.ID)
		}
	}
	return ids, nil
}

// excludedText is the exclude_studies field of a study's stored ids (the
// studies' slugs; a deleted study is left out).
func (s *Server) excludedText(ctx context.Context, ids []int64) (string, error) {
	if len(ids) == 0 {
		return "", nil
	}
	all, err := s.store.ListStudies(ctx)
	if err != nil {
		return "", err
	}
	var slugs []string
	for _, st := range all {
		if slices.Contains(ids, st.Study.ID) {
			slugs = append(slugs, st.Study.Slug)
		}
	}
	return strings.Join(slugs, ", "), nil
}

// formError reports whether err is the user's to fix on the form.
func formError(err error) bool {
	k := collect.KindOf(err)
	return k == study.KindInvalid || k == study.KindConflict
}

// atoiOr reads a whole number typed into a form; empty is 0 and anything
// else unreadable is bad (the store's check names the field).
func atoiOr(v string, bad int) int { //nolint:unparam // the fallback is named at each call
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return bad
	}
	return n
}
