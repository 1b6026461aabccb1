package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/studyfile"
	"github.com/closer-lab/closer/internal/triplet"
	"github.com/closer-lab/closer/internal/web"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"
)

// largeApp is the router on a database holding a study "large" of 1,000
// label-only items with 100,000 imported answers (1,000 participants,
// already recomputed once) and an open study "demo" of the 40 demo disks,
// with an admin session cookie.
type largeApp struct {
	pool     *pgxpool.Pool
	store    *collect.Store
	accounts *account.Store
	handler  http.Handler
	cookie   *http.Cookie
	large    study.Study
	items    int // the large study's
	demo     study.Study
}

func newLargeApp(b *testing.B) *largeApp {
	b.Helper()
	pool, _ := pgtest.NewDB(b)
	store := collect.New(pool)
	accounts := account.New(pool, account.PasswordCost(bcrypt.MinCost))
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	items, answers := 1000, 100000
	if testing.Short() {
		// make bench-smoke (-short -benchtime 1x): the same path on a
		// smaller study; the first recompute of the large one takes ~20 s.
		items, answers = 200, 10000
	}
	large, _, err := studyfile.ImportTriplets(ctx, store, studyfile.TripletsInput{Slug: "large", Title: "Large", CSV: bytes.NewReader(synthTriplets(items, answers, 1000, 11))})
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	if _, err := recompute.Run(ctx, store, large.ID, 0); err != nil {
		b.Fatal(err)
	}
	b.Logf("first recompute of %d items and %d answers (cold, no warm start): %v", items, answers, time.Since(t0).Round(time.Millisecond))
	dm, err := store.CreateStudy(ctx, study.StudyInput{Slug: "demo", Title: "Demo", QuestionsPerParticipant: 100000, Status: study.StatusOpen})
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := store.AddItems(ctx, dm.ID, demo.Items()); err != nil {
		b.Fatal(err)
	}
	admin, err := accounts.CreateAdmin(ctx, "bench@example.org", "bench-password")
	if err != nil {
		b.Fatal(err)
	}
	token, err := accounts.CreateSession(ctx, account.NewSession{AdminID: admin.ID, TTL: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	jobs, err := recompute.New(pool, store, recompute.Config{}, log)
	if err != nil {
		b.Fatal(err)
	}
	h := web.New(store, accounts, web.Config{BaseURL: "http://bench.example", Jobs: jobs}, log)
	return &largeApp{pool: pool, store: store, accounts: accounts, handler: h, cookie: &http.Cookie{Name: "closer_session", Value: token}, large: large, items: items, demo: dm}
}

func (l *largeApp) serve(b *testing.B, req *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	l.handler.ServeHTTP(w, req)
	if w.Code >= 300 {
		b.Fatalf("%s %s: %d %.300s", req.Method, req.URL, w.Code, w.Body.String())
	}
	return w
}

func quantiles(d []time.Duration) (p50, p95 float64) {
	slices.Sort(d)
	ms := func(x time.Duration) float64 { return float64(x.Microseconds()) / 1000 }
	return ms(d[len(d)/2]), ms(d[len(d)*95/100])
}

// BenchmarkDashboardLarge measures the dashboard page's server time for the
// study of 1,000 items and 100,000 answers, through the router: "warm" is a
// reload with nothing new (the aggregates and the decoded run come from the
// server's cache, checked against the study's fingerprint in PostgreSQL),
// "cold" a fresh server each time (as after a new answer or a new run:
// every aggregate query, decoding the stored result, drawing every plot).
//
// "new-answers" keeps one server and stores five new answers before each
// load (a study collecting answers while its dashboard refreshes itself).
//
//	go test ./internal/web -run '^$' -bench DashboardLarge -benchtime 50x
func BenchmarkDashboardLarge(b *testing.B) {
	l := newLargeApp(b)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	bench := func(fresh bool) func(b *testing.B) {
		return func(b *testing.B) {
			var times []time.Duration
			size := 0
			for b.Loop() {
				if fresh {
					l.handler = web.New(l.store, l.accounts, web.Config{BaseURL: "http://bench.example"}, log)
				}
				req := httptest.NewRequest("GET", "/admin/studies/large/dashboard", nil)
				req.AddCookie(l.cookie)
				t0 := time.Now()
				w := l.serve(b, req)
				times = append(times, time.Since(t0))
				size = w.Body.Len()
			}
			p50, p95 := quantiles(times)
			b.ReportMetric(p50, "p50-ms")
			b.ReportMetric(p95, "p95-ms")
			b.ReportMetric(float64(size)/1024, "page-KiB")
		}
	}
	b.Run("warm", bench(false))
	b.Run("cold", bench(true))
	b.Run("new-answers", func(b *testing.B) {
		// One server for all loads (its first load counts from scratch
		// and decodes the run; it is the slowest of the 50, above the
		// p95); five new answers from random participants before each
		// load, so every later load advances the tally past them.
		ctx := context.Background()
		l.handler = web.New(l.store, l.accounts, web.Config{BaseURL: "http://bench.example"}, log)
		rng := triplet.NewRand(5)
		var times []time.Duration
		for b.Loop() {
			if err := insertAnswers(ctx, l.pool, l.large.ID, l.items, 5, rng); err != nil {
				b.Fatal(err)
			}
			req := httptest.NewRequest("GET", "/admin/studies/large/dashboard", nil)
			req.AddCookie(l.cookie)
			t0 := time.Now()
			l.serve(b, req)
			times = append(times, time.Since(t0))
		}
		p50, p95 := quantiles(times)
		b.ReportMetric(p50, "p50-ms")
		b.ReportMetric(p95, "p95-ms")
	})
}

// insertAnswers stores n answers to random questions of the study's first
// items from its participants, each as collect.Store.Answer does (question,
// answer and vote in one transaction); the large study is label-only, so it
// cannot be opened to answer through the API.
func insertAnswers(ctx context.Context, pool *pgxpool.Pool, studyID int64, items, n int, rng *rand.Rand) error {
	for range n {
		a, j, k := triplet.RandomQuestion(rng, items)
		closer, farther := j, k
		if rng.IntN(2) == 0 {
			closer, farther = k, j
		}
		jc, kc := 0, 1
		if closer == min(j, k) {
			jc, kc = 1, 0
		}
		qid := fmt.Sprintf("bench-%016x", rng.Uint64())
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			var pid int64
			if err := tx.QueryRow(ctx, `SELECT id FROM participants WHERE study_id = $1 ORDER BY id OFFSET $2 LIMIT 1`,
				studyID, rng.IntN(100)).Scan(&pid); err != nil {
				return err
			}
			// A question is answered when its answers row exists (migration
			// 000009); the participant counts its answers.
			if _, err := tx.Exec(ctx, `INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design)
				VALUES ($1, $2, $3, $4, $5, $6, 'random')`, qid, studyID, pid, a, j, k); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE participants SET answered = answered + 1 WHERE id = $1`, pid); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO answers (question_id, study_id, participant_id, anchor, closer, farther, response_ms)
				VALUES ($1, $2, $3, $4, $5, $6, $7)`, qid, studyID, pid, a, closer, farther, 400+rng.IntN(4000)); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO votes (study_id, anchor, j, k, j_closer, k_closer) VALUES ($1, $2, $3, $4, $5, $6)
				ON CONFLICT (study_id, anchor, j, k) DO UPDATE
				SET j_closer = votes.j_closer + excluded.j_closer, k_closer = votes.k_closer + excluded.k_closer`,
				studyID, a, min(j, k), max(j, k), jc, kc)
			return err
		})
		if err != nil {
			return fmt.Errorf("insert answers: %w", err)
		}
	}
	return nil
}

// BenchmarkQuestionLatency measures one question round trip through the
// router (GET next, POST the answer, as the JSON API does) on the open demo
// study: idle, and while the large study's recompute runs in a loop in the
// same process.
//
//	go test ./internal/web -run '^$' -bench QuestionLatency -benchtime 400x
func BenchmarkQuestionLatency(b *testing.B) {
	l := newLargeApp(b)
	ctx := context.Background()
	roundTrip := func(b *testing.B, token string) {
		req := httptest.NewRequest("GET", "/api/v1/studies/demo/next", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		var next struct {
			QuestionID string `json:"question_id"`
			Left       struct {
				Index int `json:"index"`
			} `json:"left"`
		}
		if err := json.Unmarshal(l.serve(b, req).Body.Bytes(), &next); err != nil {
			b.Fatal(err)
		}
		req = httptest.NewRequest("POST", "/api/v1/answers",
			strings.NewReader(fmt.Sprintf(`{"question_id": %q, "closer": %d, "response_ms": 900}`, next.QuestionID, next.Left.Index)))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		l.serve(b, req)
	}
	run := func(b *testing.B) {
		_, token, err := l.store.CreateParticipant(ctx, l.demo.ID, "", nil)
		if err != nil {
			b.Fatal(err)
		}
		var times []time.Duration
		b.ResetTimer()
		for b.Loop() {
			t0 := time.Now()
			roundTrip(b, token)
			times = append(times, time.Since(t0))
		}
		p50, p95 := quantiles(times)
		b.ReportMetric(p50, "p50-ms")
		b.ReportMetric(p95, "p95-ms")
	}
	b.Run("idle", run)
	b.Run("during-recompute", func(b *testing.B) {
		rctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		started := make(chan struct{})
		wg.Go(func() {
			close(started)
			for rctx.Err() == nil {
				// Load only: a run cut short by rctx's end fails, and that is fine.
				_, _ = recompute.Run(rctx, l.store, l.large.ID, 0)
			}
		})
		<-started
		time.Sleep(2 * time.Second) // past the answers' load, into the kernels
		run(b)
		stop()
		wg.Wait()
	})
}
