package account

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"unicode/utf8"

	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgx/v5"
	"golang.org/x/crypto/bcrypt"
)

// NormalizeEmail is the form in which admins' e-mails are stored and looked up.
func NormalizeEmail(email string) string { return strings.TrimSpace(strings.ToLower(email)) }

func checkAdminInput(email, password string) (string, error) {
	email = NormalizeEmail(email)
	if _, err := mail.ParseAddress(email); err != nil || email == "" {
		return "", study.Errorf(study.KindInvalid, "%q is not an e-mail address", email)
	}
	if len(password) < study.MinPasswordLen {
		return "", study.Errorf(study.KindInvalid, "the password must have at least %d characters", study.MinPasswordLen)
	}
	if len(password) > 72 {
		return "", study.Errorf(study.KindInvalid, "the password must have at most 72 bytes")
	}
	return email, nil
}

// CreateAdmin creates a site administrator with a bcrypt hash of password: an admin
// adding a colleague from the account page. An e-mail that is taken is a
// KindConflict error, a bad e-mail or password KindInvalid.
func (s *Store) CreateAdmin(ctx context.Context, email, password string) (study.Admin, error) {
	var a study.Admin
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		a, err = insertAdmin(ctx, tx, email, password, s.passwordCost, true)
		return err
	})
	if err != nil {
		return study.Admin{}, fmt.Errorf("create admin: %w", err)
	}
	return a, nil
}

// CreateResearcher creates an account that is not a site administrator: it
// sees only the studies it creates or is given a role on (issue 30).
func (s *Store) CreateResearcher(ctx context.Context, email, password string) (study.Admin, error) {
	var a study.Admin
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		a, err = insertAdmin(ctx, tx, email, password, s.passwordCost, false)
		return err
	})
	if err != nil {
		return study.Admin{}, fmt.Errorf("create researcher: %w", err)
	}
	return a, nil
}

// insertAdmin checks the e-mail and password and stores the admin.
// cost is the bcrypt cost of the hash (the store's passwordCost).
func insertAdmin(ctx context.Context, tx pgx.Tx, email, password string, cost int, siteAdmin bool) (study.Admin, error) {
	email, err := checkAdminInput(email, password)
	if err != nil {
		return study.Admin{}, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return study.Admin{}, err
	}
	a := study.Admin{Email: email, SiteAdmin: siteAdmin}
	err = tx.QueryRow(ctx,
		`INSERT INTO admins (email, password_hash, site_admin) VALUES ($1, $2, $3) RETURNING id, created_at`,
		email, string(hash), siteAdmin).Scan(&a.ID, &a.CreatedAt)
	if isUnique(err) {
		return study.Admin{}, study.Errorf(study.KindConflict, "an admin with e-mail %s exists", email)
	}
	return a, err
}

// ListAdmins returns every admin, oldest first.
func (s *Store) ListAdmins(ctx context.Context) ([]study.Admin, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, email, created_at, site_admin FROM admins ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list admins: %w", err)
	}
	admins, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (study.Admin, error) {
		var a study.Admin
		err := r.Scan(&a.ID, &a.Email, &a.CreatedAt, &a.SiteAdmin)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("list admins: %w", err)
	}
	return admins, nil
}

// BootstrapAdmin creates the first admin when no admin exists yet. It
// reports whether it created one. Two replicas starting together create at
// most one (the advisory lock serialises them).
func (s *Store) BootstrapAdmin(ctx context.Context, email, password string) (bool, error) {
	created := false
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(727001)`); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM admins`).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		if _, err := insertAdmin(ctx, tx, email, password, s.passwordCost, true); err != nil {
			return err
		}
		created = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("bootstrap admin: %w", err)
	}
	return created, nil
}

// FirstAdmin returns the oldest admin.
func (s *Store) FirstAdmin(ctx context.Context) (study.Admin, error) {
	var a study.Admin
	err := s.pool.QueryRow(ctx, `SELECT id, email, created_at, site_admin FROM admins ORDER BY id LIMIT 1`).
		Scan(&a.ID, &a.Email, &a.CreatedAt, &a.SiteAdmin)
	if errors.Is(err, pgx.ErrNoRows) {
		return study.Admin{}, fmt.Errorf("first admin: %w", study.NotFound("admin"))
	}
	if err != nil {
		return study.Admin{}, fmt.Errorf("first admin: %w", err)
	}
	return a, nil
}

// dummy returns the hash compared against when the e-mail is unknown, so a
// login costs one bcrypt comparison at the cost admins' hashes are made
// with whether or not the account exists. It is made on first use, not in
// New, so that a store that never sees an unknown e-mail pays nothing.
func (s *Store) dummy() []byte {
	s.dummyOnce.Do(func() {
		s.dummyHash, _ = bcrypt.GenerateFromPassword([]byte("closer-not-a-password"), s.passwordCost)
	})
	return s.dummyHash
}

// maxEmailLen bounds an e-mail address (RFC 5321's path limit).
const maxEmailLen = 254

// Authenticate returns the admin with email if password matches. Any
// mismatch is a KindUnauthorized error that does not say which part was
// wrong; an e-mail that cannot be an admin's (too long, NUL, invalid UTF-8)
// is one too, and costs the same bcrypt comparison as an unknown one.
func (s *Store) Authenticate(ctx context.Context, email, password string) (study.Admin, error) {
	email = NormalizeEmail(email)
	wrong := study.Errorf(study.KindUnauthorized, "wrong e-mail or password")
	var a study.Admin
	var hash string
	err := pgx.ErrNoRows
	if len(email) <= maxEmailLen && utf8.ValidString(email) && !strings.ContainsRune(email, 0) {
		err = s.pool.QueryRow(ctx, `SELECT id, email, created_at, site_admin, password_hash FROM admins WHERE email = $1`, email).
			Scan(&a.ID, &a.Email, &a.CreatedAt, &a.SiteAdmin, &hash)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		// The result is always a mismatch; the comparison is there for its time.
		_ = bcrypt.CompareHashAndPassword(s.dummy(), []byte(password))
		return study.Admin{}, fmt.Errorf("authenticate: %w", wrong)
	}
	if err != nil {
		return study.Admin{}, fmt.Errorf("authenticate: %w", err)
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) != nil {
		return study.Admin{}, fmt.Errorf("authenticate: %w", wrong)
	}
	return a, nil
}
