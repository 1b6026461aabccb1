package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestImportTrialFiles: the import form's CSV upload reads an
// odd-one-out or rank trial file (known by its header) into a draft study
// of its format: the file's ids as items, each trial one question and one
// answer, the votes of every triplet it derives, and trials.csv the same
// trials back; a bad row is refused with its line and nothing stored.
func TestImportTrialFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newApp(t)
	admin := a.admin()
	bad := a.upload(admin, "/admin/import/triplets", map[string]string{"slug": "bad", "title": "Bad"},
		[]byte("item1,item2,item3,odd\na,b,c,a\nb,c,d,a\n"), "odd.csv")
	if bad.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(bad.body, "line 3") {
		t.Fatalf("bad odd-one-out file: %d %s", bad.StatusCode, noticeRE.FindAllString(bad.body, -1))
	}
	if _, err := a.store.StudyBySlug(ctx, "bad"); err == nil {
		t.Fatal("a refused file made a study")
	}
	for _, tc := range []struct {
		slug, file, format string
		trials, votes      int
		back               string
	}{
		// Odd-one-out: two triplets a trial, their keys distinct here.
		{"oddimp", "item1,item2,item3,odd\na,b,c,a\nb,c,d,d\nc,a,d,c\n", "odd-one-out", 3, 6,
			"item1,item2,item3,odd\n0,1,2,0\n1,2,3,3\n2,0,3,2\n"},
		// Rank 3-choose-2: 2·3 − 3 = 3 triplets a trial; the ids are
		// numbered in sorted order (a, b, c, d, q).
		{"rankimp", "query,option1,option2,option3,choice1,choice2\nq,a,b,c,c,a\nq,b,c,d,b,d\n", "rank:3:2", 2, 6,
			"query,option1,option2,option3,choice1,choice2\n4,0,1,2,2,0\n4,1,2,3,1,3\n"},
	} {
		res := a.upload(admin, "/admin/import/triplets", map[string]string{"slug": tc.slug, "title": tc.slug}, []byte(tc.file), tc.slug+".csv")
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: %d %s", tc.slug, res.StatusCode, noticeRE.FindAllString(res.body, -1))
		}
		st, err := a.store.StudyBySlug(ctx, tc.slug)
		if err != nil || st.Format != tc.format || st.Status != "draft" {
			t.Fatalf("%s: %+v, %v", tc.slug, st, err)
		}
		if n := a.count(`SELECT count(*) FROM answers WHERE study_id = $1 AND choices IS NOT NULL`, st.ID); n != tc.trials {
			t.Fatalf("%s: %d trials stored, want %d", tc.slug, n, tc.trials)
		}
		if n := a.count(`SELECT coalesce(sum(j_closer + k_closer), 0)::int FROM votes WHERE study_id = $1`, st.ID); n != tc.votes {
			t.Fatalf("%s: %d votes, want %d", tc.slug, n, tc.votes)
		}
		trip := a.do(admin, "GET", "/admin/studies/"+tc.slug+"/triplets.csv", nil, nil)
		if got := strings.Count(trip.body, "\n") - 1; got != tc.votes {
			t.Fatalf("%s: triplets.csv has %d rows, want %d derived triplets", tc.slug, got, tc.votes)
		}
		back := a.do(admin, "GET", "/admin/studies/"+tc.slug+"/trials.csv", nil, nil)
		if back.StatusCode != http.StatusOK || strings.ReplaceAll(back.body, "\r\n", "\n") != tc.back {
			t.Fatalf("%s: trials.csv %d\n%s\nwant\n%s", tc.slug, back.StatusCode, back.body, tc.back)
		}
	}
}
