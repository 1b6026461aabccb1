package web_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/faults"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/web"
	"golang.org/x/crypto/bcrypt"
)

// Hostile clients (issue 24) against a server with four database slots:
// the harness is internal/faults' Hostile; the real binary's figures are
// TestHostile there (docs/reliability.md).

// hostileApp is an app with four slots, a short queue and the given
// deadlines, an open study "demo" of five items and a logged-in admin.
func hostileApp(t *testing.T, cfg web.Config) (*app, faults.Hostile, *http.Client) {
	t.Helper()
	pool, _ := pgtest.NewDB(t)
	cfg.MaxDBRequests, cfg.QueueWait = 4, 200*time.Millisecond
	ln, err := web.Listen(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	store := collect.New(pool)
	accounts := account.New(pool, account.PasswordCost(bcrypt.MinCost))
	srv := httptest.NewUnstartedServer(nil)
	srv.Listener.Close()
	srv.Listener = ln // the server's send buffers, as cmd/web's
	cfg.BaseURL = "http://" + ln.Addr().String()
	srv.Config.Handler = web.New(store, accounts, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv.Start()
	t.Cleanup(srv.Close)
	a := &app{t: t, pool: pool, store: store, accounts: accounts, srv: srv}
	a.study("demo", 5, 10, study.StatusOpen)
	admin := a.admin()
	return a, faults.Hostile{Addr: a.srv.Listener.Addr().String()}, admin
}

// hostileCookie is the admin client's session cookie as a request header.
func hostileCookie(t *testing.T, a *app, c *http.Client) map[string]string {
	t.Helper()
	u, _ := url.Parse(a.srv.URL)
	var parts []string
	for _, ck := range c.Jar.Cookies(u) {
		parts = append(parts, ck.Name+"="+ck.Value)
	}
	if len(parts) == 0 {
		t.Fatal("the admin client has no cookie")
	}
	return map[string]string{"Cookie": strings.Join(parts, "; ")}
}

// hostileAPIServes checks that the JSON API creates participants while the
// hostile connections are open. The pause lets the server take in every
// hostile connection first (on the old code they then held every slot).
func hostileAPIServes(t *testing.T, a *app, what string) {
	t.Helper()
	// The swarm's requests reach the server in their own time (reading a
	// 12 MiB image from the database, say, which holds a slot until its
	// first byte is written): wait for four 201s in a row rather than a
	// fixed sleep, but not longer than the route's own timeout, past which
	// the old code would free its slots too.
	deadline := time.Now().Add(10 * time.Second)
	for inRow := 0; inRow < 4; {
		res := a.api("POST", "/api/v1/studies/demo/participants", "", "", nil)
		if res.StatusCode == http.StatusCreated {
			inRow++
			continue
		}
		inRow = 0
		if time.Now().After(deadline) {
			t.Fatalf("with %s open: %d %s, and not four 201s in a row for 10 s", what, res.StatusCode, res.body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func openSwarm(t *testing.T, n int, fn func() (net.Conn, error)) *faults.Swarm {
	t.Helper()
	sw, err := faults.Open(n, fn)
	t.Cleanup(sw.Close)
	if err != nil {
		t.Fatal(err)
	}
	return sw
}

// TestHostileStalledBodiesHoldNoSlot: 70 JSON bodies and 20 forms that
// declare 100 bytes and send one, and 8 admin uploads that stall the same
// way, leave the four slots free (they had all been taken: 503).
func TestHostileStalledBodiesHoldNoSlot(t *testing.T) {
	t.Parallel()
	a, h, admin := hostileApp(t, web.Config{BodyReadTimeout: time.Minute, TransferWindow: time.Minute})
	openSwarm(t, 70, func() (net.Conn, error) {
		return h.StalledBody("POST", "/api/v1/studies/demo/participants", "application/json", 100)
	})
	openSwarm(t, 20, func() (net.Conn, error) {
		return h.StalledBody("POST", "/s/demo/start", "application/x-www-form-urlencoded", 100)
	})
	hostileAPIServes(t, a, "90 stalled bodies")

	ha := faults.Hostile{Addr: h.Addr, Header: hostileCookie(t, a, admin)}
	openSwarm(t, 8, func() (net.Conn, error) {
		return ha.StalledBody("POST", "/admin/studies/demo/items", "multipart/form-data; boundary=x", 1<<20)
	})
	openSwarm(t, 8, func() (net.Conn, error) {
		return ha.StalledBody("POST", "/admin/studies/demo/status", "application/x-www-form-urlencoded", 100)
	})
	hostileAPIServes(t, a, "16 stalled admin bodies")
}

// TestHostileSlowBodiesAreCut: a form body that does not arrive within
// BodyReadTimeout, and an upload that trickles a byte every 50 ms (less
// than TransferMinBytes per TransferWindow), are cut off.
func TestHostileSlowBodiesAreCut(t *testing.T) {
	t.Parallel()
	a, h, admin := hostileApp(t, web.Config{BodyReadTimeout: 500 * time.Millisecond,
		TransferWindow: 500 * time.Millisecond, TransferMinBytes: 1 << 10})
	cut, err := h.Trickle("POST", "/s/demo/start", "application/x-www-form-urlencoded", 1000, 50*time.Millisecond, 10*time.Second)
	if err != nil || !cut {
		t.Fatalf("a form trickling for 10 s: cut %v, %v", cut, err)
	}
	ha := faults.Hostile{Addr: h.Addr, Header: hostileCookie(t, a, admin)}
	cut, err = ha.Trickle("POST", "/admin/studies/demo/items", "multipart/form-data; boundary=x", 1<<20, 50*time.Millisecond, 10*time.Second)
	if err != nil || !cut {
		t.Fatalf("an upload trickling for 10 s: cut %v, %v", cut, err)
	}
}

// hostileImage stores a 12 MiB "PNG" (the signature and random bytes; /img
// checks the signature and the hash) in study demo and returns its hash.
func hostileImage(t *testing.T, a *app) (string, int) {
	t.Helper()
	data := make([]byte, 12<<20)
	rand.Read(data)
	copy(data, "\x89PNG\r\n\x1a\n")
	_, err := a.pool.Exec(context.Background(), `INSERT INTO items (study_id, idx, label, file_name, content_type, sha256, width, height, data)
		SELECT id, 100, 'big', 'big.png', 'image/png', $1, 4000, 3000, $2 FROM studies WHERE slug = 'demo'`, sha(data), data)
	if err != nil {
		t.Fatal(err)
	}
	return sha(data), len(data)
}

// TestHostileUnreadResponsesHoldNoSlot: 8 clients that ask for a 12 MiB
// image and read nothing leave the slots free, and the write deadline
// cuts them off; a client that reads slowly but steadily gets the whole
// image, for longer than many TransferWindows.
func TestHostileUnreadResponsesHoldNoSlot(t *testing.T) {
	t.Parallel()
	// A window of 1 s: the slow reader below must not be starved of the
	// CPU for a whole window, which 300 ms did not allow under -race on a
	// busy machine (it was cut off after 4.5 of 12 MiB).
	window := time.Second
	a, h, _ := hostileApp(t, web.Config{TransferWindow: window, TransferMinBytes: 16 << 10})
	sum, size := hostileImage(t, a)
	sw := openSwarm(t, 8, func() (net.Conn, error) { return h.UnreadResponse("/img/" + sum) })
	hostileAPIServes(t, a, "8 unread images")
	time.Sleep(4 * window)
	if n, closed := faults.Drain(sw.Conns[0], 10*time.Second); !closed || n >= int64(size) {
		t.Fatalf("an unread image: %d of %d bytes came, server closed: %v; want it cut off", n, size, closed)
	}

	// 64 KiB every 25 ms: the whole image takes about 5 s, five windows.
	res, err := http.Get(a.srv.URL + "/img/" + sum)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got int64
	buf := make([]byte, 64<<10)
	for {
		n, err := io.ReadFull(res.Body, buf)
		got += int64(n)
		if err != nil {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if got != int64(size) {
		t.Fatalf("a slow steady reader got %d of %d bytes", got, size)
	}
}

// TestHostileBigBodiesRefusedUnread: a 10 MB form to the login and start
// pages, and a 10 MB JSON body, are refused with 413 before they are sent
// (by their Content-Length), and the admin's study form over 1 MiB is too.
func TestHostileBigBodiesRefusedUnread(t *testing.T) {
	t.Parallel()
	a, h, admin := hostileApp(t, web.Config{})
	const size = 10_000_000
	for _, c := range []struct{ path, ct string }{
		{"/admin/login", "application/x-www-form-urlencoded"},
		{"/s/demo/start", "application/x-www-form-urlencoded"},
		{"/s/demo/answer", "application/x-www-form-urlencoded"},
		{"/api/v1/answers", "application/json"},
	} {
		ans, err := h.Send("POST", c.path, c.ct, size, []byte("a=b&"), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if ans.Status != http.StatusRequestEntityTooLarge || ans.Sent >= size || !strings.Contains(ans.Body, "larger than") {
			t.Errorf("%s: %d after %d of %d bytes: %.300s; want 413 before the body is in", c.path, ans.Status, ans.Sent, size, ans.Body)
		}
	}
	// Over the limit but under net/http's 256 KiB discard threshold, and
	// stalled: still answered at once (the server does not wait for the
	// rest of the body to keep the connection).
	c, err := h.StalledBody("POST", "/s/demo/start", "application/x-www-form-urlencoded", 100_000)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if res, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a stalled 100,000-byte form: %v, want 413 at once", err)
	}
	ha := faults.Hostile{Addr: h.Addr, Header: hostileCookie(t, a, admin)}
	ans, err := ha.Send("POST", "/admin/studies/demo", "application/x-www-form-urlencoded", 2<<20, []byte("a=b&"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("a 2 MiB study form: %d, want 413", ans.Status)
	}
	// Chunked (no Content-Length): read up to the limit, then 413.
	req, _ := http.NewRequest("POST", a.srv.URL+"/s/demo/start", io.MultiReader(strings.NewReader("consent=yes&x="), bytes.NewReader(bytes.Repeat([]byte("a"), 1<<20))))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if res := a.send(http.DefaultClient, req); res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a chunked 1 MiB form: %d, want 413", res.StatusCode)
	}
}

// TestHostileMultipartFieldsBounded: an upload of thousands of distinct
// text fields (7,800 of 64 KiB held 700 MiB) is refused at 32 fields, and
// a few large ones at 256 KiB in all; the refusal is the upload's report.
func TestHostileMultipartFieldsBounded(t *testing.T) {
	t.Parallel()
	a, _, admin := hostileApp(t, web.Config{})
	for _, c := range []struct {
		n, size int
		reason  string
	}{
		{2000, 1 << 10, "more than 32 text fields"},
		{8, 60 << 10, "hold more than 256.0 KiB in all"},
	} {
		body, ct := faults.ManyFields(c.n, c.size)
		req, _ := http.NewRequest("POST", a.srv.URL+"/admin/studies/demo/items", bytes.NewReader(body))
		req.Header.Set("Content-Type", ct)
		res := a.send(admin, req)
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("%d fields: %d %s", c.n, res.StatusCode, res.body)
		}
		page := a.do(admin, "GET", res.Header.Get("Location"), nil, nil)
		if !strings.Contains(page.body, c.reason) {
			t.Errorf("%d fields of %d bytes: the report does not say %q", c.n, c.size, c.reason)
		}
	}
}
