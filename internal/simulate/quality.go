package simulate

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/kernel"
	"github.com/closer-lab/closer/internal/triplet"
)

// Truth is what the simulator knows and the crowd does not.
type Truth struct {
	// X are the true points, one row per item.
	X *mat.Dense
	// Labels are the true clusters of the items (nil when unknown); with
	// labels the quality includes the purity of a clustering.
	Labels []int
	// Heldout are fresh triplets for the held-out error, answered without
	// noise (see Heldout).
	Heldout []triplet.Triplet
	// CrowdHeldout are the crowd's held-out answers of a run of arms
	// (StudyCheckpoint.Heldout: the arms' common test set, as noisy as the
	// crowd); nil when there are none.
	CrowdHeldout []triplet.Triplet
	// K is the k of the kNN precision (0: ⌈log2 n⌉, embed.DefaultK).
	K int
}

// Heldout returns m fresh uniformly random questions over the points x,
// answered without noise, drawn with their own seed (independent of the
// crowd's questions).
func Heldout(x *mat.Dense, m int, seed uint64) []triplet.Triplet {
	return triplet.RandomTriplets(triplet.NewRand(seed), triplet.NewOracle(x, 0, seed), m)
}

// Method is how coordinates are learned from the collected triplets.
type Method string

const (
	// KernelPCA is kernel PCA (centred) of the triplet kernel k1 or k2
	// (Kleindessner & von Luxburg 2017, eq. 3 and 5), in the compressed
	// landmark feature space when the estimator has landmarks (section 2.4).
	KernelPCA Method = "kpca"
	// TSTE is the t-STE ordinal embedding (van der Maaten & Weinberger 2012).
	TSTE Method = "tste"
)

// Estimator learns coordinates from the triplets collected so far. Designs
// that place the items themselves (Coordinator) are judged by their own
// coordinates instead; with Method TSTE those coordinates are the start of
// a t-STE fit of every collected triplet.
type Estimator struct {
	Method Method
	// Kind is the kernel of KernelPCA (kernel.K1 or kernel.K2).
	Kind kernel.Kind
	// Landmarks, when set, selects the compressed landmark feature space;
	// Keep then must select the triplets that fit the landmark design (the
	// others, such as random fallbacks, are left out of the kernel).
	Landmarks []int
	Keep      func(triplet.Triplet) bool
	// Dim is the number of coordinates (kernel PCA components or embedding
	// dimension).
	Dim int
	// Seed fixes t-STE's start and kernel k-means' restarts.
	Seed uint64
}

// Quality is the quality of a run at a checkpoint. A figure that does not
// apply is NaN (DHat: -1).
type Quality struct {
	// DHat is the dimension a Coordinator design estimated.
	DHat int
	// Tau is the mean Kendall tau between true and learned distance
	// rankings, KNN the kNN precision, Heldout the error on Truth.Heldout
	// (embed.MeanKendallTau, embed.KNNPrecision, embed.TripletError).
	Tau, KNN, Heldout float64
	// CrowdHeldout is the error on Truth.CrowdHeldout, the share of those
	// answers the learned coordinates contradict (NaN when there are none).
	CrowdHeldout float64
	// Purity is the purity of a clustering with as many clusters as the
	// true labels have: kernel k-means on the fixed kernel (KernelPCA,
	// section 2.1) or k-means on the learned coordinates (t-STE and
	// Coordinator designs), kmeansRestarts seeded restarts. Left out (NaN)
	// above MaxPurityItems items.
	Purity float64
	// Used is the number of triplets the estimator learned from.
	Used int
}

// MaxPurityItems bounds the items for which the purity is computed: kernel
// k-means needs the n×n kernel matrix (200 MB at 5,000 items).
const MaxPurityItems = 5000

// kmeansRestarts is the number of seeded kernel k-means restarts (the
// paper's experiments use five replicates, section 4).
const kmeansRestarts = 5

// Assess judges the run at checkpoint cp against the truth.
func Assess(ctx context.Context, cp Checkpoint, truth Truth, est Estimator) (Quality, error) {
	q := Quality{DHat: -1, Tau: math.NaN(), KNN: math.NaN(), Heldout: math.NaN(), CrowdHeldout: math.NaN(), Purity: math.NaN()}
	n, _ := truth.X.Dims()
	var coords *mat.Dense
	var gram *mat.SymDense // kernel for the clustering
	if c, ok := cp.Design.(Coordinator); ok {
		q.DHat = c.DHat()
		coords = c.Coordinates()
		q.Used = cp.Answers - cp.Fallbacks
		if est.Method == TSTE && coords != nil {
			// Basis (+ Extra) + t-STE: embed every collected triplet,
			// starting from the design's coordinates (Anderton et al.,
			// Table 2).
			_, dim := coords.Dims()
			res, err := embed.Fit(ctx, n, cp.Triplets, embed.Options{Method: embed.TSTE, Dim: dim, Seed: est.Seed, Init: coords})
			if err != nil {
				return q, fmt.Errorf("simulate: assess: %w", err)
			}
			coords = res.X
			q.Used = len(cp.Triplets)
		}
	} else {
		ts := cp.Triplets
		if est.Keep != nil {
			ts = make([]triplet.Triplet, 0, len(cp.Triplets))
			for _, t := range cp.Triplets {
				if est.Keep(t) {
					ts = append(ts, t)
				}
			}
		}
		q.Used = len(ts)
		if len(ts) == 0 {
			// Nothing to learn from yet (an arm that has had no annotator).
			return q, nil
		}
		switch est.Method {
		case KernelPCA:
			f, err := kernel.NewFeatures(est.Kind, n, ts, est.Landmarks)
			if err != nil {
				return q, fmt.Errorf("simulate: assess: %w", err)
			}
			coords, err = f.PCA(min(est.Dim, n))
			if err != nil {
				return q, fmt.Errorf("simulate: assess: %w", err)
			}
			if truth.Labels != nil && n <= MaxPurityItems {
				gram = kernel.Matrix(f, true)
			}
		case TSTE:
			res, err := embed.Fit(ctx, n, ts, embed.Options{Method: embed.TSTE, Dim: est.Dim, Seed: est.Seed})
			if err != nil {
				return q, fmt.Errorf("simulate: assess: %w", err)
			}
			coords = res.X
		default:
			return q, fmt.Errorf("simulate: assess: unknown method %q", est.Method)
		}
	}
	if coords == nil {
		return q, nil
	}
	q.Tau = embed.MeanKendallTau(truth.X, coords)
	q.KNN = embed.KNNPrecision(truth.X, coords, truth.K)
	q.Heldout = embed.TripletError(coords, truth.Heldout)
	q.CrowdHeldout = embed.TripletError(coords, truth.CrowdHeldout)
	if truth.Labels != nil && n <= MaxPurityItems {
		k := numLabels(truth.Labels)
		var lab []int
		if gram != nil {
			lab = kernel.KernelKMeans(gram, k, kmeansRestarts, est.Seed)
		} else {
			lab = kernel.KMeans(coords, k, kmeansRestarts, est.Seed)
		}
		q.Purity = kernel.Purity(lab, truth.Labels)
	}
	return q, nil
}

func numLabels(labels []int) int {
	seen := map[int]bool{}
	for _, l := range labels {
		seen[l] = true
	}
	return len(seen)
}
