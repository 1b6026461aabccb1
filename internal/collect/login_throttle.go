package collect

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// LoginLimit is one brute-force rule on admin logins, applied to one
// counter (an account or a client address). The counter counts failed
// attempts; from the Free-th on, each failure makes the key refuse attempts
// for a delay that doubles (2 s, 4 s, 8 s, ...), and from the Lockout-th on
// every failure locks it for LockoutFor. A counter is forgotten Window after
// its last failure and the block that failure started have both passed.
type LoginLimit struct {
	Free       int
	Lockout    int
	LockoutFor time.Duration
	Window     time.Duration
}

// Delay is how long a key refuses attempts after its n-th failure.
func (l LoginLimit) Delay(n int) time.Duration {
	if n < l.Free {
		return 0
	}
	if n >= l.Lockout {
		return l.LockoutFor
	}
	d := time.Duration(1) << min(n-l.Free+1, 30) * time.Second
	return min(d, l.LockoutFor)
}

// LoginGate is the store's answer to one login attempt.
type LoginGate struct {
	// Admitted says the password may be checked. A refused attempt was
	// not counted and its password must not be looked at.
	Admitted bool
	// RetryAfter is, when refused, how long until an attempt is admitted.
	RetryAfter time.Duration
	// Limit names the counter ("account" or "address") that refused the
	// attempt, or that this attempt puts in delay should it fail.
	Limit string
	// Failures is that counter's count, this attempt included when admitted.
	Failures int
	// Delay is, when admitted, the block this attempt started should it
	// fail (0: none).
	Delay time.Duration
	// addressBlock is the block this attempt set on the address counter,
	// which LoginSucceeded lifts (unless a later attempt replaced it).
	addressBlock *time.Time
}

// loginCounter is one key's row and the limit that applies to it.
type loginCounter struct {
	kind, key    string
	limit        LoginLimit
	failures     int
	blockedUntil *time.Time
	forgetAt     time.Time
}

func accountThrottleKey(email string) string {
	sum := sha256.Sum256([]byte(NormalizeEmail(email)))
	return "account:" + hex.EncodeToString(sum[:])
}

func addressThrottleKey(address string) string { return "address:" + address }

// AdmitLogin decides, at now, whether a login attempt for email from
// address may check its password, and if so counts it as a failure in
// advance (LoginSucceeded takes it back), so that attempts running at the
// same time on any replica are counted before their passwords are checked.
// The account counter applies whether or not an admin has that e-mail, so
// its answers do not tell which accounts exist.
func (s *Store) AdmitLogin(ctx context.Context, now time.Time, email, address string, account, perAddress LoginLimit) (LoginGate, error) {
	now = now.Truncate(time.Microsecond) // PostgreSQL's precision: stored times compare equal
	// Rows are locked in this order by every attempt ("account:" sorts
	// before "address:"), so attempts do not deadlock.
	counters := []*loginCounter{
		{kind: "account", key: accountThrottleKey(email), limit: account},
		{kind: "address", key: addressThrottleKey(address), limit: perAddress},
	}
	var gate LoginGate
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		for _, c := range counters {
			// Creates the row or locks it; either way it comes back.
			err := tx.QueryRow(ctx, `
				INSERT INTO login_throttles (key, forget_at) VALUES ($1, $2)
				ON CONFLICT (key) DO UPDATE SET key = excluded.key
				RETURNING failures, blocked_until, forget_at`, c.key, now).
				Scan(&c.failures, &c.blockedUntil, &c.forgetAt)
			if err != nil {
				return err
			}
			if !now.Before(c.forgetAt) {
				c.failures, c.blockedUntil = 0, nil
			}
		}
		gate = decideLogin(now, counters)
		if !gate.Admitted {
			return nil
		}
		gate.addressBlock = counters[1].blockedUntil
		for _, c := range counters {
			if _, err := tx.Exec(ctx, `
				UPDATE login_throttles SET failures = $2, last_failure_at = $3, blocked_until = $4, forget_at = $5
				WHERE key = $1`, c.key, c.failures, now, c.blockedUntil, c.forgetAt); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return LoginGate{}, fmt.Errorf("admit login: %w", err)
	}
	// Forget stale counters a few at a time, without waiting on busy rows.
	if _, err := s.pool.Exec(ctx, `
		DELETE FROM login_throttles WHERE key IN (
			SELECT key FROM login_throttles WHERE forget_at <= $1 ORDER BY forget_at LIMIT 100 FOR UPDATE SKIP LOCKED)`, now); err != nil {
		return LoginGate{}, fmt.Errorf("admit login: forget stale counters: %w", err)
	}
	return gate, nil
}

// decideLogin refuses the attempt while any counter is blocked (reporting
// the longest wait), and otherwise counts it on every counter.
func decideLogin(now time.Time, counters []*loginCounter) LoginGate {
	var gate LoginGate
	for _, c := range counters {
		if c.blockedUntil != nil && now.Before(*c.blockedUntil) {
			if wait := c.blockedUntil.Sub(now); wait > gate.RetryAfter {
				gate = LoginGate{RetryAfter: wait, Limit: c.kind, Failures: c.failures}
			}
		}
	}
	if gate.RetryAfter > 0 {
		return gate
	}
	gate.Admitted = true
	for _, c := range counters {
		c.failures++
		d := c.limit.Delay(c.failures)
		c.blockedUntil = nil
		if d > 0 {
			until := now.Add(d)
			c.blockedUntil = &until
		}
		c.forgetAt = now.Add(d + c.limit.Window)
		if d > gate.Delay || gate.Limit == "" {
			gate.Delay, gate.Limit, gate.Failures = d, c.kind, c.failures
		}
	}
	return gate
}

// LoginSucceeded takes back what AdmitLogin counted for an attempt whose
// password was right (gate is AdmitLogin's answer to it): the account's
// counter is reset, and the address's loses this one attempt and the block
// it set, keeping earlier failures (so that logging in to one's own account
// does not clear an address that guesses at others).
func (s *Store) LoginSucceeded(ctx context.Context, email, address string, gate LoginGate) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM login_throttles WHERE key = $1`, accountThrottleKey(email)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			UPDATE login_throttles
			SET failures = greatest(failures - 1, 0),
			    blocked_until = CASE WHEN blocked_until = $2 THEN NULL ELSE blocked_until END
			WHERE key = $1`, addressThrottleKey(address), gate.addressBlock)
		return err
	})
	if err != nil {
		return fmt.Errorf("login succeeded: %w", err)
	}
	return nil
}
