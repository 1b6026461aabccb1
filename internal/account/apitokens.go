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

// CreateAPIToken creates a token for an admin, with everything the admin
// may do (study.FullScope), and returns its secret.
func (s *Store) CreateAPIToken(ctx context.Context, adminID int64, name string) (string, study.APIToken, error) {
	return s.CreateScopedAPIToken(ctx, adminID, name, study.FullScope)
}

// CreateScopedAPIToken creates a token limited to scope and returns its
// secret. The caller checks that the account may see the listed studies.
func (s *Store) CreateScopedAPIToken(ctx context.Context, adminID int64, name string, scope study.TokenScope) (string, study.APIToken, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", study.APIToken{}, fmt.Errorf("create API token: %w", study.Errorf(study.KindInvalid, "give the token a name"))
	}
	if len(name) > 100 {
		return "", study.APIToken{}, fmt.Errorf("create API token: %w", study.Errorf(study.KindInvalid, "the name is longer than 100 characters"))
	}
	if !scope.Read && !scope.Write {
		return "", study.APIToken{}, fmt.Errorf("create API token: %w", study.Errorf(study.KindInvalid, "a token must at least read results or write"))
	}
	if !scope.AllStudies && len(scope.Studies) == 0 {
		return "", study.APIToken{}, fmt.Errorf("create API token: %w", study.Errorf(study.KindInvalid, "name the token's studies, or let it touch all yours"))
	}
	plain := "closer_" + secret.NewToken()
	t := study.APIToken{AdminID: adminID, Name: name, Scope: scope}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `
			INSERT INTO api_tokens (admin_id, name, token_hash, all_studies, can_read, can_identify, can_write)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id, created_at`,
			adminID, name, secret.Hash(plain), scope.AllStudies, scope.Read, scope.Identifying, scope.Write).Scan(&t.ID, &t.CreatedAt)
		if err != nil || scope.AllStudies {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO api_token_studies (token_id, study_id) SELECT $1, unnest($2::bigint[]) ON CONFLICT DO NOTHING`,
			t.ID, scope.Studies)
		return err
	})
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
		SELECT t.id, t.admin_id, t.name, t.created_at, t.last_used_at, t.revoked_at,
			t.all_studies, t.can_read, t.can_identify, t.can_write,
			coalesce(array_agg(ts.study_id ORDER BY st.slug) FILTER (WHERE st.id IS NOT NULL), '{}'),
			coalesce(array_agg(st.slug ORDER BY st.slug) FILTER (WHERE st.id IS NOT NULL), '{}')
		FROM api_tokens t
		LEFT JOIN api_token_studies ts ON ts.token_id = t.id
		LEFT JOIN studies st ON st.id = ts.study_id AND st.deleted_at IS NULL
		WHERE t.admin_id = $1 GROUP BY t.id ORDER BY t.id DESC`, adminID)
	if err != nil {
		return nil, fmt.Errorf("list API tokens: %w", err)
	}
	ts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (study.APIToken, error) {
		var t study.APIToken
		err := r.Scan(&t.ID, &t.AdminID, &t.Name, &t.CreatedAt, &t.LastUsedAt, &t.RevokedAt,
			&t.Scope.AllStudies, &t.Scope.Read, &t.Scope.Identifying, &t.Scope.Write, &t.Scope.Studies, &t.Scope.Slugs)
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

// APITokenAdmin returns the admin owning an unrevoked token and the
// token's scope, and notes its use.
func (s *Store) APITokenAdmin(ctx context.Context, plain string) (study.Admin, study.TokenScope, error) {
	var a study.Admin
	var sc study.TokenScope
	err := s.pool.QueryRow(ctx, `
		UPDATE api_tokens t SET last_used_at = now()
		FROM admins a
		WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND a.id = t.admin_id
		RETURNING a.id, a.email, a.created_at, a.site_admin, t.all_studies, t.can_read, t.can_identify, t.can_write,
			array(SELECT study_id FROM api_token_studies WHERE token_id = t.id ORDER BY study_id)`, secret.Hash(plain)).
		Scan(&a.ID, &a.Email, &a.CreatedAt, &a.SiteAdmin, &sc.AllStudies, &sc.Read, &sc.Identifying, &sc.Write, &sc.Studies)
	if errors.Is(err, pgx.ErrNoRows) {
		return study.Admin{}, sc, fmt.Errorf("API token admin: %w", study.Errorf(study.KindUnauthorized, "unknown or revoked API token"))
	}
	if err != nil {
		return study.Admin{}, sc, fmt.Errorf("API token admin: %w", err)
	}
	return a, sc, nil
}
