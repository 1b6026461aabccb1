package web_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/study"
)

// armsTableForm is a study form with the arms table's rows (name, design,
// share, settings each) and the arms field's text.
func armsTableForm(slug, text, shown string, rows ...[4]string) url.Values {
	f := url.Values{"slug": {slug}, "title": {"Table " + slug}, "status": {"draft"}, "design": {"random"},
		"questions_per_participant": {"20"}, "heldout_pct": {"0"}, "arms": {text}, "arms_shown": {shown}}
	for _, r := range rows {
		f["arm_name"] = append(f["arm_name"], r[0])
		f["arm_design"] = append(f["arm_design"], r[1])
		f["arm_share"] = append(f["arm_share"], r[2])
		f["arm_settings"] = append(f["arm_settings"], r[3])
	}
	return f
}

// The arms table (issue 26) through the router: rows read into the same
// arms as the arms field's lines (empty rows left out); a bad row is
// refused naming its row, with what was typed kept; the table and the
// pasted text together are taken when they say the same arms and refused
// with both named when they do not; on the edit form, the one of the two
// that was changed from what the form showed counts.
func TestArmsTableForm(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newApp(t)
	collect.RegisterDesigns(a.store)
	c := a.admin()
	empty := [4]string{}

	// Valid: two arms and an empty row.
	res := a.do(c, "POST", "/admin/studies", armsTableForm("tab", "", "",
		[4]string{"smart", "active", "50%", "warmup=5 pool=20"}, empty, [4]string{"plain", "random", "0.5", ""}), nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create with the table: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	st, err := a.store.StudyBySlug(ctx, "tab")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Arms) != 2 || st.Arms[0].Name != "smart" || st.Arms[0].Design != study.DesignActive || st.Arms[0].Share != 0.5 ||
		st.Arms[0].Config.Warmup != 5 || st.Arms[0].Config.Pool != 20 || st.Arms[1].Name != "plain" || st.Design != study.DesignActive {
		t.Fatalf("arms from the table: %+v", st.Arms)
	}
	// The same arms as text make the same study.
	res = a.do(c, "POST", "/admin/studies", armsTableForm("txt", "smart active 50% warmup=5 pool=20\nplain random 0.5", ""), nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create with the text: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	txt, err := a.store.StudyBySlug(ctx, "txt")
	if err != nil {
		t.Fatal(err)
	}
	for i := range txt.Arms {
		txt.Arms[i].Config.Seed = st.Arms[i].Config.Seed // drawn at random for each study
	}
	if !reflect.DeepEqual(txt.Arms, st.Arms) {
		t.Fatalf("the text made %+v, the table %+v", txt.Arms, st.Arms)
	}

	refused := func(f url.Values, want string, keep ...string) {
		t.Helper()
		res := a.do(c, "POST", "/admin/studies", f, nil)
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, html.EscapeString(want)) {
			t.Fatalf("%d, want 422 with %q in %s", res.StatusCode, want, noticeRE.FindAllString(res.body, -1))
		}
		for _, k := range keep {
			if !strings.Contains(res.body, `value="`+html.EscapeString(k)+`"`) {
				t.Errorf("the refused form lost the typed %q", k)
			}
		}
	}
	// Invalid rows.
	refused(armsTableForm("bad1", "", "", [4]string{"a", "random", "0.5", ""}, [4]string{"b", "active", "half", ""}),
		`Arms table, row 2: the share "half" is not a number above 0 (for example 0.5 or 50%)`, "half")
	refused(armsTableForm("bad2", "", "", [4]string{"a", "random", "0.5", ""}, empty, [4]string{"b", "", "0.5", "pool=3"}),
		"Arms table, row 3: give the arm a design (or empty the row to leave it out)", "pool=3")
	refused(armsTableForm("bad3", "", "", [4]string{"a", "random", "0.5", ""}, [4]string{"a", "basis", "0.5", ""}),
		`Arms table, row 2: the name "a" is taken by row 1`)
	refused(armsTableForm("bad4", "", "", [4]string{"a", "random", "0.5", "warmup=3"}, [4]string{"b", "random", "0.5", ""}),
		"Arms table, row 1: warmup does not apply to the random design (it takes seed)", "warmup=3")
	refused(armsTableForm("bad5", "", "", [4]string{"a", "random", "0.5", ""}, [4]string{"b", "random", "0.3", ""}),
		"Arms: the arms' shares must be positive and sum to 1")
	// Both given: the same arms are taken, different ones refused.
	res = a.do(c, "POST", "/admin/studies", armsTableForm("both", "a random 0.5\nb random 50%", "",
		[4]string{"a", "random", "0.5", ""}, [4]string{"b", "random", "0.5", ""}), nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the table and the text agreeing: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	refused(armsTableForm("differ", "a random 0.5\nc random 0.5", "", [4]string{"a", "random", "0.5", ""}, [4]string{"b", "random", "0.5", ""}),
		`Arms: the arms table says "a random 0.5; b random 0.5" but the pasted text says "a random 0.5; c random 0.5"`)
	if n := a.count(`SELECT count(*) FROM studies WHERE slug LIKE 'bad%' OR slug = 'differ'`); n != 0 {
		t.Fatalf("%d refused studies were stored", n)
	}

	// The edit form shows the arms in both and which it showed; the one
	// changed counts.
	edit := a.do(c, "GET", "/admin/studies/tab/edit", nil, nil)
	shown := html.UnescapeString(regexp.MustCompile(`name="arms_shown" value="([^"]*)"`).FindStringSubmatch(edit.body)[1])
	if shown != armsField(t, edit.body) || !strings.HasPrefix(shown, "smart active 0.5 seed=") ||
		!strings.Contains(edit.body, `name="arm_name" value="plain"`) {
		t.Fatalf("the edit form shows the arms %q, says it showed %q", armsField(t, edit.body), shown)
	}
	seed := strings.Fields(shown)[3]
	tableAsShown := [4]string{"smart", "active", "0.5", seed + " repeats=1 warmup=5 score=uncertainty model=tste candidates=1000 pool=20"}
	// The table changed, the text as shown: the table counts.
	res = a.do(c, "POST", "/admin/studies/tab", armsTableForm("tab", shown, shown,
		[4]string{"smart", "active", "0.25", tableAsShown[3]}, [4]string{"plain", "random", "0.75", ""}), nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("saving a changed table: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	if st, err = a.store.StudyBySlug(ctx, "tab"); err != nil || st.Arms[0].Share != 0.25 || st.Arms[1].Share != 0.75 {
		t.Fatalf("after changing the table: %+v, %v", st.Arms, err)
	}
	// The text pasted, the table as shown: the text counts.
	shown = armsField(t, a.do(c, "GET", "/admin/studies/tab/edit", nil, nil).body)
	res = a.do(c, "POST", "/admin/studies/tab", armsTableForm("tab", "x random 0.5\ny landmark-k1 0.5 landmarks=3", shown,
		[4]string{"smart", "active", "0.25", tableAsShown[3]}, [4]string{"plain", "random", "0.75", ""}, empty), nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("saving pasted text: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	if st, err = a.store.StudyBySlug(ctx, "tab"); err != nil || len(st.Arms) != 2 || st.Arms[0].Name != "x" || st.Arms[1].Design != study.DesignLandmarkK1 {
		t.Fatalf("after pasting: %+v, %v", st.Arms, err)
	}
	// Both changed, differently: refused, nothing saved.
	shown = armsField(t, a.do(c, "GET", "/admin/studies/tab/edit", nil, nil).body)
	res = a.do(c, "POST", "/admin/studies/tab", armsTableForm("tab", "x random 0.5\nz random 0.5", shown,
		[4]string{"x", "random", "0.5", ""}, [4]string{"y", "random", "0.5", ""}), nil)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, "Arms: the arms table says") {
		t.Fatalf("both changed, differently: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	if again, err := a.store.StudyBySlug(ctx, "tab"); err != nil || !reflect.DeepEqual(again.Arms, st.Arms) {
		t.Fatalf("a refused form changed the arms: %+v, %v", again.Arms, err)
	}
	// Emptying the table (the text as shown) leaves one design.
	res = a.do(c, "POST", "/admin/studies/tab", armsTableForm("tab", shown, shown, empty, empty), nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("emptying the table: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	if st, err = a.store.StudyBySlug(ctx, "tab"); err != nil || len(st.Arms) != 0 || st.Design != study.DesignRandom {
		t.Fatalf("after emptying the table: %+v %s, %v", st.Arms, st.Design, err)
	}
}

// The study form is in sections, and what does not apply is not shown:
// with arms the single design's block is hidden (its fields posted all
// the same), without them shown; once a question was issued the design's
// and the arms' fields are read-only (selects disabled, their values
// posted by hidden fields), with the reason, and saving the form as shown
// still works.
func TestStudyFormSections(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newApp(t)
	collect.RegisterDesigns(a.store)
	c := a.admin()
	body := a.do(c, "GET", "/admin/studies/new", nil, nil).body
	for _, id := range []string{"sec-what", "sec-items", "sec-design", "sec-participants", "sec-quality", "sec-results"} {
		if !strings.Contains(body, `<fieldset class="form-section" id="`+id+`">`) || !strings.Contains(body, `href="#`+id+`"`) {
			t.Errorf("the new study form has no section %s with its link", id)
		}
	}
	if !strings.Contains(body, `<div id="single-design">`) || strings.Contains(body, `id="single-design" hidden`) {
		t.Error("the new study form hides the single design")
	}
	if !strings.Contains(body, `placeholder="e.g. smart"`) || !strings.Contains(body, `placeholder="e.g. 0.5"`) {
		t.Error("the arms table's placeholders are not examples")
	}
	res := a.do(c, "POST", "/admin/studies", armsTableForm("secs", "", "",
		[4]string{"one", "landmark-k1", "0.5", "landmarks=3"}, [4]string{"two", "random", "0.5", ""}), nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	a.study("plain", 0, 5, "draft")
	if body := a.do(c, "GET", "/admin/studies/plain/edit", nil, nil).body; strings.Contains(body, `id="single-design" hidden`) {
		t.Error("a study without arms hides its single design")
	}
	edit := a.do(c, "GET", "/admin/studies/secs/edit", nil, nil).body
	if !strings.Contains(edit, `<div id="single-design" hidden>`) || strings.Contains(edit, `id="single-design-note" hidden`) {
		t.Fatal("with arms the single design's block shows, or the note saying why not is hidden")
	}
	if strings.Contains(edit, "readonly") || strings.Contains(edit, "no longer change") {
		t.Fatal("fields are read-only before any question was issued")
	}

	// A question issued: frozen, read-only, with the reason.
	secs, err := a.store.StudyBySlug(ctx, "secs")
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := a.store.AddItems(ctx, secs.ID, demo.Items()[:6]); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	if err := a.store.SetStudyStatus(ctx, secs.ID, study.StatusOpen); err != nil {
		t.Fatal(err)
	}
	p, _, err := a.store.CreateParticipant(ctx, secs.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.Next(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	edit = a.do(c, "GET", "/admin/studies/secs/edit", nil, nil).body
	for _, want := range []string{
		"Questions were issued: the design and its settings no longer change.",
		"Questions were issued: the arms and the held-out share no longer change.",
		`<select name="design" disabled>`, `<input type="hidden" name="design" value="landmark-k1">`,
		`<input type="text" name="arm_name" value="one"`, `<select name="arm_design" aria-label="arm 1&#39;s design" disabled>`,
		`<input type="hidden" name="arm_design" value="landmark-k1">`,
	} {
		if !strings.Contains(edit, want) {
			t.Errorf("the frozen form has no %s", want)
		}
	}
	if regexp.MustCompile(`name="arm_name" value="one"[^>]*readonly`).FindString(edit) == "" || strings.Contains(edit, `id="add-arm"`) {
		t.Error("the frozen arms table can be edited")
	}
	// Saved as shown (the browser posts the hidden fields, not the
	// disabled selects): nothing frozen changes, the title does.
	f := url.Values{}
	nameRE, valueRE := regexp.MustCompile(` name="([a-z_]+)"`), regexp.MustCompile(` value="([^"]*)"`)
	for _, tag := range regexp.MustCompile(`<input[^>]*>`).FindAllString(edit, -1) {
		name, value := nameRE.FindStringSubmatch(tag), valueRE.FindStringSubmatch(tag)
		if name == nil || strings.Contains(tag, "disabled") ||
			(strings.Contains(tag, `type="checkbox"`) || strings.Contains(tag, `type="radio"`)) && !strings.Contains(tag, "checked") {
			continue
		}
		v := ""
		if value != nil {
			v = html.UnescapeString(value[1])
		}
		f[name[1]] = append(f[name[1]], v)
	}
	f.Set("arms", armsField(t, edit))
	f.Set("title", "Sections again")
	f.Set("status", "open")
	for _, k := range []string{"instructions", "consent", "debrief", "catch_at", "repeat_at"} {
		f.Set(k, "")
	}
	for k, v := range map[string]string{"coordinates": "rank-difference", "score": "uncertainty", "model": "tste", "platform": ""} {
		if _, ok := f[k]; !ok {
			f.Set(k, v)
		}
	}
	res = a.do(c, "POST", "/admin/studies/secs", f, nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("saving the frozen form as shown: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	again, err := a.store.StudyBySlug(ctx, "secs")
	if err != nil || again.Title != "Sections again" || !reflect.DeepEqual(again.Arms, secs.Arms) {
		t.Fatalf("after saving the frozen form: %q %+v, %v", again.Title, again.Arms, err)
	}
}

// The question layout (issue 26) through the router: the form's choice is
// stored and shown back; the question page is laid out by it (its main
// element's class) and names the anchor by its place; a post without the
// field keeps the layout; an unknown layout is refused.
func TestLayoutSetting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newApp(t)
	c := a.admin()
	form := url.Values{"slug": {"lay"}, "title": {"Layout"}, "status": {"open"}, "design": {"random"},
		"questions_per_participant": {"5"}, "layout": {"beside"}}
	if res := a.do(c, "POST", "/admin/studies", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	st, err := a.store.StudyBySlug(ctx, "lay")
	if err != nil || st.Layout != study.LayoutBeside {
		t.Fatalf("stored layout %q, %v", st.Layout, err)
	}
	if body := a.do(c, "GET", "/admin/studies/lay/edit", nil, nil).body; !strings.Contains(body, `name="layout" value="beside" checked`) ||
		strings.Contains(body, `name="layout" value="above" checked`) {
		t.Fatal("the edit form does not show the layout beside")
	}
	if _, rej, err := a.store.AddItems(ctx, st.ID, demo.Items()[:4]); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	q := questionPage(t, a, "lay")
	if !strings.Contains(q, `<main class="question-main layout-beside"`) || !strings.Contains(q, "Which is more similar to the framed image on the left?") {
		t.Fatalf("the question page is not laid out beside:\n%s", q)
	}
	// A post without the field keeps the layout.
	form.Del("layout")
	form.Set("title", "Layout kept")
	if res := a.do(c, "POST", "/admin/studies/lay", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("update without the layout: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	if st, err = a.store.StudyBySlug(ctx, "lay"); err != nil || st.Layout != study.LayoutBeside || st.Title != "Layout kept" {
		t.Fatalf("after a post without the layout: %q %q, %v", st.Layout, st.Title, err)
	}
	form.Set("layout", "above")
	if res := a.do(c, "POST", "/admin/studies/lay", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("update to above: %d", res.StatusCode)
	}
	if q := questionPage(t, a, "lay"); !strings.Contains(q, `<main class="question-main layout-above"`) || !strings.Contains(q, "Which is more similar to the top image?") {
		t.Fatal("the question page is not laid out above")
	}
	form.Set("layout", "sideways")
	res := a.do(c, "POST", "/admin/studies/lay", form, nil)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, html.EscapeString(`unknown question layout "sideways" (above or beside)`)) {
		t.Fatalf("an unknown layout: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
}

// questionPage starts a new participant on study slug and returns their
// first question's page.
func questionPage(t *testing.T, a *app, slug string) string {
	t.Helper()
	p := a.client()
	if res := a.do(p, "POST", "/s/"+slug+"/start", url.Values{}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("start: %d %s", res.StatusCode, res.body)
	}
	return a.do(p, "GET", "/s/"+slug+"/q", nil, nil).body
}
