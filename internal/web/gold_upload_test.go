package web_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/study"
)

// Gold triplets uploaded on the study page: a file with bad rows is
// refused whole (nothing stored; a redirect to the study page, which shows
// every bad row's line and reason from the upload's report); a good one
// is stored, and the participant's catch trials ask it with the
// right answer being its closer item; a header alone removes them.
// goldReportRE is where a refused gold upload redirects to.
var goldReportRE = regexp.MustCompile(`^/admin/studies/gold\?upload=[a-z0-9]+#gold$`)

func TestGoldTripletUpload(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("gold", 6, 4, "open")
	admin := a.admin()
	items, err := a.store.ListItems(context.Background(), st.ID)
	if err != nil {
		t.Fatal(err)
	}
	l := func(i int) string { return items[i].Label }
	for _, bad := range []struct{ name, file, want string }{
		{"no header", "", "empty file"},
		{"wrong header", "a,b,c\n", "expected columns anchor,closer,farther"},
		{"bad rows", "anchor,closer,farther\n" + l(0) + "," + l(1) + "," + l(2) + "\nnobody," + l(1) + "," + l(2) + "\n" +
			l(0) + "," + l(0) + "," + l(2) + "\n" + l(3) + "," + l(4) + "\n",
			"3 bad row(s); line 3: no item is labelled &#34;nobody&#34;; line 4: repeated item in"},
		{"too large", "anchor,closer,farther\n" + strings.Repeat(l(0)+","+l(1)+","+l(2)+"\n", 2<<20/20), "larger than 2 MiB"},
	} {
		// Refused as an image upload ends: a redirect to the study page,
		// which shows the refusal from its report, also when reloaded.
		res := a.upload(admin, "/admin/studies/gold/gold", nil, []byte(bad.file), "gold.csv")
		to := res.Header.Get("Location")
		if res.StatusCode != http.StatusSeeOther || !goldReportRE.MatchString(to) {
			t.Errorf("%s: %d to %q, want 303 to the study page's report", bad.name, res.StatusCode, to)
			continue
		}
		for range 2 {
			page := a.do(admin, "GET", to, nil, nil)
			if page.StatusCode != http.StatusOK || !strings.Contains(page.body, `id="gold-report">Gold triplets not stored: gold.csv: `) ||
				!strings.Contains(page.body, bad.want) || strings.Contains(page.body, `id="upload"`) {
				t.Errorf("%s: the study page after the refusal: %d, want the refusal saying %q:\n%.2000s", bad.name, page.StatusCode, bad.want, page.body)
			}
		}
		if n := a.count(`SELECT count(*) FROM gold_triplets`); n != 0 {
			t.Fatalf("%s: %d gold triplets stored", bad.name, n)
		}
	}
	good := "anchor,closer,farther\n" + l(2) + "," + l(0) + "," + l(5) + "\n"
	if res := a.upload(admin, "/admin/studies/gold/gold", nil, []byte(good), "gold.csv"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("good file: %d %s", res.StatusCode, res.body)
	}
	if page := a.do(admin, "GET", "/admin/studies/gold?msg=gold", nil, nil); !strings.Contains(page.body, "Gold triplets (1)") {
		t.Errorf("the study page does not count the gold triplet")
	}
	in := study.StudyInput{Slug: "gold", Title: st.Title, QuestionsPerParticipant: 4, Status: "open",
		Quality: study.QualityControl{CatchAt: []int{1, 2}}}
	if _, err := a.store.UpdateStudy(context.Background(), st.ID, in); err != nil {
		t.Fatal(err)
	}
	p, _, err := a.store.CreateParticipant(context.Background(), st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := a.store.Next(context.Background(), p.ID)
	if err != nil {
		t.Fatal(err)
	}
	q := pr.Question
	if q.Design != study.DesignCatch || q.Anchor.Index != 2 || min(q.Options[0].Index, q.Options[1].Index) != 0 || max(q.Options[0].Index, q.Options[1].Index) != 5 {
		t.Fatalf("first catch trial %s %d; %d, %d; want the gold triplet (2; 0, 5)", q.Design, q.Anchor.Index, q.Options[0].Index, q.Options[1].Index)
	}
	if _, pr, err = a.store.AnswerNext(context.Background(), p.ID, study.AnswerInput{QuestionID: q.ID, Closer: 0}); err != nil {
		t.Fatal(err)
	}
	// The one gold triplet was asked: the second catch trial shows the top
	// image as an option.
	if q2 := pr.Question; q2.Design != study.DesignCatch || (q2.Options[0].Index != q2.Anchor.Index && q2.Options[1].Index != q2.Anchor.Index) {
		t.Errorf("second catch trial %s %d; %d, %d; want the anchor as an option", q2.Design, q2.Anchor.Index, q2.Options[0].Index, q2.Options[1].Index)
	}
	if n := a.count(`SELECT count(*) FROM trial_answers WHERE correct`); n != 1 {
		t.Errorf("the gold answer with its closer item: %d correct, want 1", n)
	}
	if res := a.upload(admin, "/admin/studies/gold/gold", nil, []byte("anchor,closer,farther\n"), "none.csv"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("header only: %d", res.StatusCode)
	}
	if n := a.count(`SELECT count(*) FROM gold_triplets`); n != 0 {
		t.Errorf("%d gold triplets after a header-only file", n)
	}
}
