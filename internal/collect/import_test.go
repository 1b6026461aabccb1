package collect_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// rowsOf is a collect.RowSource over rows; with err set, reading stops
// after stopAfter rows with that error.
type rowsOf[T any] struct {
	rows      []T
	i         int
	err       error
	stopAfter int
}

func (r *rowsOf[T]) Next() bool {
	if r.err != nil && r.i >= r.stopAfter {
		return false
	}
	if r.i >= len(r.rows) {
		return false
	}
	r.i++
	return true
}
func (r *rowsOf[T]) Value() T { return r.rows[r.i-1] }
func (r *rowsOf[T]) Err() error {
	if r.err != nil && r.i >= r.stopAfter {
		return r.err
	}
	return nil
}

func rows[T any](v ...T) *rowsOf[T] { return &rowsOf[T]{rows: v} }

// importRows are a small study to import: three label-only items, two
// participants (keys a and b) and two answers (lines 2 and 3).
func importRows() ([]study.ImportItem, []study.ImportParticipant, []study.ImportAnswer) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	done := t0.Add(time.Hour)
	items := []study.ImportItem{
		{Index: 0, Label: "x", FileName: "x", SHA256: "label-0"},
		{Index: 1, Label: "y", FileName: "y", SHA256: "label-1"},
		{Index: 2, Label: "z", FileName: "z", SHA256: "label-2"},
	}
	parts := []study.ImportParticipant{
		{Key: "a", ExternalID: "ext-a", CreatedAt: t0},
		{Key: "b", CompletionCode: "CODE", CreatedAt: t0, CompletedAt: &done},
	}
	ms := 900
	answers := []study.ImportAnswer{
		{Line: 2, Participant: "a", Anchor: 0, Left: 1, Right: 2, Closer: 2, Farther: 1, Design: "random", ResponseMS: &ms, AskedAt: t0, AnsweredAt: t0.Add(time.Second)},
		{Line: 3, Participant: "b", Anchor: 0, Left: 1, Right: 2, Closer: 1, Farther: 2, Design: "random", AskedAt: t0, AnsweredAt: t0.Add(2 * time.Second)},
	}
	return items, parts, answers
}

// TestImportStudyStoresRows imports the small study and reads it back
// through a snapshot: the rows are stored as given, in order, each
// participant's answers are theirs, and the vote table counts anchor 0's
// pair (1, 2) once each way (answer 1 chose 2, answer 2 chose 1).
func TestImportStudyStoresRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	items, parts, answers := importRows()
	var st study.Study
	var n [3]int
	err := s.ImportStudy(ctx, func(imp study.ImportWriter) error {
		var err error
		if st, err = imp.CreateStudy(study.StudyInput{Slug: " imported ", Title: "Imported", QuestionsPerParticipant: 3}); err != nil {
			return err
		}
		if err := imp.SetRecomputeSettings(study.RecomputeSettings{MinNewAnswers: 9, MaxAge: time.Minute, Method: "ste", Dim: 2}); err != nil {
			return err
		}
		if err := imp.SetDesignConfig([]byte(`{"seed": 7, "future_field": true}`)); err != nil {
			return err
		}
		if n[0], err = imp.CopyItems(rows(items...)); err != nil {
			return err
		}
		if n[1], err = imp.CopyParticipants(rows(parts...)); err != nil {
			return err
		}
		n[2], err = imp.CopyAnswers(rows(answers...))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != [3]int{3, 2, 2} || st.Slug != "imported" || st.Status != study.StatusDraft {
		t.Fatalf("counts %v, study %+v", n, st)
	}

	err = s.ExportSnapshot(ctx, st.ID, func(sn study.SnapshotReader) error {
		rs, err := sn.Settings()
		if err != nil || rs.MinNewAnswers != 9 || rs.MaxAge != time.Minute || rs.Method != "ste" {
			t.Errorf("settings %+v %v", rs, err)
		}
		raw, err := sn.DesignConfig()
		if err != nil || !strings.Contains(string(raw), `"future_field": true`) {
			t.Errorf("design config %s %v, want the JSON as given", raw, err)
		}
		var labels []string
		if err := sn.Items(func(it study.SnapshotItem) error {
			labels = append(labels, it.Label)
			if it.Data != nil {
				t.Errorf("item %d has an image", it.Index)
			}
			return nil
		}); err != nil {
			return err
		}
		if strings.Join(labels, ",") != "x,y,z" {
			t.Errorf("items %v", labels)
		}
		ids := map[string]string{} // public id -> the key given
		var got []study.SnapshotParticipant
		if err := sn.Participants(func(p study.SnapshotParticipant) error {
			got = append(got, p)
			return nil
		}); err != nil {
			return err
		}
		if len(got) != 2 || got[0].ExternalID != "ext-a" || got[0].CompletionCode != "" ||
			got[1].ExternalID != "" || got[1].CompletionCode != "CODE" || got[1].CompletedAt == nil || !got[1].CompletedAt.Equal(*parts[1].CompletedAt) {
			t.Errorf("participants %+v", got)
		}
		for i, p := range got {
			ids[p.PublicID] = parts[i].Key
		}
		i := 0
		return sn.Answers(func(a study.SnapshotAnswer) error {
			want := answers[i]
			if ids[a.Participant] != want.Participant || a.Closer != want.Closer || a.Farther != want.Farther ||
				!a.AnsweredAt.Equal(want.AnsweredAt) || (a.ResponseMS == nil) != (want.ResponseMS == nil) {
				t.Errorf("answer %d: %+v, want %+v", i, a, want)
			}
			i++
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	var jCloser, kCloser int
	if err := pool.QueryRow(ctx, `SELECT j_closer, k_closer FROM votes WHERE study_id = $1 AND anchor = 0 AND j = 1 AND k = 2`, st.ID).
		Scan(&jCloser, &kCloser); err != nil || jCloser != 1 || kCloser != 1 {
		t.Errorf("votes (0; 1, 2) = %d, %d (%v), want 1, 1", jCloser, kCloser, err)
	}
}

// TestImportStudyRefusals: the database's refusals come back typed and as
// user errors (a 422, never a 500), a reader's own error comes back as it
// is, steps out of order are refused, and nothing of a refused import is
// stored.
func TestImportStudyRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	readErr := errors.New("the reader stopped")
	// run imports the small study with spoil applied to its rows.
	run := func(spoil func(items *rowsOf[study.ImportItem], parts *rowsOf[study.ImportParticipant], answers *rowsOf[study.ImportAnswer])) error {
		items, parts, answers := importRows()
		ir, pr, ar := rows(items...), rows(parts...), rows(answers...)
		spoil(ir, pr, ar)
		return s.ImportStudy(ctx, func(imp study.ImportWriter) error {
			if _, err := imp.CreateStudy(study.StudyInput{Slug: "refused", Title: "Refused", QuestionsPerParticipant: 3}); err != nil {
				return err
			}
			if _, err := imp.CopyItems(ir); err != nil {
				return err
			}
			if _, err := imp.CopyParticipants(pr); err != nil {
				return err
			}
			_, err := imp.CopyAnswers(ar)
			return err
		})
	}
	for _, c := range []struct {
		name  string
		spoil func(*rowsOf[study.ImportItem], *rowsOf[study.ImportParticipant], *rowsOf[study.ImportAnswer])
		rows  string // the RepeatedRowError's Rows, or "" for none
		line  int    // the UnknownParticipantError's line, or 0 for none
	}{
		{"repeated index", func(i *rowsOf[study.ImportItem], _ *rowsOf[study.ImportParticipant], _ *rowsOf[study.ImportAnswer]) {
			i.rows[2].Index = 1
		}, "items", 0},
		{"repeated image", func(i *rowsOf[study.ImportItem], _ *rowsOf[study.ImportParticipant], _ *rowsOf[study.ImportAnswer]) {
			i.rows[2].SHA256 = "label-0"
		}, "items", 0},
		{"repeated participant", func(_ *rowsOf[study.ImportItem], p *rowsOf[study.ImportParticipant], _ *rowsOf[study.ImportAnswer]) {
			p.rows[1].Key = "a"
		}, "participants", 0},
		{"repeated comparison", func(_ *rowsOf[study.ImportItem], _ *rowsOf[study.ImportParticipant], a *rowsOf[study.ImportAnswer]) {
			a.rows[1].Participant = "a" // the same (0; 1, 2) as line 2, of design random
		}, "questions", 0},
		{"unknown participant", func(_ *rowsOf[study.ImportItem], _ *rowsOf[study.ImportParticipant], a *rowsOf[study.ImportAnswer]) {
			a.rows[1].Participant = "zz"
		}, "", 3},
	} {
		err := run(c.spoil)
		if collect.KindOf(err) != study.KindInvalid {
			t.Errorf("%s: %v is not a user error (KindInvalid)", c.name, err)
		}
		var re *study.RepeatedRowError
		var ue *study.UnknownParticipantError
		switch {
		case c.rows != "" && (!errors.As(err, &re) || re.Rows != c.rows):
			t.Errorf("%s: %v, want a repeated row of %s", c.name, err, c.rows)
		case c.rows == "participants" && !strings.Contains(re.Detail, "=(a)"):
			t.Errorf("%s: detail %q does not name the key a", c.name, re.Detail)
		case c.line != 0 && (!errors.As(err, &ue) || ue.Line != c.line || ue.Key != "zz"):
			t.Errorf("%s: %v, want line %d's unknown participant zz", c.name, err, c.line)
		}
	}

	// A reader's error, in each of the three copies, comes back as it is
	// (not as COPY's failure).
	for i, spoil := range []func(*rowsOf[study.ImportItem], *rowsOf[study.ImportParticipant], *rowsOf[study.ImportAnswer]){
		func(it *rowsOf[study.ImportItem], _ *rowsOf[study.ImportParticipant], _ *rowsOf[study.ImportAnswer]) {
			it.err, it.stopAfter = readErr, 1
		},
		func(_ *rowsOf[study.ImportItem], p *rowsOf[study.ImportParticipant], _ *rowsOf[study.ImportAnswer]) {
			p.err, p.stopAfter = readErr, 1
		},
		func(_ *rowsOf[study.ImportItem], _ *rowsOf[study.ImportParticipant], a *rowsOf[study.ImportAnswer]) {
			a.err, a.stopAfter = readErr, 1
		},
	} {
		if err := run(spoil); err != readErr {
			t.Errorf("reader error in copy %d came back as %v", i, err)
		}
	}

	// Out of order.
	items, parts, answers := importRows()
	for name, f := range map[string]func(imp study.ImportWriter) error{
		"items before the study": func(imp study.ImportWriter) error {
			_, err := imp.CopyItems(rows(items...))
			return err
		},
		"answers before participants": func(imp study.ImportWriter) error {
			if _, err := imp.CreateStudy(study.StudyInput{Slug: "order", Title: "Order", QuestionsPerParticipant: 3}); err != nil {
				return err
			}
			_, err := imp.CopyAnswers(rows(answers...))
			return err
		},
		"participants twice": func(imp study.ImportWriter) error {
			if _, err := imp.CreateStudy(study.StudyInput{Slug: "order", Title: "Order", QuestionsPerParticipant: 3}); err != nil {
				return err
			}
			if _, err := imp.CopyParticipants(rows(parts...)); err != nil {
				return err
			}
			_, err := imp.CopyParticipants(rows[study.ImportParticipant]())
			return err
		},
	} {
		if err := s.ImportStudy(ctx, f); err == nil || !strings.HasPrefix(err.Error(), "import: ") {
			t.Errorf("%s: %v, want the import's refusal", name, err)
		}
	}

	var studies, participants int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM studies), (SELECT count(*) FROM participants)`).Scan(&studies, &participants); err != nil {
		t.Fatal(err)
	}
	if studies != 0 || participants != 0 {
		t.Errorf("refused imports stored %d studies and %d participants", studies, participants)
	}
}
