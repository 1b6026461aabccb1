package analysis

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/kernel"
	"github.com/closer-lab/closer/internal/triplet"
)

// Settings are the choices a study makes for its recompute runs.
type Settings struct {
	Method embed.Method // default t-STE
	Dim    int          // embedding dimensions, default 2
	// Clusters is the number of kernel k-means clusters; 0 picks the best
	// silhouette for 2..8.
	Clusters int
	// HoldoutFrac is the share of answers held out of the embedding to
	// measure its error on unseen answers (default 0.1).
	HoldoutFrac float64
	Seed        uint64
	MaxIter     int // embedding iterations (0: the method's default)
	Neighbours  int // nearest neighbours kept per item (default 5)
	// HeatmapSide caps the side of the stored kernel heat map: larger
	// kernels are averaged over blocks of items (in cluster order).
	HeatmapSide int // default 120
	// Trust bounds the dimension choice, uncertainty and projection
	// computed after the embedding (all off when zero).
	Trust TrustSettings
}

func (s Settings) withDefaults() Settings {
	if s.Method == "" {
		s.Method = embed.DefaultMethod
	}
	if s.Dim <= 0 {
		s.Dim = 2
	}
	if s.HoldoutFrac <= 0 || s.HoldoutFrac >= 1 {
		s.HoldoutFrac = 0.1
	}
	if s.Neighbours <= 0 {
		s.Neighbours = 5
	}
	if s.HeatmapSide <= 0 {
		s.HeatmapSide = 120
	}
	return s
}

// Input is what one recompute run reads: n items and the answers to use
// (already without excluded participants).
type Input struct {
	N        int
	Triplets []triplet.Triplet
	// IDs are stable answer ids (one per triplet, e.g. the question id); an
	// answer is held out when its id hashes into the held-out share, so the
	// held-out set stays the same as answers accumulate.
	IDs []string
	// Prev is the previous run's embedding (n × Dim), tried as a warm start
	// beside the default start, or nil.
	Prev *mat.Dense
	// Groups, when set, names the participant of each triplet (any ints):
	// the bootstrap then resamples participants, not answers.
	Groups []int
}

// Result is everything one run computes for the dashboard.
type Result struct {
	Settings Settings
	Answers  int // triplets used
	Train    int // of which trained the embedding
	Heldout  int // of which held out

	Embedding    *mat.Dense // n × Dim, in the normal form of embed.Normalize
	TrainError   float64    // triplet error on the training answers
	HeldoutError float64    // triplet error on the held-out answers (NaN if none)
	Iterations   int

	K1PCA, K2PCA *mat.Dense // n × 2 kernel PCA scores (fixed kernels)
	Clusters     []int      // kernel k-means on k1, per item
	K            int        // number of clusters
	Silhouette   float64
	Dendrogram   []kernel.Merge // complete linkage on k1
	// Heatmap is the k1 kernel matrix with items in cluster order,
	// block-averaged to at most HeatmapSide² cells; HeatmapOrder lists the
	// items in that order.
	Heatmap      *mat.Dense
	HeatmapOrder []int

	NeighboursKernel    [][]int // per item, by k1 distance
	NeighboursEmbedding [][]int // per item, in the embedding

	// Trust is the dimension choice, uncertainty and projection (nil when
	// Settings.Trust turns them all off).
	Trust *Trust

	Timings []Timing // how long each stage took
}

// Timing is one stage's duration.
type Timing struct {
	Stage    string
	Duration time.Duration
}

// Stages lists the recompute stages in order, for progress reporting: the
// last three run only when Settings.Trust turns them on.
var Stages = []string{"kernels", "clusters", "embedding", "neighbours", StageDimensions, StageUncertainty, StageProjection}

// coreStages counts the stages every run goes through.
const coreStages = 4

// Recompute runs the kernels (k1 and k2 kernel PCA, kernel k-means and the
// dendrogram on k1), the embedding (from the default start and the previous run's, trained on all but the
// held-out answers) and the nearest neighbours. progress, if not nil, is
// called at the start of each stage with its index into Stages.
func Recompute(ctx context.Context, in Input, s Settings, progress func(stage int)) (*Result, error) {
	s = s.withDefaults()
	n := in.N
	if n < 3 {
		return nil, fmt.Errorf("recompute: %d items, need at least 3", n)
	}
	if len(in.Triplets) == 0 {
		return nil, errors.New("recompute: no answers yet")
	}
	if in.IDs != nil && len(in.IDs) != len(in.Triplets) {
		panic("analysis: Recompute: IDs and Triplets differ in length")
	}
	if in.Groups != nil && len(in.Groups) != len(in.Triplets) {
		panic("analysis: Recompute: Groups and Triplets differ in length")
	}
	res := &Result{Settings: s, Answers: len(in.Triplets)}
	stage := func(i int) time.Time {
		if progress != nil {
			progress(i)
		}
		return time.Now()
	}
	done := func(i int, start time.Time) {
		res.Timings = append(res.Timings, Timing{Stages[i], time.Since(start)})
	}

	// Kernels.
	t0 := stage(0)
	f1, err := kernel.NewFeatures(kernel.K1, n, in.Triplets, nil)
	if err != nil {
		return nil, fmt.Errorf("recompute: %w", err)
	}
	f2, err := kernel.NewFeatures(kernel.K2, n, in.Triplets, nil)
	if err != nil {
		return nil, fmt.Errorf("recompute: %w", err)
	}
	K1 := kernel.Matrix(f1, true)
	if res.K1PCA, err = kernel.KernelPCA(K1, 2); err != nil {
		return nil, fmt.Errorf("recompute: k1 pca: %w", err)
	}
	if res.K2PCA, err = f2.PCAFixed(2); err != nil {
		return nil, fmt.Errorf("recompute: k2 pca: %w", err)
	}
	done(0, t0)
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	// Clusters and the dendrogram on k1.
	t0 = stage(1)
	res.K, res.Clusters, res.Silhouette = bestClusters(K1, res.K1PCA, s.Clusters, s.Seed)
	res.Dendrogram = kernel.CompleteLinkage(K1)
	res.HeatmapOrder = clusterOrder(res.Clusters, res.K1PCA)
	res.Heatmap = heatmap(K1, res.HeatmapOrder, s.HeatmapSide)
	res.NeighboursKernel = NeighboursBySimilarity(K1, s.Neighbours)
	done(1, t0)
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	// Embedding on the training answers.
	t0 = stage(2)
	train, test, groups := holdout(in, s)
	res.Train, res.Heldout = len(train), len(test)
	opt := embed.Options{Method: s.Method, Dim: s.Dim, Seed: s.Seed, MaxIter: s.MaxIter}
	fit, err := embed.Fit(ctx, n, train, opt)
	if err != nil {
		return nil, fmt.Errorf("recompute: embedding: %w", err)
	}
	// The previous run's embedding is tried as a warm start beside the
	// default start, and kept only if it orders more training answers
	// right (ties: the lower loss): a warm start alone would keep an early
	// run's wrong order (a 1-D fit whose points block each other) forever.
	if in.Prev != nil {
		if r, c := in.Prev.Dims(); r == n && c == s.Dim {
			opt.Init = in.Prev
			w, err := embed.Fit(ctx, n, train, opt)
			if err != nil {
				return nil, fmt.Errorf("recompute: embedding: %w", err)
			}
			ew, ef := embed.TripletError(w.X, train), embed.TripletError(fit.X, train)
			if ew < ef || ew == ef && w.Loss < fit.Loss {
				fit = w
			}
		}
	}
	// The stored, shown and exported embedding is the normal form
	// (embed.Normalize): every order of distances, so the errors and
	// neighbours below, is the fit's.
	res.Embedding, res.Iterations = new(mat.Dense), fit.Iterations
	embed.Normalize(res.Embedding, fit.X)
	res.TrainError = embed.TripletError(res.Embedding, train)
	res.HeldoutError = math.NaN()
	if len(test) > 0 {
		res.HeldoutError = embed.TripletError(res.Embedding, test)
	}
	done(2, t0)

	t0 = stage(3)
	res.NeighboursEmbedding = NeighboursByDistance(res.Embedding, s.Neighbours)
	done(3, t0)

	if s.Trust.Enabled() {
		named := func(name string) func() {
			i := slices.Index(Stages, name)
			t0 := stage(i)
			return func() { done(i, t0) }
		}
		if res.Trust, err = trust(ctx, n, train, test, groups, fit.X, s, named); err != nil {
			return nil, fmt.Errorf("recompute: %w", err)
		}
		if p := res.Trust.Projection; p != nil {
			p.scaleMore(res.Answers)
		}
	}
	return res, nil
}

// holdout splits the answers by the hash of their ids (or of their
// positions when no ids are given), with the groups of the training
// answers (nil without in.Groups).
func holdout(in Input, s Settings) (train, test []triplet.Triplet, groups []int) {
	for i, t := range in.Triplets {
		id := ""
		if in.IDs != nil {
			id = in.IDs[i]
		} else {
			id = fmt.Sprint(i)
		}
		if heldOut(id, s.Seed, s.HoldoutFrac) {
			test = append(test, t)
		} else {
			train = append(train, t)
			if in.Groups != nil {
				groups = append(groups, in.Groups[i])
			}
		}
	}
	if len(train) == 0 { // too few answers to hold any out
		return in.Triplets, nil, in.Groups
	}
	return train, test, groups
}

// HeldOut reports whether the answer with this id is among those Recompute
// holds out (Settings.Seed, Settings.HoldoutFrac; when it holds any out):
// a property of the id alone, so a caller can score the same answers in
// another form (a trial in its own format).
func HeldOut(id string, seed uint64, frac float64) bool { return heldOut(id, seed, frac) }

// heldOut reports whether the answer with this id belongs to the held-out
// share frac, for the seed: a property of the id alone.
func heldOut(id string, seed uint64, frac float64) bool {
	var b [8]byte
	for i := range b {
		b[i] = byte(seed >> (8 * i))
	}
	h := fnv.New64a()
	h.Write(b[:])
	h.Write([]byte(id))
	// FNV's output is poorly mixed for short ids; finish with splitmix64's
	// mixer so the share held out is frac.
	return triplet.Mix64(h.Sum64()) < uint64(frac*float64(math.MaxUint64))
}

// bestClusters runs kernel k-means with k clusters, or, for k = 0, with
// 2..8 clusters keeping the best silhouette. The silhouette is measured in
// the kernel PCA space pca (the plot the dashboard shows): on the raw
// kernel-induced distance, which the diagonal dominates (section 2.1), it is
// near zero for every k and prefers the fewest clusters.
func bestClusters(K mat.Symmetric, pca *mat.Dense, k int, seed uint64) (int, []int, float64) {
	n := K.SymmetricDim()
	const restarts = 5
	lin := mat.NewSymDense(n, nil)
	lin.SymOuterK(1, pca)
	if k > 0 {
		k = min(k, n)
		labels := kernel.KernelKMeans(K, k, restarts, seed)
		return k, labels, kernel.Silhouette(lin, labels)
	}
	bestK, bestS := 0, math.Inf(-1)
	var best []int
	for c := 2; c <= min(8, n-1); c++ {
		labels := kernel.KernelKMeans(K, c, restarts, seed)
		if sil := kernel.Silhouette(lin, labels); sil > bestS {
			bestK, bestS, best = c, sil, labels
		}
	}
	return bestK, best, bestS
}

// clusterOrder lists the items grouped by cluster, and within a cluster by
// their first kernel PCA score, so the heat map shows blocks.
func clusterOrder(clusters []int, pca *mat.Dense) []int {
	order := make([]int, len(clusters))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if clusters[a] != clusters[b] {
			return clusters[a] - clusters[b]
		}
		switch pa, pb := pca.At(a, 0), pca.At(b, 0); {
		case pa < pb:
			return -1
		case pa > pb:
			return 1
		}
		return 0
	})
	return order
}

// heatmap returns K in the given order, averaged over blocks so that it has
// at most side rows and columns.
func heatmap(K mat.Symmetric, order []int, side int) *mat.Dense {
	n := len(order)
	m := min(n, side)
	h := mat.NewDense(m, m, nil)
	cnt := mat.NewDense(m, m, nil)
	for a := range n {
		ba := a * m / n
		for b := range n {
			bb := b * m / n
			h.Set(ba, bb, h.At(ba, bb)+K.At(order[a], order[b]))
			cnt.Set(ba, bb, cnt.At(ba, bb)+1)
		}
	}
	h.DivElem(h, cnt)
	return h
}
