package account

import (
	"context"
	"errors"
	"fmt"

	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgx/v5"
)

// StudyRole is the role a holds in the study: RoleOwner for a site
// administrator, the granted role otherwise (RoleNone without one).
func (s *Store) StudyRole(ctx context.Context, a study.Admin, studyID int64) (study.Role, error) {
	if a.SiteAdmin {
		return study.RoleOwner, nil
	}
	var name string
	err := s.pool.QueryRow(ctx, `SELECT role FROM study_roles WHERE study_id = $1 AND admin_id = $2`, studyID, a.ID).Scan(&name)
	if errors.Is(err, pgx.ErrNoRows) {
		return study.RoleNone, nil
	}
	if err != nil {
		return study.RoleNone, fmt.Errorf("study role: %w", err)
	}
	return study.ParseRole(name)
}

// VisibleStudies returns the ids of the studies a holds a role on, and
// all = true for a site administrator, who sees every study.
func (s *Store) VisibleStudies(ctx context.Context, a study.Admin) (ids map[int64]study.Role, all bool, err error) {
	if a.SiteAdmin {
		return nil, true, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT study_id, role FROM study_roles WHERE admin_id = $1`, a.ID)
	if err != nil {
		return nil, false, fmt.Errorf("visible studies: %w", err)
	}
	ids = map[int64]study.Role{}
	var id int64
	var name string
	_, err = pgx.ForEachRow(rows, []any{&id, &name}, func() error {
		r, err := study.ParseRole(name)
		ids[id] = r
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("visible studies: %w", err)
	}
	return ids, false, nil
}

// GrantRole gives the account adminID the role in the study (replacing the
// one it held), as granted by by. Taking the last owner's ownership away
// is refused: a study always has an owner once it has one.
func (s *Store) GrantRole(ctx context.Context, studyID, adminID int64, role study.Role, by int64) error {
	if role == study.RoleNone {
		return fmt.Errorf("grant role: %w", study.Errorf(study.KindInvalid, "choose a role"))
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if role != study.RoleOwner {
			if err := refuseLastOwner(ctx, tx, studyID, adminID); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO study_roles (study_id, admin_id, role, granted_by) VALUES ($1, $2, $3, nullif($4, 0))
			ON CONFLICT (study_id, admin_id) DO UPDATE SET role = excluded.role, granted_by = excluded.granted_by, granted_at = now()`,
			studyID, adminID, role.String(), by)
		return err
	})
	if err != nil {
		return fmt.Errorf("grant role: %w", err)
	}
	return nil
}

// RevokeRole takes the account's role in the study away; the last owner's
// is refused.
func (s *Store) RevokeRole(ctx context.Context, studyID, adminID int64) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := refuseLastOwner(ctx, tx, studyID, adminID); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM study_roles WHERE study_id = $1 AND admin_id = $2`, studyID, adminID)
		if err == nil && tag.RowsAffected() == 0 {
			return study.NotFound("role")
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("revoke role: %w", err)
	}
	return nil
}

// refuseLastOwner refuses to change adminID's role when it is the study's
// only owner. It locks the study's owners' rows, so two owners taking each
// other's ownership at once cannot leave none.
func refuseLastOwner(ctx context.Context, tx pgx.Tx, studyID, adminID int64) error {
	rows, err := tx.Query(ctx, `SELECT admin_id FROM study_roles WHERE study_id = $1 AND role = 'owner' FOR UPDATE`, studyID)
	if err != nil {
		return err
	}
	owners, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	if len(owners) == 1 && owners[0] == adminID {
		return study.Errorf(study.KindConflict, "the study's only owner keeps the role: make someone else owner first")
	}
	return nil
}

// Members lists the accounts holding a role in the study, owners first.
func (s *Store) Members(ctx context.Context, studyID int64) ([]study.Member, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT r.admin_id, a.email, r.role, r.granted_at FROM study_roles r JOIN admins a ON a.id = r.admin_id
		WHERE r.study_id = $1
		ORDER BY CASE r.role WHEN 'owner' THEN 0 WHEN 'editor' THEN 1 ELSE 2 END, a.email`, studyID)
	if err != nil {
		return nil, fmt.Errorf("members: %w", err)
	}
	ms, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (study.Member, error) {
		var m study.Member
		var name string
		if err := r.Scan(&m.AdminID, &m.Email, &name, &m.GrantedAt); err != nil {
			return m, err
		}
		var err error
		m.Role, err = study.ParseRole(name)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("members: %w", err)
	}
	return ms, nil
}

// AdminByEmail returns the account with the e-mail.
func (s *Store) AdminByEmail(ctx context.Context, email string) (study.Admin, error) {
	var a study.Admin
	err := s.pool.QueryRow(ctx, `SELECT id, email, created_at, site_admin FROM admins WHERE email = $1`, NormalizeEmail(email)).
		Scan(&a.ID, &a.Email, &a.CreatedAt, &a.SiteAdmin)
	if errors.Is(err, pgx.ErrNoRows) {
		return study.Admin{}, fmt.Errorf("admin by e-mail: %w", study.NotFound("account"))
	}
	if err != nil {
		return study.Admin{}, fmt.Errorf("admin by e-mail: %w", err)
	}
	return a, nil
}
