package web

import (
	"context"

	"github.com/closer-lab/closer/internal/study"
)

// visibleOnly keeps the studies the request's account may see: all for a
// site administrator, those it holds a role on otherwise (issue 30).
func (s *Server) visibleOnly(ctx context.Context, sts []study.StudySummary) ([]study.StudySummary, error) {
	ids, all, err := s.accounts.VisibleStudies(ctx, adminFrom(ctx))
	if err != nil || all {
		return sts, err
	}
	out := sts[:0]
	for _, st := range sts {
		if _, ok := ids[st.Study.ID]; ok {
			out = append(out, st)
		}
	}
	return out, nil
}

// mustSee refuses, as not found, a study the request's account holds no
// role on.
func (s *Server) mustSee(ctx context.Context, studyID int64) error {
	role, err := s.accounts.StudyRole(ctx, adminFrom(ctx), studyID)
	if err != nil {
		return err
	}
	if role == study.RoleNone {
		return study.NotFound("study")
	}
	return nil
}

// ownStudy makes the request's account the owner of a study it has just
// created or imported, and names the study in the request's audit entry.
func (s *Server) ownStudy(ctx context.Context, st study.Study) error {
	a := adminFrom(ctx)
	noteAudit(ctx, "", st.ID, st.Slug)
	return s.accounts.GrantRole(ctx, st.ID, a.ID, study.RoleOwner, a.ID)
}
