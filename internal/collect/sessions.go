package collect

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// CreateSession starts a browser session for an admin lasting ttl and
// returns its secret token (only its hash is stored). Expired sessions are
// removed on the way.
func (s *Store) CreateSession(ctx context.Context, adminID int64, ttl time.Duration) (string, error) {
	token := newToken()
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM sessions WHERE expires_at < now()`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx,
			`INSERT INTO sessions (token_hash, admin_id, expires_at) VALUES ($1, $2, now() + $3::interval)`,
			hashToken(token), adminID, fmt.Sprintf("%d seconds", int64(ttl/time.Second)))
		return err
	})
	if err != nil {
		return "", fmt.Errorf("create session: %w", err)
	}
	return token, nil
}

// SessionAdmin returns the admin of an unexpired session.
func (s *Store) SessionAdmin(ctx context.Context, token string) (Admin, error) {
	var a Admin
	err := s.pool.QueryRow(ctx, `
		SELECT a.id, a.email, a.created_at FROM sessions s JOIN admins a ON a.id = s.admin_id
		WHERE s.token_hash = $1 AND s.expires_at > now()`, hashToken(token)).
		Scan(&a.ID, &a.Email, &a.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Admin{}, fmt.Errorf("session admin: %w", userErr(KindUnauthorized, "not logged in"))
	}
	if err != nil {
		return Admin{}, fmt.Errorf("session admin: %w", err)
	}
	return a, nil
}

// DeleteSession ends a session (log out). Unknown tokens are ignored.
func (s *Store) DeleteSession(ctx context.Context, token string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM sessions WHERE token_hash = $1`, hashToken(token)); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}
