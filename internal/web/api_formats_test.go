package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/demo"
)

// formatItem is an item of a question in the JSON API, with its role.
type formatItem struct {
	Index    int    `json:"index"`
	ImageURL string `json:"image_url"`
	Role     string `json:"role"`
}

// formatNext is GET …/next's reply for a question of any format.
type formatNext struct {
	QuestionID string       `json:"question_id"`
	Format     string       `json:"format"`
	Anchor     *formatItem  `json:"anchor"`
	Options    []formatItem `json:"options"`
	Choose     int          `json:"choose"`
	Left       *formatItem  `json:"left"`
	Done       bool         `json:"done"`
}

// formatStudyByForm creates an open random study of format (with rank_n
// and rank_k) from the study form, with n demo items.
func formatStudyByForm(t *testing.T, a *app, c *http.Client, slug, format, rankN, rankK string, n, per int) {
	t.Helper()
	form := url.Values{"slug": {slug}, "title": {slug}, "status": {"open"}, "design": {"random"},
		"questions_per_participant": {fmt.Sprint(per)}, "format": {format}, "rank_n": {rankN}, "rank_k": {rankK}, "cant_decide": {"on"}}
	if res := a.do(c, "POST", "/admin/studies", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create %s: %d %s", slug, res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	st, err := a.store.StudyBySlug(context.Background(), slug)
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := a.store.AddItems(context.Background(), st.ID, demo.Items()[:n]); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
}

// TestAPIFormats: GET …/next shows an odd-one-out trial as three options
// with the role "item" and no anchor, a rank trial as the query (anchor)
// and its references, each with its role and how many to choose;
// POST /api/v1/answers takes "choices" in order; every bad answer is a 422
// with the reason and stores nothing; a triplet study takes its closer
// option as the one choice too.
func TestAPIFormats(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.admin()
	formatStudyByForm(t, a, c, "odd", "odd-one-out", "", "", 6, 3)
	formatStudyByForm(t, a, c, "rank", "rank", "5", "2", 8, 3)
	next := func(slug, token string) formatNext {
		t.Helper()
		var n formatNext
		if res := a.api("GET", "/api/v1/studies/"+slug+"/next", token, "", &n); res.StatusCode != http.StatusOK {
			t.Fatalf("next: %d %s", res.StatusCode, res.body)
		}
		return n
	}
	answer := func(token, qid, choices string, status int, reason string) {
		t.Helper()
		res := a.api("POST", "/api/v1/answers", token, fmt.Sprintf(`{"question_id": %q, "choices": %s}`, qid, choices), nil)
		if res.StatusCode != status || !strings.Contains(res.body, reason) {
			t.Fatalf("choices %s: %d %s; want %d %q", choices, res.StatusCode, res.body, status, reason)
		}
	}
	indices := func(items []formatItem, role string) []int {
		t.Helper()
		var out []int
		for _, it := range items {
			if it.Role != role || it.ImageURL == "" {
				t.Fatalf("option %+v; want role %q with an image", it, role)
			}
			out = append(out, it.Index)
		}
		return out
	}

	j := a.join("odd", `{}`)
	n := next("odd", j.Token)
	items := indices(n.Options, "item")
	if n.Format != "odd-one-out" || n.Anchor != nil || n.Left != nil || len(items) != 3 || n.Choose != 1 {
		t.Fatalf("odd-one-out next %+v", n)
	}
	other := 0
	for slices.Contains(items, other) {
		other++
	}
	answer(j.Token, n.QuestionID, fmt.Sprintf("[%d]", other), http.StatusUnprocessableEntity, "is not one of the items shown")
	answer(j.Token, n.QuestionID, fmt.Sprintf("[%d, %d]", items[0], items[1]), http.StatusUnprocessableEntity, "2 choices")
	answer(j.Token, n.QuestionID, "[]", http.StatusUnprocessableEntity, "no choice")
	answer(j.Token, n.QuestionID, fmt.Sprintf("[%d]", items[2]), http.StatusCreated, `"ok":true`)
	answer(j.Token, n.QuestionID, fmt.Sprintf("[%d]", items[2]), http.StatusOK, `"ok":true`)
	answer(j.Token, n.QuestionID, fmt.Sprintf("[%d]", items[0]), http.StatusConflict, "already answered")

	j = a.join("rank", `{}`)
	n = next("rank", j.Token)
	refs := indices(n.Options, "reference")
	if n.Format != "rank" || n.Anchor == nil || n.Anchor.Role != "query" || len(refs) != 5 || n.Choose != 2 || slices.Contains(refs, n.Anchor.Index) {
		t.Fatalf("rank next %+v", n)
	}
	answer(j.Token, n.QuestionID, fmt.Sprintf("[%d, %d]", n.Anchor.Index, refs[0]), http.StatusUnprocessableEntity, "is not one of the references shown")
	answer(j.Token, n.QuestionID, fmt.Sprintf("[%d, %d]", refs[1], refs[1]), http.StatusUnprocessableEntity, "chosen twice")
	answer(j.Token, n.QuestionID, fmt.Sprintf("[%d, %d, %d]", refs[0], refs[1], refs[2]), http.StatusUnprocessableEntity, "3 choices, want 2 in order")
	answer(j.Token, n.QuestionID, fmt.Sprintf("[%d]", refs[0]), http.StatusUnprocessableEntity, "want 2 in order")
	res := a.api("POST", "/api/v1/answers", j.Token, fmt.Sprintf(`{"question_id": %q, "closer": %d}`, n.QuestionID, refs[0]), nil)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, "choices are missing") {
		t.Fatalf("a rank answer by closer: %d %s", res.StatusCode, res.body)
	}
	var stored int
	if err := a.pool.QueryRow(context.Background(), `SELECT count(*) FROM answers a JOIN studies s ON s.id = a.study_id WHERE s.slug = 'rank'`).Scan(&stored); err != nil || stored != 0 {
		t.Fatalf("bad answers stored %d, %v", stored, err)
	}
	answer(j.Token, n.QuestionID, fmt.Sprintf("[%d, %d]", refs[3], refs[0]), http.StatusCreated, `"ok":true`)
	answer(j.Token, n.QuestionID, fmt.Sprintf("[%d, %d]", refs[0], refs[3]), http.StatusConflict, "already answered")

	// A triplet study takes the closer option as the one choice.
	a.study("trip", 5, 3, "open")
	j = a.join("trip", `{}`)
	n = next("trip", j.Token)
	if n.Format != "triplet" || n.Anchor == nil || n.Anchor.Role != "anchor" || n.Options[0].Role != "left" || n.Options[1].Role != "right" || n.Choose != 1 {
		t.Fatalf("triplet next %+v", n)
	}
	answer(j.Token, n.QuestionID, fmt.Sprintf("[%d, %d]", n.Options[0].Index, n.Options[1].Index), http.StatusUnprocessableEntity, "a triplet answer chooses one option")
	answer(j.Token, n.QuestionID, fmt.Sprintf("[%d]", n.Options[1].Index), http.StatusCreated, `"ok":true`)
}
