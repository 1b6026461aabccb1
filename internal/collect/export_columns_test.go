package collect_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/study"
)

// exportRow is one answer as the test gave it, column by column in the
// order of collect.ExportColumns.
type exportRow struct {
	questionID, participant, externalID string
	anchor, closer, farther             int
	left, right                         int
	design                              string
	responseMS                          string // "" when not sent
	askedAt                             time.Time
	before, after                       time.Time // the Answer call's bounds
}

// TestExportColumnByColumn answers a study as three participants (one with
// an external id, one without, one later excluded; some answers without a
// response time, half choosing the right-hand option) and compares every
// column of every row of triplets.csv with what was asked and answered:
// labels with the items' labels, left and right with the order shown,
// closer and farther with the choice, times within the calls' bounds.
func TestExportColumnByColumn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 9, 5)
	items, err := s.ListItems(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	label := map[int]string{}
	for _, it := range items {
		label[it.Index] = it.Label
	}
	if len(slices.Compact(slices.Sorted(func(yield func(string) bool) {
		for _, l := range label {
			if !yield(l) {
				return
			}
		}
	}))) != len(items) {
		t.Fatal("the test needs distinct labels")
	}

	var rows []exportRow
	var excluded string
	for pi, ext := range []string{"PROLIFIC-1", "", "worker-3"} {
		p, _, err := s.CreateParticipant(ctx, st.ID, ext, nil)
		if err != nil {
			t.Fatal(err)
		}
		if pi == 2 {
			excluded = p.PublicID
		}
		for k := 0; ; k++ {
			pr, err := s.Next(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if pr.Done {
				break
			}
			q := pr.Question
			r := exportRow{questionID: q.ID, participant: p.PublicID, externalID: ext,
				anchor: q.Anchor.Index, left: q.Options[0].Index, right: q.Options[1].Index, design: q.Design, askedAt: q.IssuedAt}
			r.closer, r.farther = q.Options[0].Index, q.Options[1].Index
			if (k+pi)%2 == 1 {
				r.closer, r.farther = q.Options[1].Index, q.Options[0].Index
			}
			var ms *int
			if k != 2 {
				v := 700 + 10*pi + k
				ms = &v
				r.responseMS = strconv.Itoa(v)
			}
			r.before = time.Now()
			if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Closer: r.closer, ResponseMS: ms}); err != nil {
				t.Fatal(err)
			}
			r.after = time.Now()
			rows = append(rows, r)
		}
	}
	if err := s.SetExcluded(ctx, st.ID, excluded, true); err != nil {
		t.Fatal(err)
	}

	check := func(includeExcluded bool) {
		t.Helper()
		var want []exportRow
		for _, r := range rows {
			if includeExcluded || r.participant != excluded {
				want = append(want, r)
			}
		}
		var buf bytes.Buffer
		if err := s.ExportCSVWith(ctx, st.ID, &buf, includeExcluded); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(recs[0], study.ExportColumns) {
			t.Fatalf("header %v, want %v", recs[0], study.ExportColumns)
		}
		if len(recs)-1 != len(want) {
			t.Fatalf("include excluded %v: %d rows, want %d", includeExcluded, len(recs)-1, len(want))
		}
		for i, rec := range recs[1:] {
			w := want[i]
			itoa := strconv.Itoa
			expect := map[string]string{
				"study": st.Slug, "question_id": w.questionID, "participant": w.participant, "external_id": w.externalID,
				"anchor": itoa(w.anchor), "closer": itoa(w.closer), "farther": itoa(w.farther),
				"anchor_label": label[w.anchor], "closer_label": label[w.closer], "farther_label": label[w.farther],
				"left": itoa(w.left), "right": itoa(w.right), "design": w.design, "response_ms": w.responseMS,
				"asked_at": w.askedAt.UTC().Format(time.RFC3339Nano), "kind": "design",
				"arm": "random", // a study without arms: its one arm is named after its design
			}
			for c, name := range study.ExportColumns {
				if name == "answered_at" {
					at, err := time.Parse(time.RFC3339Nano, rec[c])
					// The database's clock and ours agree to well within a second here.
					if err != nil || at.Before(w.before.Add(-time.Second)) || at.After(w.after.Add(time.Second)) || at.Before(w.askedAt) {
						t.Errorf("row %d: answered_at %q outside the answer call [%v, %v] or before asked_at", i+1, rec[c], w.before, w.after)
					}
					continue
				}
				if rec[c] != expect[name] {
					t.Errorf("row %d, %s = %q, want %q", i+1, name, rec[c], expect[name])
				}
			}
		}
	}
	check(false)
	check(true)
}
