package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/web"
	"golang.org/x/crypto/bcrypt"
)

// app is the real router on a fresh database, served over loopback.
type app struct {
	t        *testing.T
	pool     *pgxpool.Pool
	store    *collect.Store
	accounts *account.Store
	srv      *httptest.Server
}

func newApp(t *testing.T) *app {
	t.Helper()
	return newAppWrapped(t, nil)
}

// newAppWrapped is newApp with the router inside wrap (nil: none), e.g. to
// watch the requests a browser makes.
func newAppWrapped(t *testing.T, wrap func(http.Handler) http.Handler) *app {
	t.Helper()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	accounts := account.New(pool, account.PasswordCost(bcrypt.MinCost))
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = web.New(store, accounts, web.Config{BaseURL: base}, log)
	if wrap != nil {
		srv.Config.Handler = wrap(srv.Config.Handler)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return &app{t: t, pool: pool, store: store, accounts: accounts, srv: srv}
}

// client returns a browser-like client with its own cookie jar that does
// not follow redirects (so tests see the 303s).
func (a *app) client() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// study creates a study with the first n demo disks.
func (a *app) study(slug string, n, perParticipant int, status string) study.Study {
	a.t.Helper()
	ctx := context.Background()
	st, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: slug, Title: "Study " + slug,
		Instructions: "Pick the **closer** one.", Debrief: "Thanks, *friend*.", QuestionsPerParticipant: perParticipant, Status: status})
	if err != nil {
		a.t.Fatal(err)
	}
	if n > 0 {
		if _, rej, err := a.store.AddItems(ctx, st.ID, demo.Items()[:n]); err != nil || len(rej) > 0 {
			a.t.Fatal(rej, err)
		}
	}
	return st
}

// admin creates an admin and returns a client logged in as them.
func (a *app) admin() *http.Client {
	a.t.Helper()
	if _, err := a.accounts.CreateAdmin(context.Background(), "r@example.org", "secret-password"); err != nil {
		a.t.Fatal(err)
	}
	c := a.client()
	res := a.do(c, "POST", "/admin/login", url.Values{"email": {"r@example.org"}, "password": {"secret-password"}}, nil)
	if res.StatusCode != http.StatusSeeOther {
		a.t.Fatalf("login: %d %s", res.StatusCode, res.body)
	}
	return c
}

type response struct {
	*http.Response
	body string
}

// do sends a form (POST) or nothing (GET) with extra headers.
func (a *app) do(c *http.Client, method, path string, form url.Values, header map[string]string) response {
	a.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, a.srv.URL+path, body)
	if err != nil {
		a.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return a.send(c, req)
}

func (a *app) send(c *http.Client, req *http.Request) response {
	a.t.Helper()
	res, err := c.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return response{res, string(b)}
}

// api sends a JSON request with an optional bearer token and decodes the
// JSON answer into out (if not nil).
func (a *app) api(method, path, token, body string, out any) response {
	a.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, a.srv.URL+path, r)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	res := a.send(http.DefaultClient, req)
	if out != nil && res.StatusCode < 300 {
		if err := json.Unmarshal([]byte(res.body), out); err != nil {
			a.t.Fatalf("%s %s: %v in %s", method, path, err, res.body)
		}
	}
	return res
}

// count runs a count query.
func (a *app) count(sql string, args ...any) int {
	a.t.Helper()
	var n int
	if err := a.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		a.t.Fatal(err)
	}
	return n
}

var (
	questionIDRE = regexp.MustCompile(`name="question_id" value="([a-z0-9]+)"`)
	closerRE     = regexp.MustCompile(`name="closer" value="(\d+)"`)
	progressRE   = regexp.MustCompile(`(\d+) of (\d+)</span>`)
)
