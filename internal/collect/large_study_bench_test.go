package collect_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/purge"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/store"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/studyfile"
	"github.com/closer-lab/closer/internal/triplet"
	"github.com/closer-lab/closer/internal/web"
	"golang.org/x/crypto/bcrypt"
)

var (
	largeTriplets      = flag.Int("large-triplets", 2_000_000, "triplets BenchmarkLargeStudy imports")
	largeDeleteTimeout = flag.Duration("large-delete-timeout", 10*time.Minute, "how long BenchmarkLargeStudy lets the purge of the large study run")
	largeBatchRows     = flag.Int("large-batch-rows", purge.DefaultBatchRows, "rows per batch of BenchmarkLargeStudy's purge")
)

// BenchmarkLargeStudy measures what a large imported study does to the
// rest of the store (issue 11): it imports -large-triplets triplets (1,000
// items, 2,000 participants) through ImportTriplets, runs ANALYZE (as
// autovacuum would shortly after), then times
//
//   - next/other-study: Next for participants of a small open study (the
//     40 demo items) sharing the database;
//   - next/same-study: Next for new participants of the large study itself
//     (its items are given placeholder images and the study opened with
//     SQL, since an imported study cannot be opened).
//
// Only Next is timed; each question is answered outside the timer, and a
// new participant starts every 100 questions. Last, an admin deletes the
// large study through the app (the POST's time to its 303) and the purge
// job's work deletes its rows, once (times in the log, hence -v;
// -large-delete-timeout bounds the purge, -large-batch-rows sets its batch
// size). Figures: docs/benchmarks.md, "Large-study query plans".
//
//	go test ./internal/collect -run '^$' -bench LargeStudy -benchtime 200x -large-triplets 2000000 -v
func BenchmarkLargeStudy(b *testing.B) {
	ctx := context.Background()
	pool, _ := pgtest.NewDB(b)
	s := collect.New(pool)
	n := *largeTriplets
	if testing.Short() {
		// make bench-smoke (-short -benchtime 1x): the whole path on a
		// small study; 2,000,000 triplets take minutes to import.
		n = min(n, 20_000)
	}
	data := largeTripletCSV(1000, n, 2000, 7)
	t0 := time.Now()
	big, rep, err := studyfile.ImportTriplets(ctx, s, studyfile.TripletsInput{Slug: "large", Title: "Large", CSV: bytes.NewReader(data)})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("imported %d triplets (%d items, %d participants, %.0f MB of CSV) in %v",
		rep.Answers, rep.Items, rep.Participants, float64(len(data))/1e6, time.Since(t0).Round(time.Millisecond))
	if _, err := pool.Exec(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	// Placeholder images so the imported study can be opened (the bytes are
	// never decoded here; sha256 must be unique within the study).
	png := demo.Items()[0].Data
	if _, err := pool.Exec(ctx, `
		UPDATE items SET data = $2, content_type = 'image/png', sha256 = 'bench-' || idx, width = 1, height = 1
		WHERE study_id = $1`, big.ID, png); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE studies SET status = 'open', questions_per_participant = 100 WHERE id = $1`, big.ID); err != nil {
		b.Fatal(err)
	}
	small, err := s.CreateStudy(ctx, study.StudyInput{Slug: "small", Title: "Small", QuestionsPerParticipant: 100, Status: study.StatusOpen})
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := s.AddItems(ctx, small.ID, demo.Items()); err != nil {
		b.Fatal(err)
	}

	next := func(b *testing.B, studyID int64) {
		var p study.Participant
		var err error
		for i := 0; i < b.N; i++ {
			if i%100 == 0 {
				b.StopTimer()
				if p, _, err = s.CreateParticipant(ctx, studyID, "", nil); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			pr, err := s.Next(ctx, p.ID)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			q := pr.Question
			if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: q.ID, Closer: q.Options[0].Index}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
	b.Run("next/other-study", func(b *testing.B) { next(b, small.ID) })
	b.Run("next/same-study", func(b *testing.B) { next(b, big.ID) })
	// Deleting the study destroys the fixture, so it runs once, after the
	// subbenchmarks, and is reported in the log: the delete request through
	// the real router (an admin's POST until its 303), then the purge the
	// job runs, with its longest batch.
	post := deleteThroughApp(b, s, big.Slug)
	b.Logf("POST /admin/studies/%s/delete answered 303 in %v", big.Slug, post.Round(10*time.Microsecond))
	dctx, cancel := context.WithTimeout(ctx, *largeDeleteTimeout)
	defer cancel()
	pr, err := purge.Study(dctx, s.Store, big.ID, *largeBatchRows)
	b.Logf("purge of the large study: %v in %d batches of at most %d rows; longest batch %v (%s) (err: %v)",
		pr.Duration.Round(10*time.Millisecond), pr.Batches, *largeBatchRows, pr.Longest.Round(100*time.Microsecond),
		pr.LongestTable, err)
	if err != nil {
		b.Fatal(err)
	}
	for _, table := range append(store.PurgeTables(), "studies") {
		t := pr.Tables[table]
		b.Logf("  %-18s %8d rows %4d batches %9v, longest %v", table, t.Rows, t.Batches,
			t.Time.Round(10*time.Millisecond), t.Longest.Round(100*time.Microsecond))
	}
}

// deleteThroughApp deletes the study with slug as an admin would, through
// the app's router with a River client that enqueues (no worker runs the
// purge), and returns the time from sending the POST to its 303.
func deleteThroughApp(b *testing.B, s *collect.Store, slug string) time.Duration {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	jobs, err := recompute.New(collect.PoolOf(s), s, recompute.Config{}, log)
	if err != nil {
		b.Fatal(err)
	}
	accounts := account.New(collect.PoolOf(s), account.PasswordCost(bcrypt.MinCost))
	srv := httptest.NewServer(web.New(s, accounts, web.Config{Jobs: jobs, Purges: purge.NewEnqueuer(jobs)}, log))
	defer srv.Close()
	if _, err := accounts.CreateAdmin(ctx, "bench@example.org", "bench-password"); err != nil {
		b.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.PostForm(srv.URL+"/admin/login", url.Values{"email": {"bench@example.org"}, "password": {"bench-password"}})
	if err != nil || res.StatusCode != http.StatusSeeOther {
		b.Fatalf("login: %v %v", res, err)
	}
	res.Body.Close()
	start := time.Now()
	res, err = c.PostForm(srv.URL+"/admin/studies/"+slug+"/delete", url.Values{"confirm": {"yes"}})
	took := time.Since(start)
	if err != nil || res.StatusCode != http.StatusSeeOther {
		b.Fatalf("delete: %v %v", res, err)
	}
	res.Body.Close()
	return took
}

// largeTripletCSV is a triplet CSV of m random answers (random closer) on
// n items from p participants, one second apart, with response times.
func largeTripletCSV(n, m, p int, seed uint64) []byte {
	rng := triplet.NewRand(seed)
	var b bytes.Buffer
	b.Grow(m * 48)
	b.WriteString("anchor,closer,farther,participant,response_ms,answered_at\n")
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range m {
		a, j, k := triplet.RandomQuestion(rng, n)
		if rng.IntN(2) == 1 {
			j, k = k, j
		}
		fmt.Fprintf(&b, "%d,%d,%d,w%04d,%d,%s\n", a, j, k, i%p, 400+rng.IntN(4000),
			start.Add(time.Duration(i)*time.Second).Format(time.RFC3339))
	}
	return b.Bytes()
}
