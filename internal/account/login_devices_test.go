package account_test

import (
	"context"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/pgtest"
)

// An account keeps its MaxDevicesPerAccount most recent browsers known, for
// DeviceTTL after their last login; a browser known to one account is not
// known to another.
func TestKnownDevicesBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := account.New(pool)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	limit := account.LoginLimit{Free: 5, Lockout: 10, LockoutFor: 15 * time.Minute, Window: 15 * time.Minute}
	known := func(at time.Time, email, device string) bool {
		t.Helper()
		g, err := s.AdmitLogin(ctx, at, email, account.LoginClient{Address: "192.0.2.1", Device: device}, limit, limit)
		if err != nil {
			t.Fatal(err)
		}
		return g.KnownDevice
	}
	var devices []string
	for i := range account.MaxDevicesPerAccount + 1 {
		d := account.NewDeviceToken()
		devices = append(devices, d)
		at := now.Add(time.Duration(i) * time.Minute)
		if known(at, "a@example.org", d) {
			t.Fatalf("device %d known before its first login", i)
		}
		g, err := s.AdmitLogin(ctx, at, "a@example.org", account.LoginClient{Address: "192.0.2.1", Device: d}, limit, limit)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.LoginSucceeded(ctx, at, "a@example.org", account.LoginClient{Address: "192.0.2.1", Device: d}, g); err != nil {
			t.Fatal(err)
		}
	}
	later := now.Add(time.Hour)
	if known(later, "a@example.org", devices[0]) {
		t.Error("the least recent of 21 browsers is still known")
	}
	if !known(later, "a@example.org", devices[1]) || !known(later, "a@example.org", devices[len(devices)-1]) {
		t.Error("one of the 20 most recent browsers is not known")
	}
	if known(later, "b@example.org", devices[1]) {
		t.Error("a browser of a@ is known to b@")
	}
	if known(now.Add(account.DeviceTTL+time.Hour), "a@example.org", devices[len(devices)-1]) {
		t.Error("a browser is known past DeviceTTL after its last login")
	}
}
