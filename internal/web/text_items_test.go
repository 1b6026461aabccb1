package web_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/study"
)

// textStudy creates a study of the given format whose items are texts,
// three questions per participant.
func (a *app) textStudy(slug, format string, texts ...string) study.Study {
	a.t.Helper()
	ctx := context.Background()
	st, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: slug, Title: "Study " + slug, QuestionsPerParticipant: 3,
		Status: study.StatusOpen, Format: format})
	if err != nil {
		a.t.Fatal(err)
	}
	items, err := media.ReadTextLines(strings.NewReader(strings.Join(texts, "\n")))
	if err != nil {
		a.t.Fatal(err)
	}
	if _, err := a.store.AddTextItems(ctx, st.ID, items, "test", 0); err != nil {
		a.t.Fatal(err)
	}
	return st
}

// postTexts sends the study page's text form (multipart) as a browser
// does, and does not follow the redirect.
func (a *app) postTexts(c *http.Client, slug string, parts ...part) response {
	a.t.Helper()
	body, ctype := multipartParts(a.t, parts)
	req, _ := http.NewRequest("POST", a.srv.URL+"/admin/studies/"+slug+"/texts", body)
	req.Header.Set("Content-Type", ctype)
	return a.send(c, req)
}

// textRows are a study's items as stored: index, kind, label and text.
func (a *app) textRows(studyID int64) string {
	a.t.Helper()
	rows, err := a.pool.Query(context.Background(), `SELECT idx, kind, label, coalesce(text, '<null>'), data IS NULL
		FROM items WHERE study_id = $1 ORDER BY idx`, studyID)
	if err != nil {
		a.t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var idx int
		var kind, label, text string
		var noData bool
		if err := rows.Scan(&idx, &kind, &label, &text, &noData); err != nil {
			a.t.Fatal(err)
		}
		fmt.Fprintf(&b, "%d %s %q %q %v\n", idx, kind, label, text, noData)
	}
	return b.String()
}

// Text items come in by each route of the study page (issue 29): typed
// (the multipart form and a plain urlencoded one), a .txt file and a CSV
// of label,text; each upload ends in a 303 to the study page's report,
// the items are appended in their order as kind text with no bytes, and
// the study page lists their text.
func TestTextItemsByEachRoute(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("words", 0, 3, "draft")
	admin := a.admin()
	report := regexp.MustCompile(`^/admin/studies/words\?upload=[a-z0-9]+#upload$`)
	for _, c := range []struct {
		name string
		send func() response
	}{
		{"typed", func() response {
			return a.postTexts(admin, "words", textP("texts", " dog\r\ncat \n\n"), fileP("file", "", ""))
		}},
		{"typed, urlencoded", func() response {
			return a.do(admin, "POST", "/admin/studies/words/texts", url.Values{"texts": {"horse"}}, nil)
		}},
		{".txt", func() response {
			return a.postTexts(admin, "words", textP("texts", ""), fileP("file", "fruit.TXT", "\uFEFFapple\npear"))
		}},
		{".csv", func() response {
			return a.postTexts(admin, "words", textP("texts", "\n"), fileP("file", "more.csv", "label,text\nfr,fraise\n,<b>kiwi</b>\n"))
		}},
	} {
		res := c.send()
		if res.StatusCode != http.StatusSeeOther || !report.MatchString(res.Header.Get("Location")) {
			t.Fatalf("%s: %d to %q:\n%.1000s", c.name, res.StatusCode, res.Header.Get("Location"), res.body)
		}
		page := a.do(admin, "GET", res.Header.Get("Location"), nil, nil)
		if !strings.Contains(page.body, "added") || strings.Contains(page.body, "upload-refused") {
			t.Errorf("%s: the report: %s", c.name, noticeRE.FindAllString(page.body, -1))
		}
	}
	want := `0 text "dog" "dog" true
1 text "cat" "cat" true
2 text "horse" "horse" true
3 text "apple" "apple" true
4 text "pear" "pear" true
5 text "fr" "fraise" true
6 text "<b>kiwi</b>" "<b>kiwi</b>" true
`
	if got := a.textRows(st.ID); got != want {
		t.Fatalf("stored:\n%s\nwant:\n%s", got, want)
	}
	page := a.do(admin, "GET", "/admin/studies/words", nil, nil)
	for _, w := range []string{`<span class="item-text" dir="auto">fraise</span><span>5 · fr</span>`,
		`<span class="item-text" dir="auto">&lt;b&gt;kiwi&lt;/b&gt;</span>`, "Items (7)"} {
		if !strings.Contains(page.body, w) {
			t.Errorf("the study page lacks %s", w)
		}
	}
	if strings.Contains(page.body, "<b>kiwi") {
		t.Error("the study page shows an item's text as markup")
	}
}

// Every refusal of a text upload (a control character, a bidirectional
// override, too long, an empty line, invalid UTF-8, a text already in the
// study, an image study without mixed kinds, a file of another type, a
// list both typed and chosen, nothing at all) is a 303 to the study page
// with the reason and its line, and stores nothing. Each case fails if
// its check is removed: the upload would be stored.
func TestTextItemRefusals(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.textStudy("tx", "", "dog")
	img := a.study("img", 3, 3, "draft")
	admin := a.admin()
	typed := func(slug, text string) func() response {
		return func() response { return a.postTexts(admin, slug, textP("texts", text)) }
	}
	file := func(name, data string) func() response {
		return func() response { return a.postTexts(admin, "tx", fileP("file", name, data)) }
	}
	stored := func() string { return a.textRows(st.ID) + a.textRows(img.ID) }
	prefix := `id="upload-refused">Upload refused, nothing added: `
	checkRefusals(t, a, admin, regexp.MustCompile(`^/admin/studies/(tx|img)\?upload=[a-z0-9]+#upload$`), prefix, stored, []refusal{
		{"control character", typed("tx", "cat\nbe\x07ll\n"), "the typed items were not added: line 2: a control character (U+0007) at character 3"},
		{"bidi override", typed("tx", "cat\nevil\u202Etxt.exe"), "the typed items were not added: line 2: a bidirectional override character (U+202E) at character 5"},
		{"bidi isolate", typed("tx", "\u2067cat"), "the typed items were not added: line 1: a bidirectional override character (U+2067) at character 1"},
		{"too long", typed("tx", "cat\n"+strings.Repeat("w", 501)), "the typed items were not added: line 2: 501 characters, the limit is 500 characters"},
		{"empty line", typed("tx", "cat\n\nmouse"), "the typed items were not added: line 2: empty (an item has 1 to 500 characters; remove the blank line)"},
		{"nothing typed", typed("tx", "\n \n"), "type the items, one per line, or choose a .txt or .csv file"},
		{"bad UTF-8", file("w.txt", "cat\nmo\xffuse\n"), "w.txt was not added: line 2: not valid UTF-8"},
		{"CSV with a control character", file("w.csv", "label,text\na,cat\nb,mo\x1buse\n"), "w.csv was not added: line 3: text: a control character (U+001B)"},
		{"the same text twice", typed("tx", "cat\nmouse\ncat"), "the typed items were not added: line 3: the same text as line 1"},
		{"already an item", typed("tx", "cat\ndog"), "line 2: &#34;dog&#34; is already an item of this study; nothing was added"},
		{"mixed kinds", typed("img", "cat"), "this study&#39;s items are image items and these are text items"},
		{"another type of file", file("w.docx", "cat"), "w.docx: choose a UTF-8 .txt file (one item per line) or a .csv of label,text"},
		{"typed and a file", func() response {
			return a.postTexts(admin, "tx", textP("texts", "cat"), fileP("file", "w.txt", "mouse"))
		}, "type the items or choose a file, not both"},
		{"past the byte bound", file("big.txt", "dog\n"+strings.Repeat(" \n", media.MaxTextUploadBytes/2+1000)),
			"big.txt was not added: larger than 16.0 MiB (the limit of one upload)"},
		{"past the item bound", file("many.txt", manyWords(media.MaxTextItems+1)),
			"many.txt was not added: more than 5000 items (the limit of one upload)"},
	})
}

// A study holds items of one kind unless it allows mixed kinds (issue
// 29): the store refuses texts into an image study and images into a text
// study by default, takes both once allowed, and will not turn the
// setting off while the study holds both.
func TestMixedKinds(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	ctx := context.Background()
	st := a.textStudy("mix", "", "dog", "cat", "mouse")
	if _, _, err := a.store.AddItems(ctx, st.ID, demo.Items()[:1]); collect.KindOf(err) != study.KindConflict ||
		!strings.Contains(err.Error(), "this study's items are text items and these are image items") {
		t.Fatalf("an image into a text study: %v, want a conflict", err)
	}
	in := study.StudyInput{Slug: st.Slug, Title: st.Title, QuestionsPerParticipant: 3, Status: st.Status, Design: st.Design, MixedKinds: true}
	if _, err := a.store.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	if added, _, err := a.store.AddItems(ctx, st.ID, demo.Items()[:1]); err != nil || len(added) != 1 {
		t.Fatalf("an image into a study of mixed kinds: %v, %v", added, err)
	}
	in.MixedKinds = false
	if _, err := a.store.UpdateStudy(ctx, st.ID, in); collect.KindOf(err) != study.KindConflict {
		t.Fatalf("mixed kinds turned off while the study holds both: %v, want a conflict", err)
	}
	// The form's checkbox sets it.
	admin := a.admin()
	form := url.Values{"slug": {"mix2"}, "title": {"m"}, "status": {"draft"}, "design": {"random"},
		"questions_per_participant": {"3"}, "mixed_kinds": {"on"}}
	if res := a.do(admin, "POST", "/admin/studies", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	if st2, err := a.store.StudyBySlug(ctx, "mix2"); err != nil || !st2.MixedKinds {
		t.Fatalf("the form's mixed kinds: %+v, %v", st2.MixedKinds, err)
	}
}

// A text study's question page, in every format, shows each item's text
// escaped (an item "<script>…" shows literally, never as markup), sized
// for the study's longest item; the JSON API gives the text and no image.
func TestTextQuestionPageEscaped(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	texts := []string{`<script>alert(1)</script>`, `<b>bold</b>`, `a & b`, `<img src=x onerror=alert(2)>`, `"quoted" 'too'`}
	escaped := map[string]string{
		texts[0]: `&lt;script&gt;alert(1)&lt;/script&gt;`, texts[1]: `&lt;b&gt;bold&lt;/b&gt;`, texts[2]: `a &amp; b`,
		texts[3]: `&lt;img src=x onerror=alert(2)&gt;`, texts[4]: `&#34;quoted&#34; &#39;too&#39;`,
	}
	for _, f := range []struct {
		format string
		shown  int
	}{{"triplet", 3}, {"odd-one-out", 3}, {"rank:4:2", 5}} {
		slug := "t-" + strings.ReplaceAll(f.format, ":", "-")
		a.textStudy(slug, f.format, texts...)
		c := a.client()
		if res := a.do(c, "POST", "/s/"+slug+"/start", url.Values{}, nil); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: start %d", f.format, res.StatusCode)
		}
		page := a.do(c, "GET", "/s/"+slug+"/q", nil, nil)
		if page.StatusCode != http.StatusOK {
			t.Fatalf("%s: question page %d", f.format, page.StatusCode)
		}
		shown := regexp.MustCompile(`<span class="item-text" dir="auto">([^<]*)</span>`).FindAllStringSubmatch(page.body, -1)
		if len(shown) != f.shown {
			t.Fatalf("%s: %d texts shown, want %d:\n%s", f.format, len(shown), f.shown, page.body)
		}
		for _, m := range shown {
			ok := false
			for _, e := range escaped {
				ok = ok || m[1] == e
			}
			if !ok {
				t.Errorf("%s: shows %q, not one of the items escaped", f.format, m[1])
			}
		}
		for _, raw := range texts[:4] {
			if strings.Contains(page.body, raw) {
				t.Errorf("%s: the page holds %q as markup", f.format, raw)
			}
		}
		if strings.Contains(page.body, "/img/") || strings.Contains(page.body, `rel="prefetch"`) {
			t.Errorf("%s: a text study's page shows or fetches an image", f.format)
		}
		prompt := map[string]string{"triplet": "Which is more similar to the text at the top?",
			"odd-one-out": "Which one does not belong?", "rank:4:2": "Choose the 2 texts most like the framed one, in order: the most similar first."}[f.format]
		if !strings.Contains(page.body, `<h1 class="prompt">`+prompt+`</h1>`) {
			t.Errorf("%s: the prompt is not %q", f.format, prompt)
		}
		// The longest item has 28 characters: the phrase size.
		if !strings.Contains(page.body, `text-fit-phrase`) {
			t.Errorf("%s: the page is not sized for its longest item", f.format)
		}
	}
	// The JSON API: kind and text, no image URL.
	j := a.join("t-triplet", "{}")
	var next struct {
		Options []struct {
			Kind     string `json:"kind"`
			Text     string `json:"text"`
			ImageURL string `json:"image_url"`
		} `json:"options"`
	}
	if res := a.api("GET", "/api/v1/studies/t-triplet/next", j.Token, "", &next); res.StatusCode != http.StatusOK {
		t.Fatalf("next: %d %s", res.StatusCode, res.body)
	}
	for _, o := range next.Options {
		if _, ok := escaped[o.Text]; o.Kind != "text" || !ok || o.ImageURL != "" {
			t.Errorf("the API shows an option as %+v", o)
		}
	}
}

// manyWords is n distinct words, one a line.
func manyWords(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "w%d\n", i)
	}
	return b.String()
}

// The store checks every text again (a caller that built TextItems by
// hand stores nothing bad), and the items table's CHECK bounds a text's
// length even for SQL that goes around the store.
func TestStoreRefusesUncheckedTexts(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	ctx := context.Background()
	st := a.textStudy("raw", "", "dog")
	for _, bad := range []string{"", "   ", "a\x00b", "a\x1bb", "evil\u202Etxt", "\u2069x", "bad\xff", strings.Repeat("x", 501)} {
		_, err := a.store.AddTextItems(ctx, st.ID, []media.TextItem{{Line: 1, Label: "l", Text: bad}}, "hand", 0)
		if collect.KindOf(err) != study.KindInvalid {
			t.Errorf("%q: %v, want a KindInvalid refusal", bad, err)
		}
	}
	if n := a.count(`SELECT count(*) FROM items WHERE study_id = $1`, st.ID); n != 1 {
		t.Fatalf("%d items stored, want the 1 from before", n)
	}
	_, err := a.pool.Exec(ctx, `INSERT INTO items (study_id, idx, kind, label, file_name, content_type, sha256, width, height, text)
		VALUES ($1, 1, 'text', 'l', 'f', 'text/plain', 'x', 0, 0, repeat('x', 501))`, st.ID)
	if err == nil || !strings.Contains(err.Error(), "check constraint") {
		t.Fatalf("a 501-character text through SQL: %v, want the CHECK's refusal", err)
	}
	_, err = a.pool.Exec(ctx, `INSERT INTO items (study_id, idx, kind, label, file_name, content_type, sha256, width, height, data, text)
		VALUES ($1, 1, 'text', 'l', 'f', 'text/plain', 'y', 0, 0, '\x00', 'both')`, st.ID)
	if err == nil || !strings.Contains(err.Error(), "items_kind_content") {
		t.Fatalf("a text item with bytes: %v, want the CHECK's refusal", err)
	}
	// At most maxItems in the study.
	more, _ := media.ReadTextLines(strings.NewReader("cat\nmouse"))
	if _, err := a.store.AddTextItems(ctx, st.ID, more, "typed", 2); collect.KindOf(err) != study.KindInvalid ||
		!strings.Contains(err.Error(), "the study would hold 3 items, the limit is 2") {
		t.Fatalf("past the study's bound: %v", err)
	}
}

// A text study's export names its items by their labels (issue 29): a
// CSV's label where one was given, else the text.
func TestTextExportLabels(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.textStudy("exp", "", "dog", "cat")
	texts, err := media.ReadTextCSV(strings.NewReader("label,text\nfr,fraise\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.AddTextItems(context.Background(), st.ID, texts, "f.csv", 0); err != nil {
		t.Fatal(err)
	}
	admin := a.admin()
	for range 2 {
		j := a.join("exp", "{}")
		var n struct {
			QuestionID string `json:"question_id"`
			Left       struct {
				Index int `json:"index"`
			} `json:"left"`
		}
		if res := a.api("GET", "/api/v1/studies/exp/next", j.Token, "", &n); res.StatusCode != http.StatusOK {
			t.Fatalf("next: %d %s", res.StatusCode, res.body)
		}
		if res := a.api("POST", "/api/v1/answers", j.Token, fmt.Sprintf(`{"question_id": %q, "closer": %d}`, n.QuestionID, n.Left.Index), nil); res.StatusCode != http.StatusCreated {
			t.Fatalf("answer: %d %s", res.StatusCode, res.body)
		}
	}
	res := a.do(admin, "GET", "/admin/studies/exp/triplets.csv", nil, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("export: %d\n%s", res.StatusCode, res.body)
	}
	rows, err := csv.NewReader(strings.NewReader(res.body)).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("export: %d rows, %v:\n%s", len(rows), err, res.body)
	}
	seen := map[string]bool{}
	for _, row := range rows[1:] {
		for c, name := range rows[0] {
			if strings.HasSuffix(name, "_label") {
				seen[row[c]] = true
			}
		}
	}
	// Every question of three items shows all three: each row names them.
	if len(seen) != 3 || !seen["dog"] || !seen["cat"] || !seen["fr"] {
		t.Fatalf("the export's labels: %v, want dog, cat and fr", seen)
	}
}
