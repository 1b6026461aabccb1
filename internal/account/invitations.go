package account

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"time"

	"github.com/closer-lab/closer/internal/secret"
	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgx/v5"
)

// Invite stores an invitation of email to role in the study, made by by,
// and returns the link's secret (shown once; only its hash is kept).
func (s *Store) Invite(ctx context.Context, studyID int64, email string, role study.Role, by int64) (string, study.Invitation, error) {
	email = NormalizeEmail(email)
	if _, err := mail.ParseAddress(email); err != nil || email == "" || len(email) > maxEmailLen {
		return "", study.Invitation{}, fmt.Errorf("invite: %w", study.Errorf(study.KindInvalid, "%q is not an e-mail address", email))
	}
	if role == study.RoleNone {
		return "", study.Invitation{}, fmt.Errorf("invite: %w", study.Errorf(study.KindInvalid, "choose a role"))
	}
	plain := secret.NewToken()
	inv := study.Invitation{Email: email, StudyID: studyID, Role: role}
	err := s.pool.QueryRow(ctx, `
		INSERT INTO invitations (token_hash, email, study_id, role, invited_by, expires_at)
		VALUES ($1, $2, $3, $4, nullif($5, 0), now() + $6::interval) RETURNING id, created_at, expires_at`,
		secret.Hash(plain), email, studyID, role.String(), by, fmt.Sprintf("%d seconds", int64(study.InvitationTTL/time.Second))).
		Scan(&inv.ID, &inv.CreatedAt, &inv.ExpiresAt)
	if err != nil {
		return "", study.Invitation{}, fmt.Errorf("invite: %w", err)
	}
	return plain, inv, nil
}

// errInvitation is every refusal of a link: unknown, used and expired
// look the same.
var errInvitation = study.Errorf(study.KindNotFound, "this invitation link is unknown, used or expired: ask the study's owner for a new one")

// Invitation returns the unused, unexpired invitation of the link's secret.
func (s *Store) Invitation(ctx context.Context, plain string) (study.Invitation, error) {
	inv, err := scanInvitation(s.pool.QueryRow(ctx, `
		SELECT id, email, study_id, role, created_at, expires_at FROM invitations
		WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()`, secret.Hash(plain)))
	if err != nil {
		return study.Invitation{}, fmt.Errorf("invitation: %w", err)
	}
	return inv, nil
}

// AcceptInvitation uses the invitation of the link's secret once: it
// creates the invited researcher's account with password and gives it the
// role. A used or expired link, or an e-mail that has an account by now,
// is refused and changes nothing.
func (s *Store) AcceptInvitation(ctx context.Context, plain, password string) (study.Admin, study.Invitation, error) {
	var a study.Admin
	var inv study.Invitation
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		inv, err = scanInvitation(tx.QueryRow(ctx, `
			SELECT id, email, study_id, role, created_at, expires_at FROM invitations
			WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() FOR UPDATE`, secret.Hash(plain)))
		if err != nil {
			return err
		}
		a, err = insertAdmin(ctx, tx, inv.Email, password, s.passwordCost, false)
		if isConflict(err) {
			return study.Errorf(study.KindConflict, "an account with the e-mail %s exists: log in, and ask the study's owner to give it the role", inv.Email)
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE invitations SET used_at = now() WHERE id = $1`, inv.ID); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `
			INSERT INTO study_roles (study_id, admin_id, role, granted_by)
			SELECT study_id, $2, role, invited_by FROM invitations WHERE id = $1`, inv.ID, a.ID)
		return err
	})
	if err != nil {
		return study.Admin{}, study.Invitation{}, fmt.Errorf("accept invitation: %w", err)
	}
	return a, inv, nil
}

// PendingInvitations lists a study's unused, unexpired invitations.
func (s *Store) PendingInvitations(ctx context.Context, studyID int64) ([]study.Invitation, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT id, email, study_id, role, created_at, expires_at FROM invitations
		WHERE study_id = $1 AND used_at IS NULL AND expires_at > now() ORDER BY id`, studyID)
	if err != nil {
		return nil, fmt.Errorf("pending invitations: %w", err)
	}
	invs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (study.Invitation, error) { return scanInvitation(r) })
	if err != nil {
		return nil, fmt.Errorf("pending invitations: %w", err)
	}
	return invs, nil
}

func scanInvitation(row pgx.Row) (study.Invitation, error) {
	var inv study.Invitation
	var role string
	err := row.Scan(&inv.ID, &inv.Email, &inv.StudyID, &role, &inv.CreatedAt, &inv.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return inv, errInvitation
	}
	if err != nil {
		return inv, err
	}
	inv.Role, err = study.ParseRole(role)
	return inv, err
}

// isConflict reports whether err is the user-facing conflict insertAdmin
// returns for a taken e-mail.
func isConflict(err error) bool {
	var e *study.Error
	return errors.As(err, &e) && e.Kind == study.KindConflict
}
