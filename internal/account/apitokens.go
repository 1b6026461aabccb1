package account

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/closer-lab/closer/internal/secret"
	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgx/v5"
)

// CreateAPIToken creates a token for an admin and returns its secret.
func (s *Store) CreateAPIToken(ctx context.Context, adminID int64, name string) (string, study.APIToken, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", study.APIToken{}, fmt.Errorf("create API token: %w", study.Errorf(study.KindInvalid, "give the token a name"))
	}
	if len(name) > 100 {
		return "", study.APIToken{}, fmt.Errorf("create API token: %w", study.Errorf(study.KindInvalid, "the name is longer than 100 characters"))
	}
	plain := "closer_" + secret.NewToken()
	t := study.APIToken{AdminID: adminID, Name: name}
	err := s.pool.QueryRow(ctx,
		`INSERT INTO api_tokens (admin_id, name, token_hash) VALUES ($1, $2, $3) RETURNING id, created_at`,
		adminID, name, secret.Hash(plain)).Scan(&t.ID, &t.CreatedAt)
	if err != nil {
		return "", study.APIToken{}, fmt.Errorf("create API token: %w", err)
	}
	return plain, t, nil
}

// EnsureAPIToken stores secret as a token of the admin unless it is stored
// already (used to bootstrap ADMIN_API_TOKEN). A revoked token stays revoked.
func (s *Store) EnsureAPIToken(ctx context.Context, adminID int64, plain, name string) error {
	if len(plain) < 16 {
		return fmt.Errorf("ensure API token: %w", study.Errorf(study.KindInvalid, "the token must have at least 16 characters"))
	}
	_, err := s.pool.Exec(ctx,
		`INSERT INTO api_tokens (admin_id, name, token_hash) VALUES ($1, $2, $3) ON CONFLICT (token_hash) DO NOTHING`,
		adminID, name, secret.Hash(plain))
	if err != nil {
		return fmt.Errorf("ensure API token: %w", err)
	}
	return nil
}

// ListAPITokens returns an admin's tokens, newest first.
func (s *Store) ListAPITokens(ctx context.Context, adminID int64) ([]study.APIToken, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT id, admin_id, name, created_at, last_used_at, revoked_at
		FROM api_tokens WHERE admin_id = $1 ORDER BY id DESC`, adminID)
	if err != nil {
		return nil, fmt.Errorf("list API tokens: %w", err)
	}
	ts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (study.APIToken, error) {
		var t study.APIToken
		err := r.Scan(&t.ID, &t.AdminID, &t.Name, &t.CreatedAt, &t.LastUsedAt, &t.RevokedAt)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("list API tokens: %w", err)
	}
	return ts, nil
}

// RevokeAPIToken revokes one of an admin's tokens.
func (s *Store) RevokeAPIToken(ctx context.Context, adminID, id int64) error {
	tag, err := s.pool.Exec(ctx,
		`UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 AND admin_id = $2`, id, adminID)
	if err != nil {
		return fmt.Errorf("revoke API token: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("revoke API token: %w", study.NotFound("token"))
	}
	return nil
}

// APITokenAdmin returns the admin owning an unrevoked token and notes its use.
func (s *Store) APITokenAdmin(ctx context.Context, plain string) (study.Admin, error) {
	var a study.Admin
	err := s.pool.QueryRow(ctx, `
		UPDATE api_tokens t SET last_used_at = now()
		FROM admins a
		WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND a.id = t.admin_id
		RETURNING a.id, a.email, a.created_at, a.site_admin`, secret.Hash(plain)).Scan(&a.ID, &a.Email, &a.CreatedAt, &a.SiteAdmin)
	if errors.Is(err, pgx.ErrNoRows) {
		return study.Admin{}, fmt.Errorf("API token admin: %w", study.Errorf(study.KindUnauthorized, "unknown or revoked API token"))
	}
	if err != nil {
		return study.Admin{}, fmt.Errorf("API token admin: %w", err)
	}
	return a, nil
}
