package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/closer-lab/closer/internal/csvsafe"
	"github.com/closer-lab/closer/internal/study"
)

// auditCSV streams the whole audit trail as CSV to a site administrator
// (GET /admin/audit.csv; issue 30), every cell formula-neutralised.
func (s *Server) auditCSV(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Disposition", `attachment; filename="audit.csv"`)
	cw := csvsafe.NewWriter(w)
	if err := cw.Write(study.AuditColumns); err != nil {
		return err
	}
	err := s.accounts.EachAuditEntry(r.Context(), func(e study.AuditEntry) error {
		return cw.Write([]string{strconv.FormatInt(e.ID, 10), e.At.UTC().Format(time.RFC3339Nano), optID(e.AdminID),
			e.Email, e.Address, optID(e.StudyID), e.StudySlug, e.Action, e.Detail})
	})
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// optID is an id's cell, empty for none.
func optID(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}
