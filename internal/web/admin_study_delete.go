package web

import (
	"context"
	"errors"
	"net/http"

	"github.com/closer-lab/closer/internal/recompute"
)

// Purges is what the delete action needs of the purge jobs
// (*purge.Enqueuer): ask for a study marked deleted to be purged.
type Purges interface {
	Enqueue(ctx context.Context, studyID int64) error
}

// deleteStudy deletes a study after the confirmation box was ticked
// (POST /admin/studies/{slug}/delete). It only marks the study deleted, in
// one short transaction: the study disappears from every page and the API,
// participants are told it is closed, and its slug is free at once. A
// background job deletes its rows (internal/purge), which for a large
// study takes longer than a request may.
func (s *Server) deleteStudy(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	if err := r.ParseForm(); err != nil {
		return badRequest("unreadable form")
	}
	if r.PostForm.Get("confirm") != "yes" {
		return &httpError{status: http.StatusUnprocessableEntity, msg: "tick the box to confirm the deletion"}
	}
	ctx := r.Context()
	if err := s.store.MarkStudyDeleted(ctx, st.ID); err != nil {
		return err
	}
	s.log.Info("study deleted; its rows are purged in the background", "study", st.ID, "slug", st.Slug)
	// The mark is the deletion; what follows only saves time, so a failure
	// is logged and the request succeeds. A recompute left running finds
	// its study gone when it stores its run; a purge not enqueued here is
	// enqueued by the purge scan of a worker replica within a minute.
	if s.cfg.Jobs != nil {
		if err := s.cfg.Jobs.Cancel(ctx, st.ID); err != nil && !errors.Is(err, recompute.ErrNothingToCancel) {
			s.log.Warn("cancelling the deleted study's recompute", "study", st.ID, "err", err)
		}
	}
	if s.cfg.Purges != nil {
		if err := s.cfg.Purges.Enqueue(ctx, st.ID); err != nil {
			s.log.Warn("enqueueing the deleted study's purge; the purge scan will", "study", st.ID, "err", err)
		}
	}
	http.Redirect(w, r, "/admin", http.StatusSeeOther)
	return nil
}
