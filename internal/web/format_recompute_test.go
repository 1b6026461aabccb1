package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestFormatRecompute: an imported odd-one-out study is recomputed
// through River from its trials' derived triplets, and its dashboard
// shows the embedding of every item and the held-out trials' own score
// (odd-one-out accuracy against its chance, a third).
func TestFormatRecompute(t *testing.T) {
	t.Parallel()
	a, jobs := newJobsApp(t, true)
	admin := a.admin()
	var file strings.Builder
	file.WriteString("item1,item2,item3,odd\n")
	ids := []string{"a", "b", "c", "d", "e", "f"}
	for i := range 120 { // a tenth held out: none with probability 0.9^120
		x, y, z := ids[i%6], ids[(i+1)%6], ids[(i+3)%6]
		file.WriteString(x + "," + y + "," + z + "," + z + "\n")
	}
	if res := a.upload(admin, "/admin/import/triplets", map[string]string{"slug": "oddr", "title": "oddr"}, []byte(file.String()), "odd.csv"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("import: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	st, err := a.store.StudyBySlug(t.Context(), "oddr")
	if err != nil {
		t.Fatal(err)
	}
	if r := a.do(admin, "POST", "/admin/studies/oddr/dashboard/recompute", url.Values{}, nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("recompute: %d %s", r.StatusCode, r.body)
	}
	waitDone(t, a.store, jobs, st.ID, 1)
	emb := readCSV(t, a.do(admin, "GET", "/admin/studies/oddr/embedding.csv", nil, nil).body)
	if len(emb) != len(ids)+1 || !slices.Equal(emb[0][:2], []string{"item", "label"}) {
		t.Fatalf("embedding.csv: %v", emb)
	}
	page := a.do(admin, "GET", "/admin/studies/oddr/dashboard", nil, nil)
	if page.StatusCode != http.StatusOK || !strings.Contains(page.body, `id="embedding"`) {
		t.Fatalf("dashboard: %d", page.StatusCode)
	}
	if !regexp.MustCompile(`odd-one-out accuracy \d+(\.\d)?% on \d+ held-out trials \(chance 33%\)`).MatchString(page.body) {
		t.Fatalf("the dashboard does not give the held-out trials' odd-one-out accuracy")
	}
}
