package account_test

import (
	"context"
	"errors"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// The store hashes admins' passwords at its PasswordCost, bcrypt's default
// when none is given (what cmd/web runs with), and logs in either way.
func TestPasswordCost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	for _, c := range []struct {
		email string
		store *account.Store
		want  int
	}{
		{"default@example.org", account.New(pool), bcrypt.DefaultCost},
		{"min@example.org", account.New(pool, account.PasswordCost(bcrypt.MinCost)), bcrypt.MinCost},
	} {
		if _, err := c.store.CreateAdmin(ctx, c.email, "secret-password"); err != nil {
			t.Fatal(err)
		}
		var hash string
		if err := pool.QueryRow(ctx, `SELECT password_hash FROM admins WHERE email = $1`, c.email).Scan(&hash); err != nil {
			t.Fatal(err)
		}
		if got, err := bcrypt.Cost([]byte(hash)); err != nil || got != c.want {
			t.Errorf("%s: hash cost %d (%v), want %d", c.email, got, err, c.want)
		}
		if _, err := c.store.Authenticate(ctx, c.email, "secret-password"); err != nil {
			t.Errorf("%s: log in: %v", c.email, err)
		}
		var e *study.Error
		if _, err := c.store.Authenticate(ctx, "nobody@example.org", "secret-password"); !errors.As(err, &e) || e.Kind != study.KindUnauthorized {
			t.Errorf("unknown e-mail: %v, want unauthorized", err)
		}
	}
}
