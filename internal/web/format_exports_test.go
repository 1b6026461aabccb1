package web_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
)

// TestFormatExports: odd-one-out and rank trials answered through the
// API reach triplets.csv as the triplets they derive (trial's Triplets:
// two an odd-one-out trial, k·n − k(k+1)/2 a rank trial), the all-answers
// export as one row per trial with its format, options and choices, the
// skipped ones too, and the recompute's answers (RunAnswers) as the
// derived triplets.
func TestFormatExports(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newApp(t)
	c := a.admin()
	formatStudyByForm(t, a, c, "oddx", "odd-one-out", "", "", 6, 3)
	formatStudyByForm(t, a, c, "rankx", "rank", "5", "2", 8, 3)
	type given struct {
		trial   []string // format, options, choices as exported
		derived []triplet.Triplet
	}
	play := func(slug string) []given {
		t.Helper()
		j := a.join(slug, `{}`)
		var out []given
		for i := 0; ; i++ {
			var n formatNext
			if res := a.api("GET", "/api/v1/studies/"+slug+"/next", j.Token, "", &n); res.StatusCode != http.StatusOK {
				t.Fatalf("next: %d %s", res.StatusCode, res.body)
			}
			if n.Done {
				return out
			}
			var opts []int
			for _, o := range n.Options {
				opts = append(opts, o.Index)
			}
			var body string
			var g given
			switch {
			case i == 2:
				body = fmt.Sprintf(`{"question_id": %q, "skip": true}`, n.QuestionID)
				g.trial = []string{n.Format, joinInts(opts), ""}
			case n.Format == "odd-one-out":
				body = fmt.Sprintf(`{"question_id": %q, "choices": [%d]}`, n.QuestionID, opts[i])
				g = given{[]string{n.Format, joinInts(opts), strconv.Itoa(opts[i])},
					trial.OddOneOut{Items: [3]int(opts), Odd: opts[i]}.Triplets(nil)}
			default:
				ch := []int{opts[4], opts[i]}
				body = fmt.Sprintf(`{"question_id": %q, "choices": [%d, %d]}`, n.QuestionID, ch[0], ch[1])
				g = given{[]string{n.Format, joinInts(opts), joinInts(ch)},
					trial.Rank{Query: n.Anchor.Index, Options: opts, Choices: ch}.Triplets(nil)}
			}
			if res := a.api("POST", "/api/v1/answers", j.Token, body, nil); res.StatusCode != http.StatusCreated {
				t.Fatalf("answer %s: %d %s", body, res.StatusCode, res.body)
			}
			out = append(out, g)
		}
	}
	read := func(path string) [][]string {
		t.Helper()
		res := a.do(c, "GET", path, nil, nil)
		recs, err := csv.NewReader(strings.NewReader(res.body)).ReadAll()
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %v", path, res.StatusCode, err)
		}
		return recs
	}
	for _, slug := range []string{"oddx", "rankx"} {
		gs := play(slug)
		if len(gs) != 3 {
			t.Fatalf("%s: %d trials answered", slug, len(gs))
		}
		var want []triplet.Triplet
		for _, g := range gs {
			want = append(want, g.derived...)
		}
		trip := read("/admin/studies/" + slug + "/triplets.csv")
		if !slices.Equal(trip[0], study.ExportColumns) || len(trip)-1 != len(want) {
			t.Fatalf("%s triplets.csv: %d rows, want %d derived triplets:\n%v", slug, len(trip)-1, len(want), trip)
		}
		for i, r := range trip[1:] {
			got := fmt.Sprintf("%s %s %s", r[4], r[5], r[6])
			if w := want[i]; got != fmt.Sprintf("%d %d %d", w.Anchor, w.Closer, w.Farther) {
				t.Fatalf("%s triplets.csv row %d: %s, want %v", slug, i, got, w)
			}
		}
		all := read("/admin/studies/" + slug + "/triplets.csv?all_answers=1")
		if !slices.Equal(all[0], study.AllAnswersColumns) || len(all) != 4 {
			t.Fatalf("%s all answers: %v", slug, all)
		}
		n := len(all[0])
		for i, r := range all[1:] {
			if !slices.Equal(r[n-4:n-1], gs[i].trial) || r[17] != strconv.FormatBool(i == 2) || r[n-1] != "" {
				t.Fatalf("%s all answers row %d: %v, want format, options, choices %v", slug, i, r, gs[i].trial)
			}
		}
		// trials.csv: the format's own file, the one closer embed reads,
		// with the answered trials (not the skip) in answer order.
		res := a.do(c, "GET", "/admin/studies/"+slug+"/trials.csv", nil, nil)
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") {
			t.Fatalf("%s trials.csv: %d %s", slug, res.StatusCode, res.body)
		}
		kind, rd, err := trial.Sniff(strings.NewReader(res.body))
		if err != nil {
			t.Fatalf("%s trials.csv: %v\n%s", slug, err, res.body)
		}
		var fileTriplets []triplet.Triplet
		switch kind.Format {
		case trial.FormatOddOneOut:
			set, err := trial.ReadOddOneOut(rd, trial.ReadOptions{})
			if err != nil || len(set.Trials) != 2 {
				t.Fatalf("%s trials.csv: %v, %v\n%s", slug, set, err, res.body)
			}
			for _, tr := range set.Trials {
				fileTriplets = append(fileTriplets, named(set.IDs, tr.Triplets(nil))...)
			}
		case trial.FormatRank:
			set, err := trial.ReadRank(rd, trial.ReadOptions{})
			if err != nil || len(set.Trials) != 2 || set.Spec != (trial.RankSpec{N: 5, K: 2}) {
				t.Fatalf("%s trials.csv: %v, %v\n%s", slug, set, err, res.body)
			}
			for _, tr := range set.Trials {
				fileTriplets = append(fileTriplets, named(set.IDs, tr.Triplets(nil))...)
			}
		default:
			t.Fatalf("%s trials.csv is a %v file:\n%s", slug, kind, res.body)
		}
		if !slices.Equal(fileTriplets, want) {
			t.Fatalf("%s trials.csv derives %v, want %v", slug, fileTriplets, want)
		}
		st, err := a.store.StudyBySlug(ctx, slug)
		if err != nil {
			t.Fatal(err)
		}
		run, err := a.store.RunAnswers(ctx, st.ID, false)
		if err != nil || len(run) != len(want) {
			t.Fatalf("%s: %d run answers, %v; want %d", slug, len(run), err, len(want))
		}
		for i, r := range run {
			if (triplet.Triplet{Anchor: r.Anchor, Closer: r.Closer, Farther: r.Farther}) != want[i] {
				t.Fatalf("%s run answer %d: %+v, want %v", slug, i, r, want[i])
			}
		}
	}
	// The bundle of a study of each format imports as a study of that
	// format with the same trials.csv (its answered trials; a bundle
	// keeps no skips, as for triplets).
	for _, slug := range []string{"oddx", "rankx"} {
		zipRes := a.do(c, "GET", "/admin/studies/"+slug+"/bundle.zip", nil, nil)
		if zipRes.StatusCode != http.StatusOK || zipRes.Header.Get("Content-Type") != "application/zip" {
			t.Fatalf("bundle of %s: %d %s", slug, zipRes.StatusCode, noticeRE.FindAllString(zipRes.body, -1))
		}
		if res := a.upload(c, "/admin/import/bundle", map[string]string{"slug": slug + "-copy"}, []byte(zipRes.body), "b.zip"); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("import the bundle of %s: %d %s", slug, res.StatusCode, noticeRE.FindAllString(res.body, -1))
		}
		st, err1 := a.store.StudyBySlug(ctx, slug)
		cp, err2 := a.store.StudyBySlug(ctx, slug+"-copy")
		if err1 != nil || err2 != nil || cp.Format != st.Format {
			t.Fatalf("%s: imported format %q, want %q (%v %v)", slug, cp.Format, st.Format, err1, err2)
		}
		orig, copied := read("/admin/studies/"+slug+"/trials.csv"), read("/admin/studies/"+slug+"-copy/trials.csv")
		if len(orig) != 3 || !slices.EqualFunc(orig, copied, slices.Equal) {
			t.Fatalf("%s trials.csv %v, imported %v", slug, orig, copied)
		}
	}
	// The dashboard of a study of each format shows.
	for _, slug := range []string{"oddx", "rankx"} {
		if res := a.do(c, "GET", "/admin/studies/"+slug+"/dashboard", nil, nil); res.StatusCode != http.StatusOK {
			t.Fatalf("%s dashboard: %d", slug, res.StatusCode)
		}
	}
	a.study("tripx", 5, 3, "open")
	if res := a.do(c, "GET", "/admin/studies/tripx/trials.csv", nil, nil); res.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(res.body, "a triplet study&#39;s answers are its triplets.csv") {
		t.Fatalf("trials.csv of a triplet study: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
}

// named maps triplets over a trial file's item numbers back to the item
// indices its ids name.
func named(ids []string, ts []triplet.Triplet) []triplet.Triplet {
	id := func(i int) int { n, _ := strconv.Atoi(ids[i]); return n }
	out := make([]triplet.Triplet, len(ts))
	for i, t := range ts {
		out[i] = triplet.Triplet{Anchor: id(t.Anchor), Closer: id(t.Closer), Farther: id(t.Farther)}
	}
	return out
}

// joinInts is item indices separated by spaces, as the exports write them.
func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}
