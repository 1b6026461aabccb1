package web_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/dashboard"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/studyfile"
	"github.com/closer-lab/closer/internal/triplet"
	"github.com/closer-lab/closer/internal/web"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/sync/errgroup"
)

// newJobsApp is newApp with recompute jobs: a River client that enqueues
// and, when work, runs the recomputes in this process.
func newJobsApp(t testing.TB, work bool) (*app, *recompute.Jobs) {
	t.Helper()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	accounts := account.New(pool, account.PasswordCost(bcrypt.MinCost))
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	jobs, err := recompute.New(pool, store, recompute.Config{Work: work, ScanEvery: time.Hour}, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := jobs.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = jobs.Stop(context.Background()) })
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = web.New(store, accounts, web.Config{BaseURL: base, Jobs: jobs}, log)
	srv.Start()
	t.Cleanup(srv.Close)
	tt, _ := t.(*testing.T)
	return &app{t: tt, pool: pool, store: store, accounts: accounts, srv: srv}, jobs
}

// synthTriplets is a triplet CSV: n items in three Gaussian clusters in
// 2-D answered by a noisy oracle (5% wrong), m answers from p
// participants over the last hour, with response times.
func synthTriplets(n, m, p int, seed uint64) []byte {
	rng := triplet.NewRand(seed)
	x, _ := triplet.GaussianMixture(rng, n, 2, 3, 5)
	o := triplet.NewOracle(x, 0.05, seed+1)
	var b bytes.Buffer
	b.WriteString("anchor,closer,farther,participant,response_ms,answered_at\n")
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for i := range m {
		a, j, k := triplet.RandomQuestion(rng, n)
		t := o.Answer(a, j, k)
		at := start.Add(time.Duration(i) * time.Hour / time.Duration(m))
		fmt.Fprintf(&b, "%d,%d,%d,w%02d,%d,%s\n", t.Anchor, t.Closer, t.Farther, i%p, 400+rng.IntN(4000), at.Format(time.RFC3339Nano))
	}
	return b.Bytes()
}

// upload posts a multipart form with one file.
func (a *app) upload(c *http.Client, path string, fields map[string]string, file []byte, name string) response {
	a.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write(file)
	mw.Close()
	req, _ := http.NewRequest("POST", a.srv.URL+path, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return a.send(c, req)
}

// waitDone waits for the study's run number runs to finish and for River to
// mark its job completed (until then a new enqueue is a duplicate).
func waitDone(t *testing.T, store *collect.Store, jobs *recompute.Jobs, studyID int64, runs int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		rs, err := store.Runs(context.Background(), studyID)
		if err != nil {
			t.Fatal(err)
		}
		state, _, err := jobs.Pending(context.Background(), studyID)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) >= runs && rs[runs-1].Status != study.RunRunning && state == "" {
			if rs[runs-1].Status != study.RunDone {
				t.Fatalf("run %d: %s %s", runs, rs[runs-1].Status, rs[runs-1].Error)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d did not finish", runs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func readCSV(t *testing.T, body string) [][]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("%v in %.200s", err, body)
	}
	return recs
}

// TestDashboardFlow imports a triplet CSV through the form, recomputes it
// through River, and checks the dashboard, the status JSON, the exports'
// columns, the exclusion toggle and that a label-only study cannot open.
func TestDashboardFlow(t *testing.T) {
	t.Parallel()
	a, jobs := newJobsApp(t, true)
	admin := a.admin()
	const n, m, p = 18, 1500, 6
	if r := a.do(admin, "GET", "/admin/import", nil, nil); r.StatusCode != 200 || !strings.Contains(r.body, "From a triplet CSV") {
		t.Fatalf("import page: %d", r.StatusCode)
	}
	bad := a.upload(admin, "/admin/import/triplets", map[string]string{"slug": "bad", "title": "Bad"}, []byte("anchor,closer,farther\n1,2,2\n"), "t.csv")
	if bad.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(bad.body, "line 2: repeated item") {
		t.Fatalf("bad triplet file: %d", bad.StatusCode)
	}
	res := a.upload(admin, "/admin/import/triplets", map[string]string{"slug": "syn", "title": "Synthetic"}, synthTriplets(n, m, p, 7), "t.csv")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/admin/studies/syn/dashboard") {
		t.Fatalf("import: %d %s %s", res.StatusCode, res.Header.Get("Location"), res.body)
	}
	st, err := a.store.StudyBySlug(context.Background(), "syn")
	if err != nil {
		t.Fatal(err)
	}
	page := a.do(admin, "GET", "/admin/studies/syn/dashboard", nil, nil)
	if page.StatusCode != 200 || !strings.Contains(page.body, "Not recomputed yet") || !strings.Contains(page.body, "labels and no images") {
		t.Fatalf("dashboard before a run: %d %.300s", page.StatusCode, page.body)
	}
	// Exports need a run first.
	if r := a.do(admin, "GET", "/admin/studies/syn/embedding.csv", nil, nil); r.StatusCode != http.StatusNotFound {
		t.Fatalf("embedding.csv before a run: %d", r.StatusCode)
	}

	if r := a.do(admin, "POST", "/admin/studies/syn/dashboard/recompute", url.Values{}, nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("recompute: %d %s", r.StatusCode, r.body)
	}
	waitDone(t, a.store, jobs, st.ID, 1)

	page = a.do(admin, "GET", "/admin/studies/syn/dashboard", nil, nil)
	if page.StatusCode != 200 {
		t.Fatalf("dashboard: %d %s", page.StatusCode, page.body)
	}
	for _, want := range []string{`id="embedding"`, `id="k1pca"`, `id="k2pca"`, `id="learning"`, `id="answers"`, `id="response"`,
		`id="heatmap"`, `id="dendrogram"`, "<svg", "data:image/png;base64,", `class="list gallery"`, "Exclude", "w00", "embedding.csv"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("dashboard lacks %q", want)
		}
	}
	if got := strings.Count(page.body, "<circle"); got < 3*n {
		t.Errorf("%d points drawn, want at least %d (3 scatter plots of %d items)", got, 3*n, n)
	}
	r := a.do(admin, "GET", "/admin/studies/syn/dashboard/status", nil, nil)
	if r.StatusCode != 200 || !strings.Contains(r.body, `"done_run"`) || !strings.Contains(r.body, fmt.Sprintf(`"answers":%d`, m)) {
		t.Fatalf("status: %d %s", r.StatusCode, r.body)
	}

	// Exports and their columns.
	emb := readCSV(t, a.do(admin, "GET", "/admin/studies/syn/embedding.csv", nil, nil).body)
	if !slices.Equal(emb[0], []string{"item", "label", "x1", "x2"}) || len(emb) != n+1 || emb[1][0] != "0" {
		t.Fatalf("embedding.csv: %v (%d rows)", emb[0], len(emb))
	}
	pca := readCSV(t, a.do(admin, "GET", "/admin/studies/syn/kernel-pca.csv", nil, nil).body)
	if !slices.Equal(pca[0], web.KernelPCAColumns) || len(pca) != n+1 {
		t.Fatalf("kernel-pca.csv: %v (%d rows)", pca[0], len(pca))
	}
	ker := readCSV(t, a.do(admin, "GET", "/admin/studies/syn/kernel.csv", nil, nil).body)
	if len(ker) != n+1 || len(ker[0]) != n+2 || ker[0][2] != "k0" || ker[0][n+1] != fmt.Sprintf("k%d", n-1) {
		t.Fatalf("kernel.csv: header %v, %d rows", ker[0], len(ker))
	}
	if ker[1][3] != ker[2][2] { // symmetric: K[0][1] == K[1][0]
		t.Fatalf("kernel.csv is not symmetric: %s vs %s", ker[1][3], ker[2][2])
	}

	// Exclude the participant with most answers: kept, left out of the
	// next run and of the export unless asked.
	var victim struct {
		PublicID string
		Answers  int
	}
	if err := a.pool.QueryRow(context.Background(), `
		SELECT p.public_id, count(*) FROM answers a JOIN participants p ON p.id = a.participant_id
		WHERE a.study_id = $1 GROUP BY p.id ORDER BY count(*) DESC, p.id LIMIT 1`, st.ID).Scan(&victim.PublicID, &victim.Answers); err != nil {
		t.Fatal(err)
	}
	if r := a.do(admin, "POST", "/admin/studies/syn/participants/"+victim.PublicID+"/exclude", url.Values{"excluded": {"1"}}, nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("exclude: %d %s", r.StatusCode, r.body)
	}
	rows := readCSV(t, a.do(admin, "GET", "/admin/studies/syn/triplets.csv", nil, nil).body)
	all := readCSV(t, a.do(admin, "GET", "/admin/studies/syn/triplets.csv?include_excluded=1", nil, nil).body)
	if len(rows)-1 != m-victim.Answers || len(all)-1 != m {
		t.Fatalf("triplets.csv: %d rows without, %d with the excluded participant (want %d, %d)", len(rows)-1, len(all)-1, m-victim.Answers, m)
	}
	if r := a.do(admin, "POST", "/admin/studies/syn/dashboard/recompute", url.Values{}, nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("recompute: %d", r.StatusCode)
	}
	waitDone(t, a.store, jobs, st.ID, 2)
	runs, _ := a.store.Runs(context.Background(), st.ID)
	if runs[1].Answers != m-victim.Answers {
		t.Fatalf("second run used %d answers, want %d", runs[1].Answers, m-victim.Answers)
	}
	page = a.do(admin, "GET", "/admin/studies/syn/dashboard", nil, nil)
	if !strings.Contains(page.body, `class="excluded"`) || !strings.Contains(page.body, ">Include<") {
		t.Error("the excluded participant is not marked on the dashboard")
	}

	// Settings: saved, and refused with a reason.
	form := url.Values{"min_new_answers": {"50"}, "max_age_minutes": {"2"}, "method": {"ste"}, "dim": {"3"}, "clusters": {"4"}}
	if r := a.do(admin, "POST", "/admin/studies/syn/dashboard/settings", form, nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("settings: %d %s", r.StatusCode, r.body)
	}
	rs, _ := a.store.RecomputeSettings(context.Background(), st.ID)
	if rs != (study.RecomputeSettings{MinNewAnswers: 50, MaxAge: 2 * time.Minute, Method: "ste", Dim: 3, Clusters: 4, Trust: study.DefaultTrustSettings()}) { // a form without the trust fields keeps them
		t.Fatalf("settings stored: %+v", rs)
	}
	form.Set("method", "magic")
	if r := a.do(admin, "POST", "/admin/studies/syn/dashboard/settings", form, nil); r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, "unknown embedding method") {
		t.Fatalf("bad settings: %d", r.StatusCode)
	}

	// A label-only study cannot be opened.
	edit := url.Values{"title": {"Synthetic"}, "slug": {"syn"}, "questions_per_participant": {"10"}, "status": {"open"}, "design": {"random"}}
	if r := a.do(admin, "POST", "/admin/studies/syn", edit, nil); r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, "cannot be opened to annotators") {
		t.Fatalf("opening a label-only study: %d %s", r.StatusCode, r.body[strings.Index(r.body, "<main"):])
	}
}

// TestRecomputeCancelByHTTP queues a recompute in a web-only app (no
// worker) and cancels it from the dashboard.
func TestRecomputeCancelByHTTP(t *testing.T) {
	t.Parallel()
	a, jobs := newJobsApp(t, false)
	admin := a.admin()
	if r := a.upload(admin, "/admin/import/triplets", map[string]string{"slug": "syn", "title": "S"}, synthTriplets(8, 100, 2, 1), "t.csv"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("import: %d %s", r.StatusCode, r.body)
	}
	st, _ := a.store.StudyBySlug(context.Background(), "syn")
	a.do(admin, "POST", "/admin/studies/syn/dashboard/recompute", url.Values{}, nil)
	if r := a.do(admin, "POST", "/admin/studies/syn/dashboard/recompute", url.Values{}, nil); !strings.Contains(r.Header.Get("Location"), "msg=already") {
		t.Fatalf("second recompute: %s", r.Header.Get("Location"))
	}
	page := a.do(admin, "GET", "/admin/studies/syn/dashboard", nil, nil)
	if !strings.Contains(page.body, "A recompute is queued.") || !strings.Contains(page.body, "Cancel the recompute") {
		t.Fatal("the queued recompute is not shown")
	}
	if r := a.do(admin, "POST", "/admin/studies/syn/dashboard/cancel", url.Values{}, nil); !strings.Contains(r.Header.Get("Location"), "msg=cancelled") {
		t.Fatalf("cancel: %d %s", r.StatusCode, r.Header.Get("Location"))
	}
	if state, _, err := jobs.Pending(context.Background(), st.ID); err != nil || state != "" {
		t.Fatalf("after cancel: %q %v", state, err)
	}
}

// answerRow is an answer as the bundle round trip compares it.
type answerRow struct {
	Participant                          string // external id
	Anchor, Left, Right, Closer, Farther int
	Design                               string
	ResponseMS                           int
	Asked, Answered                      time.Time
	Excluded                             bool
}

func answerRows(t *testing.T, a *app, studyID int64) []answerRow {
	t.Helper()
	rows, err := a.pool.Query(context.Background(), `
		SELECT coalesce(p.external_id, ''), a.anchor, q.left_idx, q.right_idx, a.closer, a.farther, q.design,
			coalesce(a.response_ms, -1), q.issued_at, a.answered_at, p.excluded_at IS NOT NULL
		FROM answers a JOIN questions q ON q.id = a.question_id JOIN participants p ON p.id = a.participant_id
		WHERE a.study_id = $1 ORDER BY a.answered_at, p.external_id`, studyID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []answerRow
	for rows.Next() {
		var r answerRow
		if err := rows.Scan(&r.Participant, &r.Anchor, &r.Left, &r.Right, &r.Closer, &r.Farther, &r.Design, &r.ResponseMS, &r.Asked, &r.Answered, &r.Excluded); err != nil {
			t.Fatal(err)
		}
		r.Asked, r.Answered = r.Asked.UTC(), r.Answered.UTC()
		out = append(out, r)
	}
	return out
}

type itemRow struct {
	Index                            int
	Label, File, ContentType, SHA256 string
	Width, Height                    int
	Data                             []byte
}

func itemRows(t *testing.T, a *app, studyID int64) []itemRow {
	t.Helper()
	rows, err := a.pool.Query(context.Background(), `
		SELECT idx, label, file_name, content_type, sha256, width, height, data FROM items WHERE study_id = $1 ORDER BY idx`, studyID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []itemRow
	for rows.Next() {
		var r itemRow
		if err := rows.Scan(&r.Index, &r.Label, &r.File, &r.ContentType, &r.SHA256, &r.Width, &r.Height, &r.Data); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

type voteRow struct{ Anchor, J, K, JCloser, KCloser int }

func voteRows(t *testing.T, a *app, studyID int64) []voteRow {
	t.Helper()
	rows, err := a.pool.Query(context.Background(), `
		SELECT anchor, j, k, j_closer, k_closer FROM votes WHERE study_id = $1 ORDER BY anchor, j, k`, studyID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []voteRow
	for rows.Next() {
		var r voteRow
		if err := rows.Scan(&r.Anchor, &r.J, &r.K, &r.JCloser, &r.KCloser); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestBundleRoundTrip exports a study with images, answers (with an
// excluded participant) and its own settings as a bundle, imports it as a
// new study, and compares answers, items and settings.
func TestBundleRoundTrip(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	admin := a.admin()
	ctx := context.Background()
	st := a.study("orig", 8, 6, study.StatusOpen)
	for p := range 3 {
		j := a.join("orig", fmt.Sprintf(`{"external_id": "x-%d"}`, p))
		for i := range 5 {
			var nx nextResp
			a.api("GET", "/api/v1/studies/orig/next", j.Token, "", &nx)
			ms := ""
			if i != 2 {
				ms = fmt.Sprintf(`, "response_ms": %d`, 700+100*i)
			}
			body := fmt.Sprintf(`{"question_id": %q, "closer": %d%s}`, nx.QuestionID, nx.Left.Index, ms)
			if res := a.api("POST", "/api/v1/answers", j.Token, body, nil); res.StatusCode != http.StatusCreated {
				t.Fatalf("answer: %d %s", res.StatusCode, res.body)
			}
		}
		if p == 1 {
			if err := a.store.SetExcluded(ctx, st.ID, j.ParticipantID, true); err != nil {
				t.Fatal(err)
			}
		}
	}
	set := study.RecomputeSettings{MinNewAnswers: 77, MaxAge: 3 * time.Minute, Method: "gnmds", Dim: 3, Clusters: 2}
	if err := a.store.SetRecomputeSettings(ctx, st.ID, set); err != nil {
		t.Fatal(err)
	}
	zipRes := a.do(admin, "GET", "/admin/studies/orig/bundle.zip", nil, nil)
	if zipRes.StatusCode != 200 || zipRes.Header.Get("Content-Type") != "application/zip" {
		t.Fatalf("bundle: %d %s", zipRes.StatusCode, zipRes.Header.Get("Content-Type"))
	}
	res := a.upload(admin, "/admin/import/bundle", map[string]string{"slug": "copy"}, []byte(zipRes.body), "bundle.zip")
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("import: %d %s", res.StatusCode, res.body)
	}
	cp, err := a.store.StudyBySlug(ctx, "copy")
	if err != nil {
		t.Fatal(err)
	}
	if cp.Title != st.Title || cp.Instructions != st.Instructions || cp.Debrief != st.Debrief ||
		cp.QuestionsPerParticipant != st.QuestionsPerParticipant || cp.Design != st.Design || cp.Status != study.StatusPaused {
		t.Fatalf("study settings differ: %+v vs %+v", cp, st)
	}
	if got, _ := a.store.RecomputeSettings(ctx, cp.ID); got != set {
		t.Fatalf("dashboard settings: %+v, want %+v", got, set)
	}
	if a1, a2 := answerRows(t, a, st.ID), answerRows(t, a, cp.ID); len(a1) != 15 || !reflect.DeepEqual(a1, a2) {
		t.Fatalf("answers differ (%d vs %d):\n%v\n%v", len(a1), len(a2), a1, a2)
	}
	if i1, i2 := itemRows(t, a, st.ID), itemRows(t, a, cp.ID); len(i1) != 8 || !reflect.DeepEqual(i1, i2) {
		t.Fatal("items differ")
	}
	// The votes were rebuilt from the answers: the copy's vote table holds
	// the same rows as the original's, and both equal the tally of the
	// answers counted here (j < k, one vote for whichever was closer).
	tally := map[voteRow]bool{}
	counts := map[[3]int][2]int{}
	for _, r := range answerRows(t, a, st.ID) {
		key := [3]int{r.Anchor, min(r.Closer, r.Farther), max(r.Closer, r.Farther)}
		c := counts[key]
		if r.Closer == key[1] {
			c[0]++
		} else {
			c[1]++
		}
		counts[key] = c
	}
	for k, c := range counts {
		tally[voteRow{k[0], k[1], k[2], c[0], c[1]}] = true
	}
	v1, v2 := voteRows(t, a, st.ID), voteRows(t, a, cp.ID)
	if len(v1) == 0 || !reflect.DeepEqual(v1, v2) {
		t.Fatalf("votes differ:\n%v\n%v", v1, v2)
	}
	if len(v1) != len(tally) {
		t.Fatalf("%d vote rows, the answers tally to %d", len(v1), len(tally))
	}
	for _, v := range v1 {
		if !tally[v] {
			t.Fatalf("vote row %+v is not the tally of the answers %v", v, counts)
		}
	}
	// A bundle with the same slug again is refused with a reason, as is garbage.
	if r := a.upload(admin, "/admin/import/bundle", map[string]string{"slug": "copy"}, []byte(zipRes.body), "b.zip"); r.StatusCode != http.StatusConflict || !strings.Contains(r.body, "taken") {
		t.Fatalf("duplicate slug: %d", r.StatusCode)
	}
	if r := a.upload(admin, "/admin/import/bundle", nil, []byte("not a zip"), "b.zip"); r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, "not a valid study bundle") {
		t.Fatalf("garbage: %d", r.StatusCode)
	}
}

// TestImportStrangeFruit imports the real crowd file when it is present.
func TestImportStrangeFruit(t *testing.T) {
	t.Parallel()
	data := strangeFruit(t)
	a := newApp(t)
	st, rep, err := studyfile.ImportTriplets(context.Background(), a.store, studyfile.TripletsInput{Slug: "fruit", Title: "Strange fruit", CSV: bytes.NewReader(data)})
	if err != nil {
		t.Fatal(err)
	}
	// Counts from /work/shared/data/README.md: 30 items, 20,086 answers, 416 participants.
	if rep.Items != 30 || rep.Answers != 20086 || rep.Participants != 416 {
		t.Fatalf("imported %+v", rep)
	}
	stats, _ := a.store.StudyStats(context.Background(), st.ID)
	if stats.Answers != 20086 || stats.Contradictions == 0 {
		t.Fatalf("stats %+v", stats)
	}
	counts, err := a.store.DashboardCounts(context.Background(), st.ID, 5)
	if err != nil {
		t.Fatal(err)
	}
	ds, f := dashboard.NewTally(counts, 5).Figures(10, 10)
	// The dashboard's one-pass figures agree with the study page's StudyStats.
	if ds.Answers != stats.Answers || ds.Participants != stats.Participants || ds.Comparisons != stats.Comparisons ||
		ds.Contradictions != stats.Contradictions || ds.Completed != stats.Completed {
		t.Fatalf("dashboard stats %+v, study stats %+v", ds, stats)
	}
	// The median from the 10 ms bins is PostgreSQL's exact median to 10 ms.
	var exact float64
	if err := a.pool.QueryRow(context.Background(), `SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY response_ms)
		FROM answers WHERE study_id = $1`, st.ID).Scan(&exact); err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.MedianResponseMS-exact) > 10 {
		t.Fatalf("median %v ms, exact %v ms", f.MedianResponseMS, exact)
	}
	if n := sum(f.AnswersOverTime); n != 20086 {
		t.Fatalf("answers over time add up to %d", n)
	}
	if n := sum(f.ResponseHist); n != 20085 { // one negative time is unknown
		t.Fatalf("response-time histogram adds up to %d", n)
	}
	if math.IsNaN(f.MedianResponseMS) || f.MedianResponseMS < 500 || len(f.Contradicted) != 5 {
		t.Fatalf("figures: median %v, %d contradicted", f.MedianResponseMS, len(f.Contradicted))
	}
}

// strangeFruit reads the real crowd file (CLOSER_STRANGE_FRUIT, or its place
// next to the repository), skipping the test without it.
func strangeFruit(t testing.TB) []byte {
	t.Helper()
	path := os.Getenv("CLOSER_STRANGE_FRUIT")
	if path == "" {
		path = "../../../shared/data/strange-fruit-triplets.csv"
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no strange-fruit file (%v): set CLOSER_STRANGE_FRUIT", err)
	}
	return data
}

// TestBasisStudy runs a basis-design study part way (answers from the
// disks' true hue and size), recomputes it, and checks that the run stored
// the design's own coordinates and d̂, that the dashboard shows them with
// the design's progress, and that a bundle keeps the design's settings.
func TestBasisStudy(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	collect.RegisterDesigns(a.store)
	admin := a.admin()
	ctx := context.Background()
	st, err := a.store.CreateStudy(ctx, study.StudyInput{Slug: "basis", Title: "Basis", QuestionsPerParticipant: 25,
		Status: study.StatusOpen, Design: study.DesignBasis, DesignConfig: study.DesignConfig{Seed: 2, Repeats: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.store.AddItems(ctx, st.ID, demo.Items()); err != nil {
		t.Fatal(err)
	}
	coords := demo.Coordinates()
	dist := func(i, j int) float64 {
		return math.Hypot((coords[i][0]-coords[j][0])/270, (coords[i][1]-coords[j][1])/54)
	}
	// 800 participants of one answer each, eight at a time: one after the
	// other they were a chain of 2,400 round trips that took 30–130 s
	// under -race beside the package's other tests.
	var g errgroup.Group
	g.SetLimit(8)
	for range 800 {
		g.Go(func() error {
			p, _, err := a.store.CreateParticipant(ctx, st.ID, "", nil)
			if err != nil {
				return err
			}
			pr, err := a.store.Next(ctx, p.ID)
			if err != nil {
				return err
			}
			q := pr.Question
			closer := q.Options[0].Index
			if dist(q.Anchor.Index, q.Options[1].Index) < dist(q.Anchor.Index, q.Options[0].Index) {
				closer = q.Options[1].Index
			}
			_, err = a.store.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Closer: closer})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := recompute.Run(ctx, a.store, st.ID, 0); err != nil {
		t.Fatal(err)
	}
	_, blob, err := a.store.LatestResult(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := recompute.Decode(blob)
	if res.BasisDHat == nil || *res.BasisDHat < 1 || len(res.BasisCoords) != 40 || len(res.BasisCoords[0]) != *res.BasisDHat {
		t.Fatalf("basis result: d̂ %v, %d coordinate rows", deref(res.BasisDHat), len(res.BasisCoords))
	}
	page := a.do(admin, "GET", "/admin/studies/basis/dashboard", nil, nil)
	if !strings.Contains(page.body, `id="basis"`) || !strings.Contains(page.body, "d̂ =") {
		t.Fatal("the dashboard does not show the basis design")
	}
	zipRes := a.do(admin, "GET", "/admin/studies/basis/bundle.zip", nil, nil)
	if r := a.upload(admin, "/admin/import/bundle", map[string]string{"slug": "basis-copy"}, []byte(zipRes.body), "b.zip"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("import: %d %s", r.StatusCode, r.body)
	}
	var same bool
	if err := a.pool.QueryRow(ctx, `SELECT a.design_config = b.design_config AND a.design = b.design
		FROM studies a, studies b WHERE a.slug = 'basis' AND b.slug = 'basis-copy'`).Scan(&same); err != nil || !same {
		t.Fatalf("design settings differ after the round trip (%v)", err)
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func sum(v []int) int {
	t := 0
	for _, x := range v {
		t += x
	}
	return t
}

// TestDashboardEmptyStudy: a study without items or answers has a
// dashboard, and its recompute fails with a reason shown there.
func TestDashboardEmptyStudy(t *testing.T) {
	t.Parallel()
	a, _ := newJobsApp(t, true)
	admin := a.admin()
	st := a.study("empty", 0, 5, study.StatusDraft)
	page := a.do(admin, "GET", "/admin/studies/empty/dashboard", nil, nil)
	if page.StatusCode != 200 || !strings.Contains(page.body, "no data yet") || !strings.Contains(page.body, "Not recomputed yet") {
		t.Fatalf("empty dashboard: %d", page.StatusCode)
	}
	if r := a.do(admin, "POST", "/admin/studies/empty/dashboard/recompute", url.Values{}, nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("recompute: %d", r.StatusCode)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		r, err := a.store.LatestRun(context.Background(), st.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r != nil && r.Status == study.RunFailed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failed run: %+v", r)
		}
		time.Sleep(50 * time.Millisecond)
	}
	page = a.do(admin, "GET", "/admin/studies/empty/dashboard", nil, nil)
	if !strings.Contains(page.body, "The last recompute failed: recompute: 0 items, need at least 3") {
		t.Fatalf("the failure is not shown: %s", page.body[strings.Index(page.body, `id="recompute"`):][:300])
	}
	if r := a.do(admin, "GET", "/admin/studies/empty/embedding.csv", nil, nil); r.StatusCode != http.StatusNotFound {
		t.Fatalf("embedding.csv without results: %d", r.StatusCode)
	}
}
