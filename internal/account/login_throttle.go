package account

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/closer-lab/closer/internal/secret"
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
	// KnownDevice says the browser presented a device token of an earlier
	// successful login to this account: the account's counter did not
	// apply (LoginClient).
	KnownDevice bool
	// counted are the counters this attempt was counted on, with the
	// block it set on each, which LoginSucceeded takes back.
	counted []countedAttempt
}

type countedAttempt struct {
	kind, key string
	block     *time.Time
}

// LoginClient is who attempts a login: the client's address
// (throttleAddress in the web layer) and the device token its browser
// presented ("" if none).
type LoginClient struct {
	Address string
	Device  string
}

// DeviceTTL is how long a browser stays known after its last successful
// login, MaxDevicesPerAccount how many browsers an account keeps known
// (the least recent are forgotten).
const (
	DeviceTTL            = 180 * 24 * time.Hour
	MaxDevicesPerAccount = 20
)

// NewDeviceToken returns a fresh secret for a device cookie.
func NewDeviceToken() string { return secret.NewToken() }

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

// deviceThrottleKey counts the failures of one known browser on one account.
func deviceThrottleKey(device, accountKey string) string {
	sum := sha256.Sum256([]byte(device + "\x00" + accountKey))
	return "device:" + hex.EncodeToString(sum[:])
}

// knownDeviceSQL: whether token hash $1 logged in to account $2 since $3.
const knownDeviceSQL = `SELECT EXISTS (SELECT 1 FROM login_devices WHERE token_hash = $1 AND account_key = $2 AND last_login_at > $3)`

// AdmitLogin decides, at now, whether a login attempt for email from
// client may check its password, and if so counts it as a failure in
// advance (LoginSucceeded takes it back), so that attempts running at the
// same time on any replica are counted before their passwords are checked.
//
// An unknown browser is counted per account and per address. A browser
// that presents the device token of an earlier successful login to this
// account (within DeviceTTL) is counted on its own counter only (with the
// address limit): a stranger who fails on purpose locks the account and
// their address for unknown browsers, never the admin's own browser. The
// account counter applies whether or not an admin has that e-mail, so its
// answers do not tell which accounts exist.
func (s *Store) AdmitLogin(ctx context.Context, now time.Time, email string, client LoginClient, account, perAddress LoginLimit) (LoginGate, error) {
	now = now.Truncate(time.Microsecond) // PostgreSQL's precision: stored times compare equal
	accountKey := accountThrottleKey(email)
	var gate LoginGate
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if client.Device != "" {
			if err := tx.QueryRow(ctx, knownDeviceSQL, secret.Hash(client.Device), accountKey, now.Add(-DeviceTTL)).Scan(&gate.KnownDevice); err != nil {
				return err
			}
		}
		// Rows are locked in this order by every attempt ("account:" sorts
		// before "address:"), so attempts do not deadlock.
		counters := []*loginCounter{
			{kind: "account", key: accountKey, limit: account},
			{kind: "address", key: addressThrottleKey(client.Address), limit: perAddress},
		}
		if gate.KnownDevice {
			counters = []*loginCounter{{kind: "device", key: deviceThrottleKey(client.Device, accountKey), limit: perAddress}}
		}
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
		known := gate.KnownDevice
		gate = decideLogin(now, counters)
		gate.KnownDevice = known
		if !gate.Admitted {
			return nil
		}
		for _, c := range counters {
			gate.counted = append(gate.counted, countedAttempt{kind: c.kind, key: c.key, block: c.blockedUntil})
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
// password was right (gate is AdmitLogin's answer to it) and remembers the
// browser's device token (client.Device, which the caller then sets as the
// browser's cookie) as known to the account. The account's counter, or
// the known browser's, is reset; the address's loses this one attempt and
// the block it set, keeping earlier failures (so that logging in to one's
// own account does not clear an address that guesses at others). A known
// browser's login leaves the account's counter as it is: a stranger's
// failures keep holding unknown browsers.
func (s *Store) LoginSucceeded(ctx context.Context, now time.Time, email string, client LoginClient, gate LoginGate) error {
	now = now.Truncate(time.Microsecond)
	accountKey := accountThrottleKey(email)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		for _, c := range gate.counted {
			if c.kind != "address" {
				if _, err := tx.Exec(ctx, `DELETE FROM login_throttles WHERE key = $1`, c.key); err != nil {
					return err
				}
				continue
			}
			if _, err := tx.Exec(ctx, `
				UPDATE login_throttles
				SET failures = greatest(failures - 1, 0),
				    blocked_until = CASE WHEN blocked_until = $2 THEN NULL ELSE blocked_until END
				WHERE key = $1`, c.key, c.block); err != nil {
				return err
			}
		}
		if client.Device == "" {
			return nil
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO login_devices (token_hash, account_key, last_login_at) VALUES ($1, $2, $3)
			ON CONFLICT (token_hash, account_key) DO UPDATE SET last_login_at = excluded.last_login_at`,
			secret.Hash(client.Device), accountKey, now); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			DELETE FROM login_devices WHERE account_key = $1 AND (last_login_at <= $2 OR token_hash IN (
				SELECT token_hash FROM login_devices WHERE account_key = $1 ORDER BY last_login_at DESC OFFSET $3))`,
			accountKey, now.Add(-DeviceTTL), MaxDevicesPerAccount)
		return err
	})
	if err != nil {
		return fmt.Errorf("login succeeded: %w", err)
	}
	return nil
}
