package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/media/mediatest"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/store"
	"github.com/closer-lab/closer/internal/study"
)

// wantWrapped fails unless err begins with op, names it once (no method
// wraps what another wrap already named it with), and carries a user
// error of kind k whose message, what users see, is msg.
func wantWrapped(t *testing.T, err error, op string, k study.Kind, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", op)
	}
	if !strings.HasPrefix(err.Error(), op+": ") || strings.Count(err.Error(), op) != 1 {
		t.Errorf("error %q does not begin with %s once", err, op)
	}
	var ue *study.Error
	if !errors.As(err, &ue) {
		t.Fatalf("%s: %v holds no *study.Error", op, err)
	}
	if ue.Kind != k || ue.Msg != msg {
		t.Errorf("%s: user error %v %q, want %v %q", op, ue.Kind, ue.Msg, k, msg)
	}
}

// TestErrorsNameTheOperation: the store's errors begin with the method and
// its arguments, and still carry the user error (its kind and its message
// unchanged) and the database's and the context's errors for errors.As and
// errors.Is; an import's own refusals and its reader's error come back as
// they are.
func TestErrorsNameTheOperation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := store.New(pool)

	_, err := s.StudyBySlug(ctx, "no-such-study")
	wantWrapped(t, err, `store.StudyBySlug("no-such-study")`, study.KindNotFound, "study not found")
	_, err = s.StudyByID(ctx, 4242)
	wantWrapped(t, err, "store.StudyByID(4242)", study.KindNotFound, "study not found")
	// StudyArms names itself and the step that failed.
	_, err = s.StudyArms(ctx, 4242)
	wantWrapped(t, err, "store.StudyArms(4242)", study.KindNotFound, "study not found")
	if !strings.Contains(err.Error(), "store.StudyByID(4242): ") {
		t.Errorf("StudyArms: %q does not name the step that failed", err)
	}

	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "taken", Title: "Taken", QuestionsPerParticipant: 3})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.CreateStudy(ctx, study.StudyInput{Slug: "taken", Title: "Again", QuestionsPerParticipant: 3})
	wantWrapped(t, err, `store.CreateStudy("taken")`, study.KindConflict, `the URL slug "taken" is taken`)
	_, err = s.CreateStudy(ctx, study.StudyInput{Slug: "untitled", QuestionsPerParticipant: 3})
	wantWrapped(t, err, `store.CreateStudy("untitled")`, study.KindInvalid, "the title is empty")
	err = s.SetStudyStatus(ctx, st.ID, "sideways")
	wantWrapped(t, err, fmt.Sprintf("store.SetStudyStatus(%d, %q)", st.ID, "sideways"), study.KindInvalid,
		`unknown status "sideways" (draft, open, paused or closed)`)
	err = s.SetExcluded(ctx, st.ID, "nobody", true)
	wantWrapped(t, err, fmt.Sprintf("store.SetExcluded(%d, %q, true)", st.ID, "nobody"), study.KindNotFound, "participant not found")
	_, err = s.UploadReportByID(ctx, st.ID, "gone")
	wantWrapped(t, err, fmt.Sprintf("store.UploadReportByID(%d, %q)", st.ID, "gone"), study.KindNotFound, "upload report not found")
	_, err = s.RunResult(ctx, 77)
	wantWrapped(t, err, "store.RunResult(77)", study.KindNotFound, "run not found")
	called := false
	err = s.ExportSnapshot(ctx, 4242, func(study.SnapshotReader) error { called = true; return nil })
	wantWrapped(t, err, "store.ExportSnapshot(4242)", study.KindNotFound, "study not found")
	if called {
		t.Error("ExportSnapshot of no study called f")
	}

	// A database error, here the context's, is wrapped as well and still
	// found by errors.Is.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.StudyStats(cancelled, st.ID)
	if op := fmt.Sprintf("store.StudyStats(%d): ", st.ID); err == nil || !strings.HasPrefix(err.Error(), op) || !errors.Is(err, context.Canceled) {
		t.Errorf("StudyStats on a cancelled context: %v, want %s... wrapping context.Canceled", err, op)
	}

	// An image gone between two reads: the reader names itself and the image.
	im, err := media.Check("a.png", mediatest.SmallPNG(1), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AddItems(ctx, st.ID, []media.Image{im}); err != nil {
		t.Fatal(err)
	}
	rd, err := s.OpenItemImage(ctx, im.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM items WHERE study_id = $1`, st.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := rd.Read(make([]byte, 16)); err == nil || !strings.HasPrefix(err.Error(), "store.ImageReader.Read(") || !strings.Contains(err.Error(), im.SHA256) {
		t.Errorf("read of a deleted image: %v, want an error naming the reader and the image", err)
	}
	_, err = s.OpenItemImage(ctx, im.SHA256)
	wantWrapped(t, err, fmt.Sprintf("store.OpenItemImage(%q)", im.SHA256), study.KindNotFound, "image not found")

	// The import: f's error as it is; a step out of order is refused as
	// it is; the database's refusal names the step.
	mine := errors.New("the reader stopped")
	if err := s.ImportStudy(ctx, func(study.ImportWriter) error { return mine }); err != mine {
		t.Errorf("ImportStudy returned f's error as %v", err)
	}
	err = s.ImportStudy(ctx, func(imp study.ImportWriter) error {
		_, err := imp.CopyAnswers(nil)
		return err
	})
	if err == nil || !strings.HasPrefix(err.Error(), "import: ") {
		t.Errorf("answers before the study: %v, want the import's refusal as it is", err)
	}
	err = s.ImportStudy(ctx, func(imp study.ImportWriter) error {
		_, err := imp.CreateStudy(study.StudyInput{Slug: "taken", Title: "Taken", QuestionsPerParticipant: 3})
		return err
	})
	wantWrapped(t, err, `store.ImportTx.CreateStudy("taken")`, study.KindConflict, `the URL slug "taken" is taken`)
}
