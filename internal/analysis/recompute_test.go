package analysis

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/closer-lab/closer/internal/kernel"
	"github.com/closer-lab/closer/internal/triplet"
)

func TestRecomputeFindsClusters(t *testing.T) {
	t.Parallel()
	// 90 points in three well-separated clusters and 30,000 noisy random
	// answers (about 9% of all questions, the regime of the paper's section
	// 2.2 figures; far fewer random answers leave k1 too sparse to cluster).
	rng := triplet.NewRand(1)
	x, labels := triplet.GaussianMixture(rng, 90, 5, 3, 12)
	o := triplet.NewOracle(x, 0.1, 2)
	ts := triplet.RandomTriplets(rng, o, 30000)
	stages := 0
	res, err := Recompute(context.Background(), Input{N: 90, Triplets: ts}, Settings{Seed: 3}, func(int) { stages++ })
	if err != nil {
		t.Fatal(err)
	}
	if stages != coreStages { // no trust parts in the settings
		t.Errorf("progress called %d times, want %d", stages, coreStages)
	}
	if res.K != 3 {
		t.Errorf("best silhouette picked %d clusters, want 3", res.K)
	}
	if p := kernel.Purity(res.Clusters, labels); p < 0.95 {
		t.Errorf("purity %.3f of k1 kernel k-means on well-separated clusters", p)
	}
	// ~10% held out (binomial around 3,000, sd 52).
	if res.Heldout < 2700 || res.Heldout > 3300 || res.Train+res.Heldout != 30000 {
		t.Errorf("held out %d of %d", res.Heldout, res.Answers)
	}
	// With 10% label noise the best possible error is about 0.1.
	if res.HeldoutError > 0.2 || res.TrainError > 0.2 {
		t.Errorf("errors train %.3f held-out %.3f", res.TrainError, res.HeldoutError)
	}
	if len(res.Dendrogram) != 89 || res.Dendrogram[88].Size != 90 {
		t.Errorf("dendrogram with %d merges", len(res.Dendrogram))
	}
	// Neighbours share the cluster (the clusters are far apart): all of
	// them in the embedding, nearly all by the sparse, noisy kernel (5 of
	// 450 cross over with this seed).
	crossK, crossE := 0, 0
	for i, nb := range res.NeighboursEmbedding {
		if len(nb) != 5 || len(res.NeighboursKernel[i]) != 5 {
			t.Fatalf("item %d: neighbours %v / %v", i, nb, res.NeighboursKernel[i])
		}
		for r := range 5 {
			if labels[nb[r]] != labels[i] {
				crossE++
			}
			if labels[res.NeighboursKernel[i][r]] != labels[i] {
				crossK++
			}
		}
	}
	if crossE > 0 || crossK > 450/50 {
		t.Errorf("neighbours from another cluster: %d by embedding, %d by kernel (of 450)", crossE, crossK)
	}
	if r, c := res.Heatmap.Dims(); r != 90 || c != 90 {
		t.Errorf("heat map %d×%d", r, c)
	}
	// Cluster order: the diagonal blocks are more similar than off-diagonal.
	in, out := 0.0, 0.0
	for a := range 90 {
		for b := range 90 {
			if res.Clusters[res.HeatmapOrder[a]] == res.Clusters[res.HeatmapOrder[b]] {
				in += res.Heatmap.At(a, b)
			} else {
				out += res.Heatmap.At(a, b)
			}
		}
	}
	if in <= out {
		t.Errorf("heat map: within-cluster sum %.2f not above between %.2f", in, out)
	}
}

func TestHoldoutStableAsAnswersGrow(t *testing.T) {
	t.Parallel()
	ids := make([]string, 2000)
	ts := make([]triplet.Triplet, 2000)
	for i := range ids {
		ids[i] = fmt.Sprintf("q%d", i)
		ts[i] = triplet.Triplet{Anchor: i, Closer: i + 1, Farther: i + 2}
	}
	s := Settings{Seed: 1}.withDefaults()
	_, testSmall, _ := holdout(Input{Triplets: ts[:1000], IDs: ids[:1000]}, s)
	_, testBig, _ := holdout(Input{Triplets: ts, IDs: ids}, s)
	// The first 1,000 answers' held-out members are the same in both runs.
	inSmall := map[int]bool{}
	for _, tr := range testSmall {
		inSmall[tr.Anchor] = true
	}
	inBigPrefix := 0
	for _, tr := range testBig {
		if tr.Anchor < 1000 {
			inBigPrefix++
			if !inSmall[tr.Anchor] {
				t.Fatalf("answer %d held out only once the set grew", tr.Anchor)
			}
		}
	}
	if inBigPrefix != len(testSmall) {
		t.Errorf("held-out prefix %d, first run %d", inBigPrefix, len(testSmall))
	}
	if f := float64(len(testBig)) / 2000; math.Abs(f-0.1) > 0.03 {
		t.Errorf("held out %.3f, want about 0.1", f)
	}
	if _, other, _ := holdout(Input{Triplets: ts, IDs: ids}, Settings{Seed: 2}.withDefaults()); len(other) == len(testBig) && other[0] == testBig[0] {
		t.Error("another seed holds out the same answers")
	}
}

func TestRecomputeStrangeFruit(t *testing.T) {
	t.Parallel()
	f, err := os.Open("../../../shared/data/strange-fruit-triplets.csv")
	if err != nil {
		t.Skipf("shared data not beside the checkout: %v", err)
	}
	defer f.Close()
	s, err := triplet.ReadCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Recompute(context.Background(), Input{N: s.N(), Triplets: s.Triplets}, Settings{Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The crowd disagrees with itself on about 15-20% of questions, so a 2-D
	// t-STE cannot go far below that; far above it would mean a broken fit.
	if res.HeldoutError > 0.3 || res.HeldoutError < 0.05 {
		t.Errorf("held-out error %.3f", res.HeldoutError)
	}
	if res.K < 2 || res.K > 8 {
		t.Errorf("%d clusters", res.K)
	}
	t.Logf("strange fruit: train %.3f held-out %.3f, %d clusters (silhouette %.3f), timings %v",
		res.TrainError, res.HeldoutError, res.K, res.Silhouette, res.Timings)
}

// BenchmarkRecompute1000x100k is the target: 1,000 items and
// 100,000 answers within 30 s.
func BenchmarkRecompute1000x100k(b *testing.B) {
	n, m := 1000, 100000
	if testing.Short() {
		// make bench-smoke (-short -benchtime 1x): the same code on 200
		// items and 10,000 answers; one run at full size took ~28 s.
		n, m = 200, 10000
	}
	rng := triplet.NewRand(1)
	x, _ := triplet.GaussianMixture(rng, n, 5, 4, 6)
	ts := triplet.RandomTriplets(rng, triplet.NewOracle(x, 0.1, 2), m)
	b.ResetTimer()
	for b.Loop() {
		res, err := Recompute(context.Background(), Input{N: n, Triplets: ts}, Settings{Seed: 1}, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, tm := range res.Timings {
			b.ReportMetric(tm.Duration.Seconds(), tm.Stage+"-s")
		}
	}
}
