package account

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/closer-lab/closer/internal/secret"
	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgx/v5"
)

// OIDCLogin is a single sign-on login begun at the identity provider.
type OIDCLogin struct {
	Nonce, Verifier, Next string
}

// BeginOIDCLogin stores a login's nonce, PKCE verifier and next page under
// the hash of its state, for ttl; expired ones are removed.
func (s *Store) BeginOIDCLogin(ctx context.Context, state string, l OIDCLogin, ttl time.Duration) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM oidc_logins WHERE expires_at < now()`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO oidc_logins (state_hash, nonce, verifier, next, expires_at)
			VALUES ($1, $2, $3, $4, now() + $5::interval)`,
			secret.Hash(state), l.Nonce, l.Verifier, l.Next, fmt.Sprintf("%d seconds", int64(ttl/time.Second)))
		return err
	})
	if err != nil {
		return fmt.Errorf("begin OIDC login: %w", err)
	}
	return nil
}

// TakeOIDCLogin returns the unexpired login of the state and deletes it:
// a state works once. An unknown, used or expired state is KindUnauthorized.
func (s *Store) TakeOIDCLogin(ctx context.Context, state string) (OIDCLogin, error) {
	var l OIDCLogin
	var expired bool
	err := s.pool.QueryRow(ctx, `DELETE FROM oidc_logins WHERE state_hash = $1 RETURNING nonce, verifier, next, expires_at < now()`,
		secret.Hash(state)).Scan(&l.Nonce, &l.Verifier, &l.Next, &expired)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && expired {
		return OIDCLogin{}, fmt.Errorf("take OIDC login: %w", study.Errorf(study.KindUnauthorized, "this login attempt is unknown, used or expired: log in again"))
	}
	if err != nil {
		return OIDCLogin{}, fmt.Errorf("take OIDC login: %w", err)
	}
	return l, nil
}

// SSOAccount returns the account with the e-mail, creating a researcher
// for it on first login (with a random password nobody knows: such an
// account logs in by single sign-on only, unless a password is set).
// created says whether it was made now.
func (s *Store) SSOAccount(ctx context.Context, email string) (a study.Admin, created bool, err error) {
	a, err = s.AdminByEmail(ctx, email)
	if err == nil || !isNotFound(err) {
		return a, false, err
	}
	a, err = s.CreateResearcher(ctx, email, secret.NewToken())
	if isConflict(errors.Unwrap(err)) || isConflict(err) {
		// Made by a simultaneous first login.
		a, err = s.AdminByEmail(ctx, email)
		return a, false, err
	}
	return a, err == nil, err
}

func isNotFound(err error) bool {
	var e *study.Error
	return errors.As(err, &e) && e.Kind == study.KindNotFound
}
