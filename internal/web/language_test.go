package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/study"
)

// A German study set up on the study form speaks German on every
// participant page (landing and consent, question, done, a refusal, a
// paused study's notice), with <html lang="de">, and a text the
// researcher overrode replaces the catalog's. The form refuses an
// override of an unknown key or with a placeholder its key lacks, and
// keeps the language when saved again.
func TestGermanStudyPages(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	admin := a.admin()
	form := url.Values{"title": {"Vögel"}, "slug": {"voegel"}, "instructions": {"Wählen Sie das **ähnlichere** Bild."},
		"consent": {"Ich bin einverstanden, dass meine Antworten gespeichert werden."}, "debrief": {"Danke."},
		"questions_per_participant": {"3"}, "status": {"draft"}, "design": {"random"}, "language": {"de"},
		"text_overrides": {"landing.agree = Einverstanden, los geht es\nquestion.progress = Frage {answered} / {total}"}}

	for _, bad := range []struct{ overrides, want string }{
		{"landing.agre = Los", `there is no participant text &#34;landing.agre&#34;`},
		{"question.progress = {answered} von {count}", "uses the placeholder {count}, which it does not have ({answered}, {total})"},
		{"landing.agree Los", "line 1 of the text overrides is not"},
	} {
		f := url.Values{}
		for k, v := range form {
			f[k] = v
		}
		f.Set("text_overrides", bad.overrides)
		res := a.do(admin, "POST", "/admin/studies", f, nil)
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, bad.want) ||
			!strings.Contains(res.body, `<textarea name="text_overrides" rows="3">`+strings.ReplaceAll(bad.overrides, "&", "&amp;")) {
			t.Fatalf("override %q: %d, want 422 saying %q and the text as typed:\n%s", bad.overrides, res.StatusCode, bad.want, res.body)
		}
	}
	f := url.Values{}
	for k, v := range form {
		f[k] = v
	}
	f.Set("language", "tlh")
	if res := a.do(admin, "POST", "/admin/studies", f, nil); res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, `unknown language &#34;tlh&#34;`) {
		t.Fatalf("unknown language: %d", res.StatusCode)
	}

	if res := a.do(admin, "POST", "/admin/studies", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: %d %s", res.StatusCode, res.body)
	}
	ctx := context.Background()
	st, err := a.store.StudyBySlug(ctx, "voegel")
	if err != nil {
		t.Fatal(err)
	}
	if st.Language != "de" || st.TextOverrides["landing.agree"] != "Einverstanden, los geht es" {
		t.Fatalf("stored %q %v", st.Language, st.TextOverrides)
	}
	// The edit form shows the language chosen and the overrides as lines.
	edit := a.do(admin, "GET", "/admin/studies/voegel/edit", nil, nil)
	if !strings.Contains(edit.body, `<option value="de" selected>`) || !strings.Contains(edit.body, "landing.agree = Einverstanden, los geht es\n") {
		t.Fatalf("edit form:\n%s", edit.body)
	}
	if _, rej, err := a.store.AddItems(ctx, st.ID, demo.Items()[:5]); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	if err := a.store.SetStudyStatus(ctx, st.ID, study.StatusOpen); err != nil {
		t.Fatal(err)
	}

	c := a.client()
	land := a.do(c, "GET", "/s/voegel", nil, nil)
	for _, want := range []string{`<html lang="de" dir="ltr">`, `<h2 id="consent-title">Einwilligung</h2>`, "Einverstanden, los geht es</button>",
		"Ich stimme nicht zu</a>", "3 Fragen, etwa eine Minute.", "<strong>ähnlichere</strong>"} {
		if !strings.Contains(land.body, want) {
			t.Fatalf("landing without %q:\n%s", want, land.body)
		}
	}
	if strings.Contains(land.body, "I agree, start") || strings.Contains(land.body, "I do not agree") {
		t.Fatalf("landing speaks English:\n%s", land.body)
	}
	// Starting without agreeing is refused in German.
	refused := a.do(a.client(), "POST", "/s/voegel/start", url.Values{}, nil)
	if refused.StatusCode != http.StatusBadRequest || !strings.Contains(refused.body, `<html lang="de" dir="ltr">`) ||
		!strings.Contains(refused.body, "Diese Studie beginnt erst, wenn Sie auf ihrer ersten Seite der Einwilligungserklärung zustimmen.") ||
		!strings.Contains(refused.body, "<h1>Etwas hat nicht funktioniert</h1>") {
		t.Fatalf("start without consent: %d\n%s", refused.StatusCode, refused.body)
	}
	declined := a.do(a.client(), "GET", "/s/voegel/declined", nil, nil)
	if !strings.Contains(declined.body, "Sie haben sich gegen eine Teilnahme entschieden") {
		t.Fatalf("declined:\n%s", declined.body)
	}

	if res := a.do(c, "POST", "/s/voegel/start", url.Values{"consent": {"yes"}}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("start: %d %s", res.StatusCode, res.body)
	}
	q := a.do(c, "GET", "/s/voegel/q", nil, nil)
	for _, want := range []string{`<html lang="de" dir="ltr">`, "Welches ist dem oberen Bild ähnlicher?", `<span class="progress-text" id="progress-text">Frage 0 / 3</span>`,
		`<span class="key">← oder 1</span>`, `<summary>Anleitung</summary>`, `aria-labelledby="progress-text"`,
		`data-too-soon="Bitte betrachten Sie die Bilder noch einen Moment; die Antwortschaltflächen funktionieren gleich."`} {
		if !strings.Contains(q.body, want) {
			t.Fatalf("question page without %q:\n%s", want, q.body)
		}
	}
	done := a.finishByForm(c, "voegel")
	for _, want := range []string{`<html lang="de" dir="ltr">`, "<h1>Vielen Dank!</h1>", "Sie haben 3 Fragen beantwortet.", "Ihr Abschlusscode:"} {
		if !strings.Contains(done.body, want) {
			t.Fatalf("done page without %q:\n%s", want, done.body)
		}
	}

	// Saved again without the language fields (an older form), the study
	// keeps them.
	keep := url.Values{"title": {"Vögel"}, "slug": {"voegel"}, "questions_per_participant": {"3"}, "status": {"paused"}, "design": {"random"}}
	if res := a.do(admin, "POST", "/admin/studies/voegel", keep, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("update: %d %s", res.StatusCode, res.body)
	}
	paused := a.do(a.client(), "GET", "/s/voegel", nil, nil)
	if !strings.Contains(paused.body, "<h1>Vögel ist pausiert</h1>") || !strings.Contains(paused.body, `<html lang="de" dir="ltr">`) {
		t.Fatalf("paused German study:\n%s", paused.body)
	}
}

// An English study (the default) keeps the pages' English and an
// override replaces one text there too, escaped.
func TestEnglishStudyOverride(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("en-over", 5, 3, "open")
	in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 3, Status: st.Status, Design: st.Design,
		Quality: study.QualityControl{CantDecide: true},
		TextOverrides: map[string]string{"landing.start": "Begin the study", "done.answered": "{n} comparisons made.",
			"question.cant_decide": `Not <b>sure</b> & "unsure"`}}
	if _, err := a.store.UpdateStudy(context.Background(), st.ID, in); err != nil {
		t.Fatal(err)
	}
	c := a.client()
	land := a.do(c, "GET", "/s/en-over", nil, nil)
	if !strings.Contains(land.body, `<html lang="en" dir="ltr">`) || !strings.Contains(land.body, "Begin the study") || strings.Contains(land.body, ">Start<") {
		t.Fatalf("landing:\n%s", land.body)
	}
	if res := a.do(c, "POST", "/s/en-over/start", url.Values{}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("start: %d", res.StatusCode)
	}
	// A researcher's text is escaped like any other.
	if q := a.do(c, "GET", "/s/en-over/q", nil, nil); !strings.Contains(q.body, `data-key="3">Not &lt;b&gt;sure&lt;/b&gt; &amp; "unsure" <span`) {
		t.Fatalf("question page:\n%s", q.body)
	}
	if done := a.finishByForm(c, "en-over"); !strings.Contains(done.body, "<p>3 comparisons made.</p>") || !strings.Contains(done.body, "Thank you!") {
		t.Fatalf("done:\n%s", done.body)
	}
}
