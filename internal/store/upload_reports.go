package store

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/closer-lab/closer/internal/secret"
	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgx/v5"
)

// saveUploadReportSQL stores report $3 as $1 of study $2 and deletes the
// study's reports older than a day.
const saveUploadReportSQL = `
	WITH old AS (
		DELETE FROM upload_reports WHERE study_id = $2 AND created_at < now() - interval '1 day'
	)
	INSERT INTO upload_reports (id, study_id, report) VALUES ($1, $2, $3)`

// SaveUploadReport keeps an upload's report for the page the upload
// redirects to and returns its id.
func (s *Store) SaveUploadReport(ctx context.Context, studyID int64, rep study.UploadReport) (_ string, err error) {
	defer wrap(&err, "store.SaveUploadReport(%d)", studyID)
	id := secret.NewID()
	rep.Rejected = slices.Clone(rep.Rejected)
	for i, r := range rep.Rejected {
		rep.Rejected[i].Name, rep.Rejected[i].Reason = storableText(r.Name), storableText(r.Reason)
	}
	rep.Refused, rep.GoldRefused = storableText(rep.Refused), storableText(rep.GoldRefused)
	if _, err := s.pool.Exec(ctx, saveUploadReportSQL, id, studyID, rep); err != nil {
		return "", err
	}
	return id, nil
}

// UploadReportByID returns the study's upload report id; an unknown or
// expired one (or another study's) is KindNotFound.
func (s *Store) UploadReportByID(ctx context.Context, studyID int64, id string) (_ study.UploadReport, err error) {
	defer wrap(&err, "store.UploadReportByID(%d, %q)", studyID, id)
	var rep study.UploadReport
	err = s.pool.QueryRow(ctx, `SELECT report FROM upload_reports WHERE id = $1 AND study_id = $2`, id, studyID).Scan(&rep)
	if errors.Is(err, pgx.ErrNoRows) {
		return study.UploadReport{}, study.NotFound("upload report")
	}
	if err != nil {
		return study.UploadReport{}, err
	}
	return rep, nil
}

// storableText is s as PostgreSQL can store it in text or jsonb: NUL and
// invalid UTF-8 (a file name in a zip, a quoted multipart header) become
// U+FFFD.
func storableText(s string) string {
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "\uFFFD"), "\uFFFD")
}
