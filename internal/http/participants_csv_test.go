package http_test

import (
	"context"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	closerhttp "github.com/closer-lab/closer/internal/http"
	"github.com/closer-lab/closer/internal/recompute"
)

// participants.csv lists every participant oldest first with their ids,
// progress, code, exclusion and the last recompute's quality figures; a
// participant who always picks the left image has a left share of 1, one
// who always picks the right 0. An external id that a spreadsheet would
// run is neutralised.
func TestParticipantsCSV(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("pcsv", 8, 4, "open")
	admin := a.admin()
	ctx := context.Background()
	answerAll := func(ext string, left bool) collect.Participant {
		t.Helper()
		p, _, err := a.store.CreateParticipant(ctx, st.ID, ext, nil)
		if err != nil {
			t.Fatal(err)
		}
		for {
			pr, err := a.store.Next(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if pr.Done {
				return p
			}
			c := pr.Question.Right.Index
			if left {
				c = pr.Question.Left.Index
			}
			if _, err := a.store.Answer(ctx, p.ID, collect.AnswerInput{QuestionID: pr.Question.ID, Closer: c}); err != nil {
				t.Fatal(err)
			}
		}
	}
	lefty := answerAll("=HYPERLINK(1)", true)
	righty := answerAll("r-1", false)
	if err := a.store.SetExcluded(ctx, st.ID, righty.PublicID, true); err != nil {
		t.Fatal(err)
	}
	idle, _, err := a.store.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	read := func() [][]string {
		t.Helper()
		res := a.do(admin, "GET", "/admin/studies/pcsv/participants.csv", nil, nil)
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") {
			t.Fatalf("participants.csv: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
		recs, err := csv.NewReader(strings.NewReader(res.body)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(recs[0], ",") != strings.Join(closerhttp.ParticipantsColumns, ",") || len(recs) != 4 {
			t.Fatalf("participants.csv:\n%s", res.body)
		}
		return recs[1:]
	}
	col := func(name string) int {
		for i, c := range closerhttp.ParticipantsColumns {
			if c == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	// Before any recompute: the people, no figures.
	rows := read()
	if rows[0][0] != lefty.PublicID || rows[1][0] != righty.PublicID || rows[2][0] != idle.PublicID {
		t.Fatalf("order %v %v %v, want oldest first", rows[0][0], rows[1][0], rows[2][0])
	}
	if rows[0][col("external_id")] != "'=HYPERLINK(1)" || rows[0][col("answers")] != "4" || rows[0][col("completion_code")] == "" ||
		rows[0][col("completed_at")] == "" || rows[0][col("left_share")] != "" {
		t.Fatalf("first participant before a recompute: %v", rows[0])
	}
	if rows[1][col("excluded")] != "true" || rows[0][col("excluded")] != "false" || rows[2][col("answers")] != "0" || rows[2][col("completed_at")] != "" {
		t.Fatalf("rows: %v", rows)
	}
	if _, err := recompute.Run(ctx, a.store, st.ID, 0); err != nil {
		t.Fatal(err)
	}
	rows = read()
	if rows[0][col("left_share")] != "1" || rows[1][col("left_share")] != "0" || rows[2][col("left_share")] != "" {
		t.Fatalf("left shares %q %q %q, want 1, 0 and none", rows[0][col("left_share")], rows[1][col("left_share")], rows[2][col("left_share")])
	}
	if rows[0][col("median_response_ms")] != "" || rows[0][col("embedding_agreement")] == "" {
		t.Fatalf("figures of the first participant: %v", rows[0])
	}
}
