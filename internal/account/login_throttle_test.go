package account_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/pgtest"
)

var testLimit = account.LoginLimit{Free: 5, Lockout: 10, LockoutFor: 15 * time.Minute, Window: 15 * time.Minute}

func TestLoginLimitDelay(t *testing.T) {
	t.Parallel()
	want := map[int]time.Duration{0: 0, 4: 0, 5: 2 * time.Second, 6: 4 * time.Second, 9: 32 * time.Second, 10: 15 * time.Minute, 500: 15 * time.Minute}
	for n, d := range want {
		if got := testLimit.Delay(n); got != d {
			t.Errorf("Delay(%d) = %v, want %v", n, got, d)
		}
	}
	// Delays never exceed the lockout, however far Lockout is.
	long := account.LoginLimit{Free: 1, Lockout: 1000, LockoutFor: time.Minute, Window: time.Minute}
	for _, n := range []int{7, 8, 40, 999} {
		if got := long.Delay(n); got != time.Minute {
			t.Errorf("long Delay(%d) = %v, want 1m", n, got)
		}
	}
}

// Attempts that arrive together are counted before any password is
// checked: of 40 simultaneous attempts on one account exactly Free are
// admitted, whichever connection each comes on.
func TestAdmitLoginCountsSimultaneousAttempts(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := account.New(pool)
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	perAddress := account.LoginLimit{Free: 1000, Lockout: 2000, LockoutFor: time.Minute, Window: time.Minute}
	var mu sync.Mutex
	admitted, refused := 0, 0
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			g, err := s.AdmitLogin(context.Background(), now, "R@Example.org ", account.LoginClient{Address: fmt.Sprintf("192.0.2.%d", i)}, testLimit, perAddress)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if g.Admitted {
				admitted++
			} else {
				refused++
				if g.Limit != "account" || g.RetryAfter != 2*time.Second || g.Failures != 5 {
					t.Errorf("refused with %+v", g)
				}
			}
		})
	}
	wg.Wait()
	if admitted != 5 || refused != 35 {
		t.Fatalf("%d admitted, %d refused; want 5 and 35", admitted, refused)
	}
	// The e-mail is normalised: the same account in other case is blocked too.
	if g, err := s.AdmitLogin(context.Background(), now.Add(time.Second), "r@example.org", account.LoginClient{Address: "192.0.2.200"}, testLimit, perAddress); err != nil || g.Admitted || g.RetryAfter != time.Second {
		t.Fatalf("normalised e-mail: %+v %v", g, err)
	}
}

// A counter is forgotten Window after its last failure and block have
// passed, and forgotten rows are deleted; the typed e-mail is not stored.
func TestAdmitLoginForgets(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := account.New(pool)
	ctx := context.Background()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 5 {
		if g, err := s.AdmitLogin(ctx, now, "a@example.org", account.LoginClient{Address: "192.0.2.1"}, testLimit, testLimit); err != nil || !g.Admitted {
			t.Fatalf("attempt %d: %+v %v", i, g, err)
		}
	}
	// Blocked 2 s, then remembered for 15 minutes after the block.
	later := now.Add(2*time.Second + 15*time.Minute - time.Millisecond)
	if g, _ := s.AdmitLogin(ctx, later, "a@example.org", account.LoginClient{Address: "192.0.2.2"}, testLimit, testLimit); !g.Admitted || g.Failures != 6 || g.Delay != 4*time.Second {
		t.Fatalf("within the window: %+v", g)
	}
	forgotten := later.Add(4*time.Second + 15*time.Minute)
	if g, _ := s.AdmitLogin(ctx, forgotten, "a@example.org", account.LoginClient{Address: "192.0.2.3"}, testLimit, testLimit); !g.Admitted || g.Failures != 1 || g.Delay != 0 {
		t.Fatalf("after the window: %+v", g)
	}
	var keys []string
	rows, err := pool.Query(ctx, `SELECT key FROM login_throttles ORDER BY key`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	// 192.0.2.1 and .2 were stale by then and are gone.
	if len(keys) != 2 || keys[1] != "address:192.0.2.3" || len(keys[0]) != len("account:")+64 {
		t.Fatalf("stored keys %q", keys)
	}
}
