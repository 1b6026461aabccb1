package account

import (
	"context"
	"fmt"

	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgx/v5"
)

// Audit appends an entry to the audit trail.
func (s *Store) Audit(ctx context.Context, e study.AuditEntry) error {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO audit_log (admin_id, email, address, about_study, study_slug, action, detail)
		VALUES (nullif($1, 0), $2, $3, nullif($4, 0), $5, $6, $7)`,
		e.AdminID, e.Email, e.Address, e.StudyID, e.StudySlug, e.Action, e.Detail)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// StudyHistory returns the study's latest audit entries, newest first.
func (s *Store) StudyHistory(ctx context.Context, studyID int64, limit int) ([]study.AuditEntry, error) {
	rows, err := s.pool.Query(ctx, auditSelect+` WHERE about_study = $1 ORDER BY id DESC LIMIT $2`, studyID, limit)
	if err != nil {
		return nil, fmt.Errorf("study history: %w", err)
	}
	es, err := pgx.CollectRows(rows, scanAudit)
	if err != nil {
		return nil, fmt.Errorf("study history: %w", err)
	}
	return es, nil
}

// EachAuditEntry calls f with every entry of the audit trail, oldest
// first, from one snapshot read through a cursor (the log may be long).
func (s *Store) EachAuditEntry(ctx context.Context, f func(study.AuditEntry) error) error {
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DECLARE audit_export NO SCROLL CURSOR FOR `+auditSelect+` ORDER BY id`); err != nil {
			return err
		}
		for {
			rows, err := tx.Query(ctx, `FETCH 1000 FROM audit_export`)
			if err != nil {
				return err
			}
			es, err := pgx.CollectRows(rows, scanAudit)
			if err != nil {
				return err
			}
			for _, e := range es {
				if err := f(e); err != nil {
					return err
				}
			}
			if len(es) < 1000 {
				return nil
			}
		}
	})
	if err != nil {
		return fmt.Errorf("audit export: %w", err)
	}
	return nil
}

const auditSelect = `SELECT id, at, coalesce(admin_id, 0), email, address, coalesce(about_study, 0), study_slug, action, detail FROM audit_log`

func scanAudit(r pgx.CollectableRow) (study.AuditEntry, error) {
	var e study.AuditEntry
	err := r.Scan(&e.ID, &e.At, &e.AdminID, &e.Email, &e.Address, &e.StudyID, &e.StudySlug, &e.Action, &e.Detail)
	return e, err
}
