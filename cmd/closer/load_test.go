package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
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

// loadApp is the real router on a fresh database, served over loopback,
// optionally behind a handler that plants a fault.
type loadApp struct {
	t        *testing.T
	pool     *pgxpool.Pool
	store    *collect.Store
	accounts *account.Store
	url      string
	token    string // an admin API token
}

func newLoadApp(t *testing.T, plant func(next http.Handler) http.Handler) *loadApp {
	t.Helper()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	accounts := account.New(pool, account.PasswordCost(bcrypt.MinCost))
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	var h http.Handler = web.New(store, accounts, web.Config{BaseURL: base}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if plant != nil {
		h = plant(h)
	}
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(srv.Close)
	ctx := context.Background()
	admin, err := accounts.CreateAdmin(ctx, "load@example.org", "load-password")
	if err != nil {
		t.Fatal(err)
	}
	token, _, err := accounts.CreateAPIToken(ctx, admin.ID, "load test")
	if err != nil {
		t.Fatal(err)
	}
	return &loadApp{t: t, pool: pool, store: store, accounts: accounts, url: srv.URL, token: token}
}

// study creates an open random-design study of the first n demo disks,
// with 10 questions per participant (so participants finish and rejoin).
func (a *loadApp) study(slug string, n int) { //nolint:unparam // the item count is the test's choice, named at the call
	a.t.Helper()
	ctx := context.Background()
	st, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: slug, Title: "Load " + slug,
		QuestionsPerParticipant: 10, Status: study.StatusOpen})
	if err != nil {
		a.t.Fatal(err)
	}
	if _, rej, err := a.store.AddItems(ctx, st.ID, demo.Items()[:n]); err != nil || len(rej) > 0 {
		a.t.Fatal(rej, err)
	}
}

// stored counts the answers stored in a study.
func (a *loadApp) stored(slug string) int {
	a.t.Helper()
	var n int
	err := a.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM answers a JOIN studies s ON s.id = a.study_id WHERE s.slug = $1`, slug).Scan(&n)
	if err != nil {
		a.t.Fatal(err)
	}
	return n
}

// loadOutput is the --json contract, spelled out here rather than reusing
// the command's own type.
type loadOutput struct {
	Answers      int     `json:"answers"`
	AnswersPerS  float64 `json:"answers_per_s"`
	Participants int     `json:"participants"`
	Completed    int     `json:"participants_completed"`
	Endpoints    map[string]struct {
		Requests int            `json:"requests"`
		OK       int            `json:"ok"`
		P50MS    float64        `json:"p50_ms"`
		P95MS    float64        `json:"p95_ms"`
		P99MS    float64        `json:"p99_ms"`
		Errors   map[string]int `json:"errors"`
	} `json:"endpoints"`
	ServerErrors int `json:"server_errors_not_503"`
	Check        *struct {
		OK                   bool `json:"ok"`
		ExportRows           int  `json:"export_rows"`
		Acknowledged         int  `json:"acknowledged"`
		Lost                 int  `json:"lost"`
		Duplicated           int  `json:"duplicated"`
		WrongCloser          int  `json:"wrong_closer"`
		Unacknowledged       int  `json:"unacknowledged"`
		UnacknowledgedStored int  `json:"unacknowledged_stored"`
		Rejected             int  `json:"rejected"`
		RejectedStored       int  `json:"rejected_stored"`
	} `json:"check"`
	Error string `json:"error"`
	OK    bool   `json:"ok"`
}

// load runs `closer load --json` on a study with 8 annotators until 150
// answers were acknowledged (extra flags override).
func (a *loadApp) load(slug string, extra ...string) (out loadOutput, stderr string, code int) {
	a.t.Helper()
	args := append([]string{"load", "--base", a.url, "--study", slug, "--concurrency", "8",
		"--duration", "1m", "--answers", "150", "--admin-token", a.token, "--json"}, extra...)
	var o, e bytes.Buffer
	code = run(context.Background(), args, &o, &e)
	if err := json.Unmarshal(o.Bytes(), &out); err != nil {
		a.t.Fatalf("--json output does not parse (%v):\n%s\nstderr: %s", err, o.String(), e.String())
	}
	if out.Check == nil {
		a.t.Fatalf("no check in the output:\n%s", o.String())
	}
	return out, e.String(), code
}

// A plain run: answers flow, and every acknowledged answer is in the
// export once; the database agrees with the count.
func TestLoadChecksEveryAnswerOnce(t *testing.T) {
	t.Parallel()
	a := newLoadApp(t, nil)
	a.study("plain", 12)
	out, stderr, code := a.load("plain")
	if code != 0 || !out.OK {
		t.Fatalf("exit %d, ok %v: %s %s", code, out.OK, out.Error, stderr)
	}
	c := out.Check
	if out.Answers == 0 || c.Acknowledged != out.Answers || c.Lost != 0 || c.Duplicated != 0 || c.WrongCloser != 0 ||
		c.Unacknowledged != 0 || c.Rejected != 0 {
		t.Fatalf("answers %d, check %+v", out.Answers, *c)
	}
	if out.Answers < 150 {
		t.Fatalf("stopped after %d answers, want at least 150", out.Answers)
	}
	if n := a.stored("plain"); n != out.Answers || c.ExportRows != n {
		t.Fatalf("%d answers acknowledged, %d stored, %d exported", out.Answers, n, c.ExportRows)
	}
	// One request per answer: each answer's reply carries the next
	// question, so a participant asks for a question on its own only once,
	// at its start.
	ans, next, parts := out.Endpoints["answer"], out.Endpoints["next"], out.Endpoints["participants"]
	if ans.OK != out.Answers || next.OK > out.Participants || next.OK == 0 || parts.OK != out.Participants || out.Completed == 0 {
		t.Fatalf("endpoints %+v, participants %d completed %d", out.Endpoints, out.Participants, out.Completed)
	}
	if len(ans.Errors)+len(next.Errors)+len(parts.Errors) != 0 || out.ServerErrors != 0 {
		t.Fatalf("errors on a healthy server: %+v", out.Endpoints)
	}
	if !(0 < ans.P50MS && ans.P50MS <= ans.P95MS && ans.P95MS <= ans.P99MS) {
		t.Fatalf("answer latencies p50 %v p95 %v p99 %v", ans.P50MS, ans.P95MS, ans.P99MS)
	}

	// --separate-next: a request for every next question, as before.
	sep, stderr, code := a.load("plain", "--separate-next")
	if code != 0 || !sep.OK || sep.Check.Lost != 0 || sep.Check.Duplicated != 0 {
		t.Fatalf("--separate-next: exit %d, ok %v: %s %s", code, sep.OK, sep.Error, stderr)
	}
	if sep.Endpoints["next"].OK < sep.Endpoints["answer"].OK {
		t.Fatalf("--separate-next: %d next requests for %d answers", sep.Endpoints["next"].OK, sep.Endpoints["answer"].OK)
	}

	// The text report says the same in words.
	var o, e bytes.Buffer
	if code := run(context.Background(), []string{"load", "--base", a.url, "--study", "plain", "--concurrency", "2",
		"--duration", "300ms", "--admin-token", a.token}, &o, &e); code != 0 {
		t.Fatalf("text run: exit %d: %s", code, e.String())
	}
	for _, want := range []string{"answers/s", "p99 ms", "errors: none", "export check OK", "0 lost, 0 duplicated"} {
		if !strings.Contains(o.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, o.String())
		}
	}
}

// An unknown study stops the run at once with the server's reason.
func TestLoadUnknownStudy(t *testing.T) {
	t.Parallel()
	a := newLoadApp(t, nil)
	var o, e bytes.Buffer
	code := run(context.Background(), []string{"load", "--base", a.url, "--study", "nope", "--duration", "1m"}, &o, &e)
	if code != 1 || !strings.Contains(e.String(), "404") {
		t.Fatalf("exit %d, stderr %q", code, e.String())
	}
}

// With --coords every stored triplet agrees with the coordinates, whether
// the file names items by label or by index.
func TestLoadOracleAnswersFromCoordinates(t *testing.T) {
	t.Parallel()
	a := newLoadApp(t, nil)
	const n = 12
	rng := rand.New(rand.NewPCG(7, 7))
	pts := make([][2]float64, n)
	for i := range pts {
		pts[i] = [2]float64{rng.Float64(), rng.Float64()}
	}
	dist := func(i, j int) float64 {
		dx, dy := pts[i][0]-pts[j][0], pts[i][1]-pts[j][1]
		return dx*dx + dy*dy
	}
	for _, byLabel := range []bool{true, false} { //nolint:paralleltest // subtests share one app
		slug := map[bool]string{true: "labels", false: "indices"}[byLabel]
		t.Run(slug, func(t *testing.T) {
			a.study(slug, n)
			var b strings.Builder
			b.WriteString("item,x1,x2\n")
			for i, p := range pts {
				id := strconv.Itoa(i)
				if byLabel {
					id = fmt.Sprintf("disk-%02d", i+1)
				}
				fmt.Fprintf(&b, "%s,%g,%g\n", id, p[0], p[1])
			}
			file := filepath.Join(t.TempDir(), "coords.csv")
			if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			out, stderr, code := a.load(slug, "--coords", file)
			if code != 0 || out.Answers == 0 {
				t.Fatalf("exit %d, %d answers: %s", code, out.Answers, stderr)
			}
			rows, err := a.pool.Query(context.Background(),
				`SELECT a.anchor, a.closer, a.farther FROM answers a JOIN studies s ON s.id = a.study_id WHERE s.slug = $1`, slug)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			seen := 0
			for rows.Next() {
				var an, cl, fa int
				if err := rows.Scan(&an, &cl, &fa); err != nil {
					t.Fatal(err)
				}
				seen++
				if dist(an, cl) > dist(an, fa) {
					t.Fatalf("triplet (%d, %d, %d) disagrees with the coordinates", an, cl, fa)
				}
			}
			if seen != out.Answers {
				t.Fatalf("%d triplets stored, %d acknowledged", seen, out.Answers)
			}
		})
	}
	t.Run("missing item", func(t *testing.T) {
		a.study("missing", n)
		file := filepath.Join(t.TempDir(), "coords.csv")
		if err := os.WriteFile(file, []byte("item,x\n0,1\n1,2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, _, code := a.load("missing", "--coords", file, "--duration", "1m")
		if code != 1 || !strings.Contains(out.Error, "no item") {
			t.Fatalf("exit %d, error %q", code, out.Error)
		}
	})
}

// rewriteExport plants a bug in the export of the studies whose slug
// starts with mode: every 10th row dropped, repeated, or with closer and
// farther swapped.
func rewriteExport(t *testing.T) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			slug, ok := strings.CutPrefix(r.URL.Path, "/api/v1/studies/")
			slug, ok2 := strings.CutSuffix(slug, "/triplets.csv")
			if !ok || !ok2 {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			rows, err := csv.NewReader(rec.Body).ReadAll()
			if err != nil || rec.Code != http.StatusOK {
				t.Errorf("export: %d %v", rec.Code, err)
				return
			}
			closer, farther := -1, -1
			for i, h := range rows[0] {
				switch h {
				case "closer":
					closer = i
				case "farther":
					farther = i
				}
			}
			cw := csv.NewWriter(w)
			cw.Write(rows[0])
			for i, row := range rows[1:] {
				if (i+1)%10 == 0 {
					switch {
					case strings.HasPrefix(slug, "drop"):
						continue
					case strings.HasPrefix(slug, "dup"):
						cw.Write(row)
					case strings.HasPrefix(slug, "swap"):
						row[closer], row[farther] = row[farther], row[closer]
					}
				}
				cw.Write(row)
			}
			cw.Flush()
		})
	}
}

// The checker itself is checked: an export that lost, repeated or altered
// every 10th answer is caught with the exact counts, and the run fails.
func TestLoadCheckCatchesPlantedExportBugs(t *testing.T) {
	t.Parallel()
	a := newLoadApp(t, rewriteExport(t))
	for _, slug := range []string{"drop", "dup", "swap"} { //nolint:paralleltest // subtests share one app
		t.Run(slug, func(t *testing.T) {
			a.study(slug, 12)
			out, stderr, code := a.load(slug)
			stored := a.stored(slug)
			if stored < 10 {
				t.Fatalf("only %d answers stored: %+v %s", stored, out, stderr)
			}
			c := out.Check
			want := map[string][3]int{"drop": {stored / 10, 0, 0}, "dup": {0, stored / 10, 0}, "swap": {0, 0, stored / 10}}[slug]
			if got := [3]int{c.Lost, c.Duplicated, c.WrongCloser}; got != want {
				t.Fatalf("lost, duplicated, wrong closer = %v, want %v (%d stored)", got, want, stored)
			}
			if code != 1 || out.OK || c.OK || !strings.Contains(stderr, "exactly-once check failed") {
				t.Fatalf("exit %d, ok %v/%v, stderr %q", code, out.OK, c.OK, stderr)
			}
		})
	}
}

// flakyAnswers plants server trouble on POST /api/v1/answers, in turn per
// request: a 503 with Retry-After (nothing stored), a 500 after the answer
// was stored, a connection closed without a reply (nothing stored), and a
// normal reply.
func flakyAnswers(next http.Handler) http.Handler {
	var n atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/answers" {
			next.ServeHTTP(w, r)
			return
		}
		switch n.Add(1) % 4 {
		case 0:
			w.Header().Set("Retry-After", "0")
			http.Error(w, `{"error":"busy"}`, http.StatusServiceUnavailable)
		case 1:
			next.ServeHTTP(httptest.NewRecorder(), r)
			http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
		case 2:
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// A well-behaved client retries 503s, 500s and dropped connections until
// the answer is acknowledged; answers stored behind a 500 are acknowledged
// by the retry's 200 and counted once.
func TestLoadRetriesThroughServerTrouble(t *testing.T) {
	t.Parallel()
	a := newLoadApp(t, flakyAnswers)
	a.study("flaky", 12)
	out, stderr, code := a.load("flaky", "--answers", "40")
	if code != 0 || !out.OK {
		t.Fatalf("exit %d: %s %s", code, out.Error, stderr)
	}
	c := out.Check
	if out.Answers == 0 || c.Lost != 0 || c.Duplicated != 0 || c.WrongCloser != 0 || c.Rejected != 0 {
		t.Fatalf("answers %d, check %+v", out.Answers, *c)
	}
	if n := a.stored("flaky"); n != c.Acknowledged+c.UnacknowledgedStored {
		t.Fatalf("%d stored, %d acknowledged + %d unacknowledged but stored", n, c.Acknowledged, c.UnacknowledgedStored)
	}
	e := out.Endpoints["answer"].Errors
	if e["503"] == 0 || e["500"] == 0 || e["transport"] == 0 || out.ServerErrors != e["500"] {
		t.Fatalf("answer errors %v, 5xx other than 503: %d", e, out.ServerErrors)
	}
}

// stuckAnswers never acknowledges the answers to every third question:
// it stores them and replies 502 (stored), or replies 503 without storing
// them. They end the run unacknowledged and are reported apart.
func stuckAnswers(stored bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/api/v1/answers" {
				next.ServeHTTP(w, r)
				return
			}
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var a struct {
				QuestionID string `json:"question_id"`
			}
			_ = json.Unmarshal(body, &a) // not an answer: no question id, bucket 0
			h := fnv.New32a()
			h.Write([]byte(a.QuestionID))
			if h.Sum32()%3 != 0 {
				next.ServeHTTP(w, r)
				return
			}
			if stored {
				next.ServeHTTP(httptest.NewRecorder(), r)
				http.Error(w, "bad gateway", http.StatusBadGateway)
				return
			}
			w.Header().Set("Retry-After", "0")
			http.Error(w, "busy", http.StatusServiceUnavailable)
		})
	}
}

// Answers still without a definite reply when the run ends are neither
// lost nor acknowledged: they are counted apart, with whether the export
// has them.
func TestLoadReportsUnacknowledgedApart(t *testing.T) {
	t.Parallel()
	for _, stored := range []bool{true, false} { //nolint:paralleltest // subtests share one app
		t.Run(fmt.Sprintf("stored=%v", stored), func(t *testing.T) {
			a := newLoadApp(t, stuckAnswers(stored))
			a.study("stuck", 12)
			// Every annotator ends up stuck on an answer, so this run ends
			// by its duration.
			out, stderr, code := a.load("stuck", "--duration", "1500ms", "--answers", "0")
			if code != 0 || !out.OK {
				t.Fatalf("exit %d: %s %s", code, out.Error, stderr)
			}
			c := out.Check
			wantStored := 0
			if stored {
				wantStored = c.Unacknowledged
			}
			// Each annotator ends stuck on one answer at most.
			if c.Unacknowledged == 0 || c.Unacknowledged > 8 || c.UnacknowledgedStored != wantStored || c.Lost != 0 || c.Acknowledged != out.Answers {
				t.Fatalf("check %+v, %d answers", *c, out.Answers)
			}
			if n := a.stored("stuck"); n != c.Acknowledged+c.UnacknowledgedStored {
				t.Fatalf("%d stored, %d acknowledged + %d unacknowledged but stored", n, c.Acknowledged, c.UnacknowledgedStored)
			}
		})
	}
}

// Two replicas (two servers, each with its own store, on one database) of
// a landmark study: closer load sends every annotator's requests to both
// in turn; every acknowledged answer is stored once, each replica served
// requests, no comparison was handed out more often than repeats, and the
// design counts exactly the answers to its questions.
func TestLoadTwoReplicasLandmark(t *testing.T) {
	t.Parallel()
	a := newLoadApp(t, nil)
	ctx := context.Background()
	collect.RegisterDesigns(a.store)
	st, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: "lm", Title: "Load lm", QuestionsPerParticipant: 10,
		Status: study.StatusOpen, Design: study.DesignLandmarkK1, DesignConfig: study.DesignConfig{Seed: 2, Landmarks: 3, Repeats: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := a.store.AddItems(ctx, st.ID, demo.Items()[:12]); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	var served [2]atomic.Int64
	count := func(i int, h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			served[i].Add(1)
			h.ServeHTTP(w, r)
		})
	}
	other := collect.New(a.pool)
	collect.RegisterDesigns(other)
	srv := httptest.NewServer(count(1, web.New(other, a.accounts, web.Config{}, slog.New(slog.NewTextHandler(io.Discard, nil)))))
	t.Cleanup(srv.Close)
	first := httptest.NewServer(count(0, web.New(a.store, a.accounts, web.Config{}, slog.New(slog.NewTextHandler(io.Discard, nil)))))
	t.Cleanup(first.Close)
	args := []string{"load", "--base", first.URL + "," + srv.URL, "--study", "lm", "--concurrency", "8",
		"--duration", "1m", "--answers", "200", "--admin-token", a.token, "--json"}
	var o, e bytes.Buffer
	code := run(ctx, args, &o, &e)
	var out loadOutput
	if err := json.Unmarshal(o.Bytes(), &out); err != nil || code != 0 || !out.OK {
		t.Fatalf("exit %d (%v): %s %s", code, err, o.String(), e.String())
	}
	if c := out.Check; c.Lost != 0 || c.Duplicated != 0 || c.Acknowledged != out.Answers || c.ExportRows != a.stored("lm") {
		t.Fatalf("check %+v, %d answers", *c, out.Answers)
	}
	if served[0].Load() == 0 || served[1].Load() == 0 {
		t.Fatalf("requests per replica %d, %d: want both", served[0].Load(), served[1].Load())
	}
	var over, designAnswers int
	if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM questions WHERE study_id = $1 AND design = 'landmark-k1'
		GROUP BY anchor, least(left_idx, right_idx), greatest(left_idx, right_idx) HAVING count(*) > 3) x`, st.ID).Scan(&over); err != nil {
		t.Fatal(err)
	}
	if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM answers a JOIN questions q ON q.id = a.question_id
		WHERE a.study_id = $1 AND q.design = 'landmark-k1'`, st.ID).Scan(&designAnswers); err != nil {
		t.Fatal(err)
	}
	status, err := a.store.DesignStatusOf(ctx, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	if over != 0 || status.Recorded != int64(designAnswers) || status.Progress.Landmark.Answered != designAnswers || designAnswers == 0 {
		t.Fatalf("%d comparisons over repeats; %d answers to design questions, the design recorded %d (progress %+v)",
			over, designAnswers, status.Recorded, status.Progress.Landmark)
	}
}

// --events writes one CSV line per request: as many answer lines as
// answers acknowledged, each with the status and a latency the run's own
// percentiles agree with.
func TestLoadEventsFile(t *testing.T) {
	t.Parallel()
	a := newLoadApp(t, nil)
	a.study("plain", 12)
	path := filepath.Join(t.TempDir(), "events.csv")
	out, stderr, code := a.load("plain", "--events", path)
	if code != 0 || !out.OK {
		t.Fatalf("exit %d, ok %v: %s %s", code, out.OK, out.Error, stderr)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 || strings.Join(rows[0], ",") != "at_ms,endpoint,status,latency_ms" {
		t.Fatalf("header %v", rows[:min(1, len(rows))])
	}
	count := map[string]int{}
	var maxAnswerMS, lastAt float64
	for _, r := range rows[1:] {
		at, err1 := strconv.ParseFloat(r[0], 64)
		ms, err2 := strconv.ParseFloat(r[3], 64)
		if err1 != nil || err2 != nil || at < 0 || ms <= 0 {
			t.Fatalf("row %v", r)
		}
		lastAt = max(lastAt, at)
		if strings.HasPrefix(r[2], "2") {
			count[r[1]]++
			if r[1] == "answer" {
				maxAnswerMS = max(maxAnswerMS, ms)
			}
		}
	}
	if count["answer"] != out.Answers || count["participants"] != out.Participants {
		t.Fatalf("events: %v; the run: %d answers, %d participants", count, out.Answers, out.Participants)
	}
	if maxAnswerMS < out.Endpoints["answer"].P99MS || lastAt <= 0 {
		t.Fatalf("slowest answer in the events %.3f ms, the run's p99 %.3f ms", maxAnswerMS, out.Endpoints["answer"].P99MS)
	}
}
