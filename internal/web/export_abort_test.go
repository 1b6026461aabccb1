package web_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/web"
	"golang.org/x/crypto/bcrypt"
)

// smallBuffers keeps the server's socket send buffer small, so that a
// client that stops reading stops the export within a few kilobytes
// instead of after megabytes of kernel buffers.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}

// smallReceiveBuffer is a dialer whose connections have a small receive
// buffer (set before connecting, so the TCP window stays small).
var smallReceiveBuffer = &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10) })
	if err != nil {
		return err
	}
	return serr
}}

// A stream whose database backend is killed half way is cut off: the
// client gets an error reading the body, never a complete-looking file,
// whether or not the request log wraps the response, over HTTP/1.1 and
// over HTTP/2 (TLS), for the triplets export (API and admin) and the
// bundle.
func TestExportKilledMidStreamIsCutOff(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	store := collect.New(pool)
	accounts := account.New(pool, account.PasswordCost(bcrypt.MinCost))
	st, err := store.CreateStudy(ctx, study.StudyInput{Slug: "big", Title: "Big", QuestionsPerParticipant: 50, Status: "open"})
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := store.AddItems(ctx, st.ID, demo.Items()); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	items := len(demo.Items())
	const participants, per = 400, 120 // 48,000 answers, about 7 MB of CSV
	for _, q := range []string{
		`INSERT INTO participants (public_id, study_id, token_hash)
		SELECT 'bulk' || g, $1, decode(md5('t' || g), 'hex') FROM generate_series(1, $2::int) g WHERE $3::int > 0 AND $4::int > 0`,
		`INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design, issued_at)
		SELECT 'q' || p.id || '-' || i, $1, p.id, i % $4, (i + 1) % $4, (i + 2 + i / $4) % $4, 'random',
			timestamptz '2026-01-01' + make_interval(secs => p.id * 1000 + i)
		FROM participants p, generate_series(0, $3::int - 1) i WHERE p.study_id = $1 AND $2::int > 0`,
		`INSERT INTO answers (question_id, study_id, participant_id, anchor, closer, farther, answered_at)
		SELECT id, study_id, participant_id, anchor, left_idx, right_idx, issued_at FROM questions
		WHERE study_id = $1 AND $2::int > 0 AND $3::int > 0 AND $4::int > 0`,
	} {
		if _, err := pool.Exec(ctx, q, st.ID, participants, per, items); err != nil {
			t.Fatal(err)
		}
	}
	adm, err := accounts.CreateAdmin(ctx, "r@example.org", "secret-password")
	if err != nil {
		t.Fatal(err)
	}
	token, _, err := accounts.CreateAPIToken(ctx, adm.ID, "export")
	if err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct { //nolint:paralleltest // subtests kill connections of one shared server
		name       string
		requestLog bool
		tls        bool
		path       string
	}{
		{"api triplets, HTTP/1.1, no request log", false, false, "/api/v1/studies/big/triplets.csv"},
		{"api triplets, HTTP/1.1, request log", true, false, "/api/v1/studies/big/triplets.csv"},
		{"admin triplets, HTTP/2, no request log", false, true, "/admin/studies/big/triplets.csv"},
		{"admin all answers, HTTP/1.1, no request log", false, false, "/admin/studies/big/triplets.csv?all_answers=1"},
		{"bundle, HTTP/1.1, no request log", false, false, "/admin/studies/big/bundle.zip"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(nil)
			srv.Listener = smallBuffers{srv.Listener}
			scheme := "http://"
			if c.tls {
				scheme = "https://"
			}
			cfg := web.Config{BaseURL: scheme + srv.Listener.Addr().String(), RequestLog: c.requestLog}
			srv.Config.Handler = web.New(store, accounts, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if c.tls {
				srv.EnableHTTP2 = true
				srv.StartTLS()
			} else {
				srv.Start()
			}
			t.Cleanup(srv.Close)
			client := srv.Client()
			tr := client.Transport.(*http.Transport).Clone()
			tr.DialContext = smallReceiveBuffer.DialContext
			client = &http.Client{Transport: tr}

			req, _ := http.NewRequest("GET", srv.URL+c.path, nil)
			if strings.HasPrefix(c.path, "/api/") {
				req.Header.Set("Authorization", "Bearer "+token)
			} else {
				sid, err := accounts.CreateSession(ctx, account.NewSession{AdminID: adm.ID, TTL: time.Hour})
				if err != nil {
					t.Fatal(err)
				}
				req.AddCookie(&http.Cookie{Name: "closer_session", Value: sid})
			}
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(res.Body)
				t.Fatalf("%d %.300s", res.StatusCode, b)
			}
			if c.tls && res.ProtoMajor != 2 {
				t.Fatalf("served over %s, want HTTP/2", res.Proto)
			}
			head := make([]byte, 1024)
			if _, err := io.ReadFull(res.Body, head); err != nil {
				t.Fatal(err)
			}
			// The client has stopped reading: the export waits on the
			// network inside its transaction. Kill its backend.
			var killed int
			if err := pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL`).Scan(&killed); err != nil {
				t.Fatal(err)
			}
			if killed != 1 {
				t.Fatalf("%d backends in a transaction, want the export's one", killed)
			}
			n, err := io.Copy(io.Discard, res.Body)
			if err == nil {
				t.Fatalf("the body ended cleanly after %d more bytes: a truncated export looks complete", n)
			}
			if !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "INTERNAL_ERROR") {
				t.Errorf("reading the body: %v, want an unexpected EOF (HTTP/1.1) or a stream reset (HTTP/2)", err)
			}
		})
	}
}
