package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/purge"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/web"
	"golang.org/x/crypto/bcrypt"
)

// newAppWithJobs is newApp with the background jobs of a web replica: a
// River client that enqueues recomputes and purges (no worker runs them).
func newAppWithJobs(t *testing.T) (*app, *recompute.Jobs) {
	t.Helper()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	accounts := account.New(pool, account.PasswordCost(bcrypt.MinCost))
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	jobs, err := recompute.New(pool, store, recompute.Config{}, log)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = web.New(store, accounts, web.Config{BaseURL: base, Jobs: jobs, Purges: purge.NewEnqueuer(jobs)}, log)
	srv.Start()
	t.Cleanup(srv.Close)
	return &app{t: t, pool: pool, store: store, accounts: accounts, srv: srv}, jobs
}

// studyRows counts the study's rows in every table that has a study_id
// column (found in the catalog), and its own row.
func (a *app) studyRows(studyID int64) map[string]int {
	a.t.Helper()
	ctx := context.Background()
	rows, err := a.pool.Query(ctx, `
		SELECT table_name::text FROM information_schema.columns
		WHERE table_schema = 'public' AND column_name = 'study_id'`)
	if err != nil {
		a.t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			a.t.Fatal(err)
		}
		tables = append(tables, n)
	}
	if err := rows.Err(); err != nil {
		a.t.Fatal(err)
	}
	out := map[string]int{"studies": a.count(`SELECT count(*) FROM studies WHERE id = $1`, studyID)}
	for _, table := range tables {
		out[table] = a.count(fmt.Sprintf(`SELECT count(*) FROM %s WHERE study_id = $1`, table), studyID)
	}
	return out
}

// Deleting a study answers at once: the study is gone from every page and
// the API, its participants are refused with a 4xx, its slug is free, its
// recompute is cancelled and its purge enqueued; the purge then deletes
// every row of it and nothing of the other study.
func TestDeleteStudyInBackground(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, jobs := newAppWithJobs(t)
	c := a.admin()
	st := a.study("birds", 5, 4, "open")
	fish := a.study("fish", 5, 4, "open")

	// An API participant holding a question, a browser participant, and a
	// queued recompute.
	j := a.join("birds", `{"external_id": "w1"}`)
	var n nextResp
	if res := a.api("GET", "/api/v1/studies/birds/next", j.Token, "", &n); res.StatusCode != 200 {
		t.Fatalf("next: %d %s", res.StatusCode, res.body)
	}
	answer := fmt.Sprintf(`{"question_id": %q, "closer": %d}`, n.QuestionID, n.Left.Index)
	browser := a.client()
	if res := a.do(browser, "POST", "/s/birds/start", url.Values{}, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("start: %d", res.StatusCode)
	}
	if res := a.do(browser, "GET", "/s/birds/q", nil, nil); res.StatusCode != 200 {
		t.Fatalf("question page: %d", res.StatusCode)
	}
	if _, _, err := jobs.Enqueue(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	birdsBefore, fishBefore := a.studyRows(st.ID), a.studyRows(fish.ID)

	res := a.do(c, "POST", "/admin/studies/birds/delete", url.Values{"confirm": {"yes"}}, nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin" {
		t.Fatalf("delete: %d %s", res.StatusCode, res.body)
	}
	// Accepted, not done: the rows wait for the purge.
	if rows := a.studyRows(st.ID); !maps.Equal(rows, birdsBefore) {
		t.Fatalf("the request deleted rows itself: %v, was %v", rows, birdsBefore)
	}
	if res := a.do(c, "POST", "/admin/studies/birds/delete", url.Values{"confirm": {"yes"}}, nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("second delete: %d", res.StatusCode)
	}

	// Gone from the admin pages, by its old slug and by its new one.
	if res := a.do(c, "GET", "/admin", nil, nil); res.StatusCode != 200 ||
		strings.Contains(res.body, "Study birds") || strings.Contains(res.body, "deleted:") || !strings.Contains(res.body, "Study fish") {
		t.Fatalf("studies list after the delete: %d", res.StatusCode)
	}
	for _, slug := range []string{"birds", fmt.Sprintf("deleted:%d", st.ID)} {
		for _, path := range []string{"", "/edit", "/dashboard", "/dashboard/status", "/triplets.csv", "/bundle.zip", "/embedding.csv"} {
			if res := a.do(c, "GET", "/admin/studies/"+slug+path, nil, nil); res.StatusCode != http.StatusNotFound {
				t.Errorf("GET /admin/studies/%s%s: %d", slug, path, res.StatusCode)
			}
		}
		if res := a.do(c, "POST", "/admin/studies/"+slug+"/dashboard/recompute", url.Values{}, nil); res.StatusCode != http.StatusNotFound {
			t.Errorf("recompute of %s: %d", slug, res.StatusCode)
		}
	}
	// Its participants: a 404 for its pages and its API by slug, a 409
	// ("the study is closed") for an answer by token; never a 5xx.
	if res := a.do(browser, "GET", "/s/birds/q", nil, nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("question page: %d", res.StatusCode)
	}
	if res := a.do(a.client(), "GET", "/s/birds", nil, nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("landing page: %d", res.StatusCode)
	}
	if res := a.api("GET", "/api/v1/studies/birds/next", j.Token, "", nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("API next: %d %s", res.StatusCode, res.body)
	}
	if res := a.api("POST", "/api/v1/studies/birds/participants", "", `{}`, nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("API join: %d %s", res.StatusCode, res.body)
	}
	if res := a.api("POST", "/api/v1/answers", j.Token, answer, nil); res.StatusCode != http.StatusConflict || !strings.Contains(res.body, "closed") {
		t.Errorf("API answer: %d %s", res.StatusCode, res.body)
	}
	// Its recompute was cancelled and its purge enqueued, once.
	if state, _, err := jobs.Pending(ctx, st.ID); err != nil || state != "" {
		t.Errorf("recompute still pending: %q %v", state, err)
	}
	if k := a.count(`SELECT count(*) FROM river_job WHERE kind = $1 AND (args->>'study_id')::bigint = $2`, purge.Args{}.Kind(), st.ID); k != 1 {
		t.Errorf("%d purge jobs enqueued", k)
	}

	// The slug is free at once; the old cookie is not the new study's.
	form := url.Values{"title": {"Birds again"}, "slug": {"birds"}, "questions_per_participant": {"4"}, "status": {"open"}, "design": {"random"}}
	if res := a.do(c, "POST", "/admin/studies", form, nil); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin/studies/birds" {
		t.Fatalf("new study with the slug: %d %s", res.StatusCode, res.body)
	}
	again, err := a.store.StudyBySlug(ctx, "birds")
	if err != nil {
		t.Fatal(err)
	}
	if res := a.do(browser, "GET", "/s/birds/q", nil, nil); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/s/birds" {
		t.Errorf("old participant on the new study: %d %s", res.StatusCode, res.Header.Get("Location"))
	}

	// The purge job's work: every row of the study goes, the others stay.
	if _, err := purge.Study(ctx, a.store.Store, st.ID, 3); err != nil {
		t.Fatal(err)
	}
	for table, n := range a.studyRows(st.ID) {
		if n != 0 {
			t.Errorf("%s: %d rows of the deleted study left (had %d)", table, n, birdsBefore[table])
		}
	}
	if rows := a.studyRows(fish.ID); !maps.Equal(rows, fishBefore) {
		t.Errorf("the other study changed: %v, was %v", rows, fishBefore)
	}
	if rows := a.studyRows(again.ID); rows["studies"] != 1 {
		t.Errorf("the new study with the slug: %v", rows)
	}
	if res := a.api("POST", "/api/v1/answers", j.Token, answer, nil); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("API answer after the purge: %d %s", res.StatusCode, res.body)
	}
}
