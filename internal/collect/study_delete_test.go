package collect_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/study"
)

// A study marked deleted is gone from every lookup at once, closed to its
// participants, and its slug is free; its rows stay until the purge.
func TestMarkedStudyHidden(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 5, 3)
	p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := s.Next(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index}); err != nil {
		t.Fatal(err)
	}
	pr, err = s.Next(ctx, p.ID) // an open question when the study goes
	if err != nil {
		t.Fatal(err)
	}
	// Its recompute is due (a new answer, never run) until it is marked.
	if due, err := s.DueStudies(ctx); err != nil || len(due) != 1 || due[0] != st.ID {
		t.Fatalf("due before the mark: %v %v", due, err)
	}

	if err := s.MarkStudyDeleted(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkStudyDeleted(ctx, st.ID); collect.KindOf(err) != study.KindNotFound {
		t.Fatalf("second mark: %v", err)
	}
	for _, slug := range []string{st.Slug, fmt.Sprintf("deleted:%d", st.ID)} {
		if _, err := s.StudyBySlug(ctx, slug); collect.KindOf(err) != study.KindNotFound {
			t.Errorf("study by slug %q: %v", slug, err)
		}
	}
	if _, err := s.StudyByID(ctx, st.ID); collect.KindOf(err) != study.KindNotFound {
		t.Errorf("study by id: %v", err)
	}
	if sts, err := s.ListStudies(ctx); err != nil || len(sts) != 0 {
		t.Errorf("list: %v %v", sts, err)
	}
	if n, err := s.CountStudies(ctx); err != nil || n != 0 {
		t.Errorf("count: %d %v", n, err)
	}
	in := study.StudyInput{Slug: "other", Title: "T", QuestionsPerParticipant: 3, Status: study.StatusOpen}
	if _, err := s.UpdateStudy(ctx, st.ID, in); collect.KindOf(err) != study.KindNotFound {
		t.Errorf("update: %v", err)
	}
	if err := s.ExportCSV(ctx, st.ID, io.Discard); collect.KindOf(err) != study.KindNotFound {
		t.Errorf("export: %v", err)
	}
	if due, err := s.DueStudies(ctx); err != nil || len(due) != 0 {
		t.Errorf("due after the mark: %v %v", due, err)
	}
	if _, err := s.StartRun(ctx, st.ID, 0, 1, 5, map[string]int{}); collect.KindOf(err) != study.KindNotFound {
		t.Errorf("start run: %v", err)
	}
	// Its participants are told it is closed.
	if _, err := s.Next(ctx, p.ID); collect.KindOf(err) != study.KindNotOpen {
		t.Errorf("next: %v", err)
	}
	if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index}); collect.KindOf(err) != study.KindNotOpen {
		t.Errorf("answer: %v", err)
	}
	if _, _, err := s.CreateParticipant(ctx, st.ID, "", nil); collect.KindOf(err) != study.KindNotOpen {
		t.Errorf("join: %v", err)
	}
	// The slug is free at once.
	again, err := s.CreateStudy(ctx, study.StudyInput{Slug: st.Slug, Title: "Again", QuestionsPerParticipant: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.StudyBySlug(ctx, st.Slug); err != nil || got.ID != again.ID {
		t.Fatalf("the slug's new study: %+v %v", got, err)
	}
	// The rows wait for the purge; only the purge may delete the row.
	var answers int
	if err := collect.PoolOf(s).QueryRow(ctx, `SELECT count(*) FROM answers WHERE study_id = $1`, st.ID).Scan(&answers); err != nil || answers != 1 {
		t.Fatalf("answers kept for the purge: %d %v", answers, err)
	}
	if ids, err := s.StudiesToPurge(ctx); err != nil || len(ids) != 1 || ids[0] != st.ID {
		t.Fatalf("studies to purge: %v %v", ids, err)
	}
	if _, err := s.DeletePurgedStudy(ctx, again.ID); err != nil {
		t.Fatal(err)
	} else if _, err := s.StudyByID(ctx, again.ID); err != nil {
		t.Fatalf("DeletePurgedStudy deleted a live study: %v", err)
	}
}

// The mark waits for an upload that holds the study's row only so long,
// then says the study is busy: the delete request never hangs.
func TestMarkStudyDeletedBusy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 3, 3)
	tx, err := collect.PoolOf(s).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT FROM studies WHERE id = $1 FOR UPDATE`, st.ID); err != nil { // as AddItems does
		t.Fatal(err)
	}
	mctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := s.MarkStudyDeleted(mctx, st.ID); collect.KindOf(err) != study.KindConflict {
		t.Fatalf("mark while locked: %v", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkStudyDeleted(ctx, st.ID); err != nil {
		t.Fatalf("mark once unlocked: %v", err)
	}
}

// An upload that looked the study up before it was marked deleted stores
// nothing: the items' insert locks only a study that is not marked.
func TestUploadToMarkedStudyStoresNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 4, 3)
	if err := s.MarkStudyDeleted(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	added, _, err := s.AddItems(ctx, st.ID, demo.Items()[4:6])
	if collect.KindOf(err) != study.KindNotFound || len(added) != 0 {
		t.Fatalf("upload to a deleted study: %d added, err %v; want not found", len(added), err)
	}
	var n int
	if err := collect.PoolOf(s).QueryRow(ctx, `SELECT count(*) FROM items WHERE study_id = $1`, st.ID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Fatalf("%d items, want the 4 from before the deletion", n)
	}
}
