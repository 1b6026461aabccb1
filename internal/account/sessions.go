package account

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/closer-lab/closer/internal/secret"
	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgx/v5"
)

// NewSession is what starting a session needs.
type NewSession struct {
	AdminID   int64
	TTL       time.Duration
	UserAgent string // cut to maxUserAgentLen characters
	Address   string // the client's IP address
	// Replaces is the session token the browser presented, if any: it is
	// revoked in the same transaction (whoever's it was), so a login never
	// leaves an older session alive in that browser.
	Replaces string
}

// maxUserAgentLen bounds the stored user agent (characters).
const maxUserAgentLen = 200

// lastSeenGranularity is how stale last_seen_at may be: a session's row is
// written at most once per this period, not on every request.
const lastSeenGranularity = time.Minute

// CreateSession starts a browser session for an admin and returns its
// secret token (only its hash is stored). Expired sessions are removed on
// the way.
func (s *Store) CreateSession(ctx context.Context, n NewSession) (string, error) {
	token := secret.NewToken()
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM sessions WHERE expires_at < now()`); err != nil {
			return err
		}
		if n.Replaces != "" {
			if _, err := tx.Exec(ctx, `DELETE FROM sessions WHERE token_hash = $1`, secret.Hash(n.Replaces)); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO sessions (token_hash, admin_id, expires_at, user_agent, address)
			VALUES ($1, $2, now() + $3::interval, $4, $5)`,
			secret.Hash(token), n.AdminID, fmt.Sprintf("%d seconds", int64(n.TTL/time.Second)),
			cleanLine(n.UserAgent, maxUserAgentLen), cleanLine(n.Address, 64))
		return err
	})
	if err != nil {
		return "", fmt.Errorf("create session: %w", err)
	}
	return token, nil
}

// cleanLine makes s storable and displayable as one line of text: valid
// UTF-8, no control characters (NUL included), at most max characters.
func cleanLine(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max])
	}
	return strings.TrimSpace(s)
}

// SessionAdmin returns the admin of an unexpired session and notes that the
// session was seen (at most once a minute).
func (s *Store) SessionAdmin(ctx context.Context, token string) (study.Admin, error) {
	var a study.Admin
	err := s.pool.QueryRow(ctx, `
		WITH seen AS (
			UPDATE sessions SET last_seen_at = now()
			WHERE token_hash = $1 AND expires_at > now() AND last_seen_at < now() - $2::interval)
		SELECT a.id, a.email, a.created_at, a.site_admin FROM sessions s JOIN admins a ON a.id = s.admin_id
		WHERE s.token_hash = $1 AND s.expires_at > now()`,
		secret.Hash(token), fmt.Sprintf("%d seconds", int64(lastSeenGranularity/time.Second))).
		Scan(&a.ID, &a.Email, &a.CreatedAt, &a.SiteAdmin)
	if errors.Is(err, pgx.ErrNoRows) {
		return study.Admin{}, fmt.Errorf("session admin: %w", study.Errorf(study.KindUnauthorized, "not logged in"))
	}
	if err != nil {
		return study.Admin{}, fmt.Errorf("session admin: %w", err)
	}
	return a, nil
}

// ListSessions returns an admin's unexpired sessions, the most recently
// seen first; the one whose token is current is marked.
func (s *Store) ListSessions(ctx context.Context, adminID int64, current string) ([]study.Session, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT id, created_at, last_seen_at, expires_at, user_agent, address, token_hash = $2
		FROM sessions WHERE admin_id = $1 AND expires_at > now()
		ORDER BY last_seen_at DESC, id DESC`, adminID, secret.Hash(current))
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	ss, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (study.Session, error) {
		var x study.Session
		err := r.Scan(&x.ID, &x.CreatedAt, &x.LastSeenAt, &x.ExpiresAt, &x.UserAgent, &x.Address, &x.Current)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return ss, nil
}

// RevokeSession ends one of an admin's sessions by its id.
func (s *Store) RevokeSession(ctx context.Context, adminID, id int64) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM sessions WHERE id = $1 AND admin_id = $2`, id, adminID)
	if err != nil {
		return fmt.Errorf("revoke session: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("revoke session: %w", study.NotFound("session"))
	}
	return nil
}

// RevokeOtherSessions ends every session of an admin except the one whose
// token is current, and returns how many it ended.
func (s *Store) RevokeOtherSessions(ctx context.Context, adminID int64, current string) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM sessions WHERE admin_id = $1 AND token_hash <> $2`, adminID, secret.Hash(current))
	if err != nil {
		return 0, fmt.Errorf("revoke other sessions: %w", err)
	}
	return tag.RowsAffected(), nil
}

// DeleteSession ends a session (log out). Unknown tokens are ignored.
func (s *Store) DeleteSession(ctx context.Context, token string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM sessions WHERE token_hash = $1`, secret.Hash(token)); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}
