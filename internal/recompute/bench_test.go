package recompute_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/studyfile"
)

// BenchmarkRunLarge is one whole recompute run of a study of 1,000 items and
// 100,000 answers (1,000 participants) in PostgreSQL: loading the answers,
// analysis.Recompute, the participants' quality and storing the result. The
// first run starts cold, later ones warm-start from the previous embedding.
//
//	go test ./internal/recompute -run '^$' -bench RunLarge -benchtime 3x
func BenchmarkRunLarge(b *testing.B) {
	pool, _ := pgtest.NewDB(b)
	store := collect.New(pool)
	ctx := context.Background()
	items, answers := 1000, 100000
	if testing.Short() {
		// make bench-smoke (-short -benchtime 1x): the same path on a
		// smaller study; one run on the large one takes ~15 s.
		items, answers = 200, 10000
	}
	st, _, err := studyfile.ImportTriplets(ctx, store, studyfile.TripletsInput{Slug: "large", Title: "Large", CSV: bytes.NewReader(synthCSV(b, items, answers, 1000, 5))})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := recompute.Run(ctx, store, st.ID, 0); err != nil {
			b.Fatal(err)
		}
	}
	runs, err := store.Runs(ctx, st.ID)
	if err != nil {
		b.Fatal(err)
	}
	_, blob, _ := store.LatestResult(ctx, st.ID)
	res, _ := recompute.Decode(blob)
	for i, r := range runs {
		b.Logf("run %d: %v (%s)", i+1, r.Duration.Round(time.Millisecond), r.Settings)
	}
	for _, t := range res.Timings {
		b.Logf("last run, %s: %.0f ms", t.Stage, t.MS)
	}
	b.Logf("stored result: %d KiB; last embedding: %d iterations, training error %.3f, held-out error %.3f on %d answers",
		len(blob)/1024, res.Iterations, *res.TrainError, *res.HeldoutError, res.Heldout)
}
