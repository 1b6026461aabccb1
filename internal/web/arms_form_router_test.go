package web_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/study"
)

// The study form's arms and held-out share (issue 16), through the router:
// a study created with two arms and 10% held out gets them (the active
// arm's settings normalised, the first arm's design the study's); the edit
// form shows them back, and saving it unchanged changes nothing; refusals
// name the line of the arm (the form's own checks and the store's) or the
// field, and the form keeps what was typed; the held-out share is bounded;
// once a question was issued the form says the arms are frozen, saving
// them unchanged still works and a change is refused.
func TestArmsForm(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newApp(t)
	collect.RegisterDesigns(a.store)
	c := a.admin()
	form := url.Values{"slug": {"cmp"}, "title": {"Compare"}, "status": {"draft"}, "design": {"random"},
		"questions_per_participant": {"20"}, "arms": {"smart active 0.5 warmup=5 pool=20\nplain random 50%"}, "heldout_pct": {"10"}}
	if res := a.do(c, "POST", "/admin/studies", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: %d %s", res.StatusCode, res.body)
	}
	st, err := a.store.StudyBySlug(ctx, "cmp")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Arms) != 2 || st.HeldoutShare != 0.1 || st.Design != study.DesignActive {
		t.Fatalf("arms %+v, held out %g, design %s", st.Arms, st.HeldoutShare, st.Design)
	}
	smart := st.Arms[0].Config
	if smart.Seed == 0 || smart.Warmup != 5 || smart.Pool != 20 || smart.Score != "uncertainty" || smart.Model != "tste" ||
		smart.Candidates != 1000 || smart.Repeats != 1 || st.Arms[1].Name != "plain" || st.Arms[1].Share != 0.5 {
		t.Fatalf("arms %+v", st.Arms)
	}
	if _, rej, err := a.store.AddItems(ctx, st.ID, demo.Items()[:10]); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	// The edit form shows them back; saved as shown, nothing changes.
	edit := a.do(c, "GET", "/admin/studies/cmp/edit", nil, nil)
	shown := armsField(t, edit.body)
	if !strings.HasPrefix(shown, "smart active 0.5 seed=") || !strings.Contains(shown, "warmup=5 score=uncertainty model=tste candidates=1000 pool=20\nplain random 0.5\n") {
		t.Fatalf("arms shown as %q", shown)
	}
	if !strings.Contains(edit.body, `name="heldout_pct" min="0" max="50" step="any" value="10"`) || strings.Contains(edit.body, "no longer change") {
		t.Fatal("the edit form does not show the held-out share, or says the arms are frozen")
	}
	form.Set("arms", shown)
	form.Set("title", "Compare again")
	if res := a.do(c, "POST", "/admin/studies/cmp", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("saving the form as shown: %d %s", res.StatusCode, res.body)
	}
	if again, err := a.store.StudyBySlug(ctx, "cmp"); err != nil || !reflect.DeepEqual(again.Arms, st.Arms) || again.HeldoutShare != 0.1 {
		t.Fatalf("after saving as shown: %+v %g %v", again.Arms, again.HeldoutShare, err)
	}

	refused := func(arms, heldout, want string) {
		t.Helper()
		f := url.Values{}
		for k, v := range form {
			f[k] = v
		}
		f.Set("arms", arms)
		f.Set("heldout_pct", heldout)
		res := a.do(c, "POST", "/admin/studies/cmp", f, nil)
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, html.EscapeString(want)) {
			t.Fatalf("arms %q, held out %q: %d, want the message %q in\n%s", arms, heldout, res.StatusCode, want, noticeRE.FindAllString(res.body, -1))
		}
		if armsField(t, res.body) != arms || !strings.Contains(res.body, `value="`+html.EscapeString(heldout)+`"`) {
			t.Fatalf("the refused form shows the arms %q and not %q, or lost the share %q", armsField(t, res.body), arms, heldout)
		}
	}
	refused("x random 0.5\n# the other\ny rando 0.5", "10", `Arms, line 3: unknown design "rando"`)
	refused("x random 0.5\nb basis 0.5 repeats=2", "10", "Arms, line 2: arm b: ")
	refused("x random 0.5\ny landmark-k1 0.5 landmarks=40", "10", "Arms, line 2: arm y: 40 landmarks but the study has only 10 items")
	refused("x random 0.5\ny random 0.3", "10", "Arms: the arms' shares must be positive and sum to 1")
	refused("x random 1", "10", "Arms: a study runs between 2 and 8 arms (1 given)")
	refused(shown, "60", "the held-out questions must be between 0 and 50 % of each participant's questions")
	refused(shown, "-5", "the held-out questions must be between 0 and 50 % of each participant's questions")

	// A question issued: frozen.
	if err := a.store.SetStudyStatus(ctx, st.ID, study.StatusOpen); err != nil {
		t.Fatal(err)
	}
	p, _, err := a.store.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.Next(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	edit = a.do(c, "GET", "/admin/studies/cmp/edit", nil, nil)
	if !strings.Contains(edit.body, "Questions were issued: the arms and the held-out share no longer change.") ||
		!strings.Contains(edit.body, `<textarea name="arms" rows="4" placeholder="`) || !strings.Contains(edit.body, `readonly>`) {
		t.Fatal("the edit form does not say the arms are frozen")
	}
	form.Set("status", "open")
	form.Set("title", "Compare, open")
	if res := a.do(c, "POST", "/admin/studies/cmp", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("saving the frozen arms unchanged: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	refused(strings.Replace(shown, "plain random 0.5", "plain random 0.5 seed=4", 1), "10",
		"the arms and the held-out share cannot change after questions were issued")
	refused(shown, "20", "the arms and the held-out share cannot change after questions were issued")
}

// armsField is the text of the arms textarea on a page.
func armsField(t *testing.T, body string) string {
	t.Helper()
	i := strings.Index(body, `<textarea name="arms"`)
	if i < 0 {
		t.Fatal("no arms field")
	}
	rest := body[i:]
	rest = rest[strings.Index(rest, ">")+1:]
	return html.UnescapeString(rest[:strings.Index(rest, "</textarea>")])
}

// The active design's settings on the study form: saved as typed (with the
// defaults filled in where left empty), shown back on the edit form, saved
// again unchanged; out-of-range settings refused with the store's words.
func TestActiveSettingsForm(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newApp(t)
	collect.RegisterDesigns(a.store)
	c := a.admin()
	form := url.Values{"slug": {"act"}, "title": {"Active"}, "status": {"draft"}, "design": {"active"}, "questions_per_participant": {"20"},
		"seed": {"77"}, "repeats": {"2"}, "warmup": {"4"}, "score": {"infogain"}, "model": {"ckl"}, "candidates": {"300"}, "pool": {"25"},
		"landmarks": {"10"}, "arms": {""}, "heldout_pct": {"0"}}
	if res := a.do(c, "POST", "/admin/studies", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	st, err := a.store.StudyBySlug(ctx, "act")
	if err != nil {
		t.Fatal(err)
	}
	want := study.DesignConfig{Seed: 77, Repeats: 2, Warmup: 4, Score: "infogain", Model: "ckl", Candidates: 300, Pool: 25}
	if got, err := a.store.DesignConfigOf(ctx, st.ID); err != nil || !reflect.DeepEqual(got, want) || len(st.Arms) != 0 {
		t.Fatalf("stored %+v, %v; want %+v", got, err, want)
	}
	edit := a.do(c, "GET", "/admin/studies/act/edit", nil, nil)
	for _, s := range []string{`name="warmup" min="1" max="1000" value="4"`, `<option value="infogain" selected>`, `<option value="ckl" selected>`,
		`name="candidates" min="1" max="1000000" value="300"`, `name="pool" min="0" max="1000000" value="25"`, `name="seed" inputmode="numeric" pattern="[0-9]*" value="77"`} {
		if !strings.Contains(edit.body, s) {
			t.Errorf("the edit form lacks %s", s)
		}
	}
	form.Set("title", "Active again")
	if res := a.do(c, "POST", "/admin/studies/act", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("saving again: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	// Left empty: the defaults (the pool's: the number of items, 0).
	for _, k := range []string{"warmup", "candidates", "pool", "score", "model"} {
		form.Set(k, "")
	}
	form.Set("title", "Defaults")
	if res := a.do(c, "POST", "/admin/studies/act", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("defaults: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	want = study.DesignConfig{Seed: 77, Repeats: 2, Warmup: 10, Score: "uncertainty", Model: "tste", Candidates: 1000}
	if got, err := a.store.DesignConfigOf(ctx, st.ID); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("stored %+v, %v; want %+v", got, err, want)
	}
	for k, v := range map[string]string{"warmup": "2000", "candidates": "0x", "score": "bogus", "model": "ste", "repeats": "101"} {
		f := url.Values{}
		for k2, v2 := range form {
			f[k2] = v2
		}
		f.Set(k, v)
		res := a.do(c, "POST", "/admin/studies/act", f, nil)
		msg := map[string]string{"warmup": "the warm-up must be between 1 and 1000 answers per item",
			"candidates": "the candidates per item must be a whole number", "score": `unknown score &#34;bogus&#34; (uncertainty or infogain)`,
			"model": `unknown answer model &#34;ste&#34; (tste or ckl)`, "repeats": "repeats must be between 1 and 100"}[k]
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, msg) {
			t.Errorf("%s=%s: %d, want %q in %v", k, v, res.StatusCode, msg, noticeRE.FindAllString(res.body, -1))
		}
	}
}
