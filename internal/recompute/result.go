// Package recompute runs a study's analysis in the background: River jobs
// that load the study's answers from the store, run analysis.Recompute
// (warm-started from the previous run) and analysis.ParticipantQuality, and
// store the results for the dashboard; and a periodic scan that enqueues a
// run for every open study that is due (collect.Store.DueStudies). One run
// per study at a time (a River unique job by study), cancellable.
package recompute

import (
	"encoding/json"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/analysis"
)

// ResultVersion is the version of the stored result encoding.
const ResultVersion = 1

// Result is what a run stores (as JSON) for the dashboard and the exports.
// Rows of the matrices are items in index order. Figures that are undefined
// (NaN) are null.
type Result struct {
	Version int    `json:"version"`
	N       int    `json:"n"`
	Method  string `json:"method"`
	Dim     int    `json:"dim"`
	Answers int    `json:"answers"`
	Train   int    `json:"train"`
	Heldout int    `json:"heldout"`

	Embedding    [][]float64 `json:"embedding"`
	TrainError   *float64    `json:"train_error"`
	HeldoutError *float64    `json:"heldout_error"`
	// FormatScore is an odd-one-out or rank study's held-out score in its
	// own format (nil for a triplet study, or without held-out trials).
	FormatScore *FormatScore `json:"format_score,omitempty"`
	Iterations  int          `json:"iterations"`

	K1PCA      [][]float64 `json:"k1_pca"`
	K2PCA      [][]float64 `json:"k2_pca"`
	Clusters   []int       `json:"clusters"`
	K          int         `json:"k"`
	Silhouette *float64    `json:"silhouette"`
	Dendrogram []Merge     `json:"dendrogram"`

	Heatmap      [][]float64 `json:"heatmap"`
	HeatmapOrder []int       `json:"heatmap_order"`

	NeighboursKernel    [][]int `json:"neighbours_kernel"`
	NeighboursEmbedding [][]int `json:"neighbours_embedding"`

	Timings      []Timing      `json:"timings"`
	Participants []Participant `json:"participants"`
	// FastMS is the threshold the participants' FastShare counts answers
	// under (FastThreshold; 0 in results stored before it was kept, which
	// used FastMS: see FastThresholdMS).
	FastMS int `json:"fast_ms,omitempty"`

	// For a study with the basis design: the design's own coordinates
	// (n × d̂, along the axes found so far until the basis is complete) and
	// its dimension estimate d̂.
	BasisCoords   [][]float64 `json:"basis_coords,omitempty"`
	BasisDHat     *int        `json:"basis_d_hat,omitempty"`
	BasisComplete bool        `json:"basis_complete,omitempty"`

	// For a study with arms or a held-out share (issue 16): HeldoutAnswers
	// is the study's held-out answers, the test set every arm is judged on
	// (of participants not excluded; left out of every fit above); Arms
	// is each arm's fit of its own answers judged on them (in arm order,
	// an arm without answers left out); Curve is the learning curve so
	// far, this run's points last (see CurvePoint).
	HeldoutAnswers int          `json:"heldout_answers,omitempty"`
	Arms           []ArmResult  `json:"arms,omitempty"`
	Curve          []CurvePoint `json:"arm_curve,omitempty"`
	// Pools are the pool refreshes of the study's active arms this run
	// made (or tried), in arm order.
	Pools []PoolRefresh `json:"pools,omitempty"`
}

// ArmResult is one arm's fit in one run: the arm's answers (its
// participants' answers that are not held out, fallbacks included,
// excluded participants left out) fitted with the study's method and
// dimensions, and judged on the study's held-out answers.
type ArmResult struct {
	Arm    int     `json:"arm"`
	Name   string  `json:"name"`
	Design string  `json:"design"`
	Share  float64 `json:"share"`
	// Participants counts the arm's participants with answers in the run;
	// Answers the answers fitted, Fallbacks those among them that answered
	// random fallback questions.
	Participants int `json:"participants"`
	Answers      int `json:"answers"`
	Fallbacks    int `json:"fallbacks"`
	// Heldout counts the held-out answers judged, Wrong those the fit gets
	// wrong; HeldoutError is Wrong / Heldout (null without held-out answers).
	Heldout      int      `json:"heldout"`
	Wrong        int      `json:"wrong"`
	HeldoutError *float64 `json:"heldout_error"`
	TrainError   *float64 `json:"train_error"`
	// Embedding is the arm's fit (n × dim), the next run's warm start.
	Embedding [][]float64 `json:"embedding,omitempty"`
}

// CurvePoint is one arm's point of the learning curve: the held-out error
// of run Run's fit of the arm's Answers answers, on the Heldout held-out
// answers the study had then. Each run's result carries the points of the
// runs before it (from the previous done run's result) and adds its own,
// so the latest result alone draws the whole curve; past MaxCurveRuns runs
// the older half of the runs is thinned (every other run kept).
type CurvePoint struct {
	Run          int64    `json:"run"`
	Arm          int      `json:"arm"`
	Answers      int      `json:"answers"`
	Heldout      int      `json:"heldout"`
	Wrong        int      `json:"wrong"`
	HeldoutError *float64 `json:"heldout_error"`
}

// MaxCurveRuns bounds the runs a result's learning curve keeps points of.
const MaxCurveRuns = 400

// PoolRefresh is what a run did for one active arm: the fit of the arm's
// answers under the arm's answer model (Method; Reused when it is the
// arm's learning-curve fit of the same run), then State.NextPool and
// Store.ApplyActivePool. Version is the number of answers the design had
// recorded when its state was read; Questions the size of the pool
// installed. Error says why no pool was installed ("" when one was).
type PoolRefresh struct {
	Arm       int    `json:"arm"`
	Name      string `json:"name"`
	Method    string `json:"method"`
	Version   int64  `json:"version"`
	Answers   int    `json:"answers"`
	Questions int    `json:"questions"`
	Reused    bool   `json:"reused,omitempty"`
	Error     string `json:"error,omitempty"`
	// Embedding is the fit under the answer model when it is not the
	// arm's learning-curve fit (the next run's warm start).
	Embedding [][]float64 `json:"embedding,omitempty"`
}

// thinCurve keeps the points of at most MaxCurveRuns runs: the newest
// MaxCurveRuns/4 runs whole and every other run before them, as often as
// needed. The curve keeps its shape; its old stretch gets sparser.
func thinCurve(c []CurvePoint) []CurvePoint {
	for {
		var runs []int64
		for _, p := range c {
			if len(runs) == 0 || runs[len(runs)-1] != p.Run {
				runs = append(runs, p.Run)
			}
		}
		if len(runs) <= MaxCurveRuns {
			return c
		}
		keep := map[int64]bool{}
		old := len(runs) - MaxCurveRuns/4
		for i, r := range runs {
			keep[r] = i >= old || i%2 == 0
		}
		out := c[:0:0]
		for _, p := range c {
			if keep[p.Run] {
				out = append(out, p)
			}
		}
		c = out
	}
}

// matrixOf is rows as a matrix when it is n × dim (both positive), else
// nil.
func matrixOf(rows [][]float64, n, dim int) *mat.Dense {
	if len(rows) != n || n == 0 || dim < 1 {
		return nil
	}
	x := mat.NewDense(n, dim, nil)
	for i, row := range rows {
		if len(row) != dim {
			return nil
		}
		x.SetRow(i, row)
	}
	return x
}

// Merge is one dendrogram merge (see kernel.Merge).
type Merge struct {
	A      int     `json:"a"`
	B      int     `json:"b"`
	Height float64 `json:"h"`
	Size   int     `json:"size"`
}

// Timing is one stage's duration in milliseconds.
type Timing struct {
	Stage string  `json:"stage"`
	MS    float64 `json:"ms"`
}

// Participant is one participant's quality figures (analysis.Quality),
// keyed by their public id.
type Participant struct {
	PublicID             string   `json:"participant"`
	Answers              int      `json:"answers"`
	MedianResponseMS     *float64 `json:"median_response_ms"`
	FastShare            *float64 `json:"fast_share"`
	SelfContradiction    *float64 `json:"self_contradiction"`
	MajorityDisagreement *float64 `json:"majority_disagreement"`
	EmbeddingAgreement   *float64 `json:"embedding_agreement"`
	LeftShare            *float64 `json:"left_share"` // share of answers choosing the left option
}

// FastThresholdMS is the threshold the participants' FastShare counts
// answers under.
func (r *Result) FastThresholdMS() int {
	if r.FastMS > 0 {
		return r.FastMS
	}
	return FastMS
}

// num returns x, or nil for NaN and infinities (JSON has no NaN).
func num(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func rowsOf(m *mat.Dense) [][]float64 {
	if m == nil {
		return nil
	}
	r, c := m.Dims()
	out := make([][]float64, r)
	for i := range out {
		out[i] = make([]float64, c)
		mat.Row(out[i], i, m)
	}
	return out
}

// newResult converts an analysis result.
func newResult(n int, r *analysis.Result) *Result {
	out := &Result{Version: ResultVersion, N: n, Method: string(r.Settings.Method), Dim: r.Settings.Dim,
		Answers: r.Answers, Train: r.Train, Heldout: r.Heldout,
		Embedding: rowsOf(r.Embedding), TrainError: num(r.TrainError), HeldoutError: num(r.HeldoutError),
		Iterations: r.Iterations, K1PCA: rowsOf(r.K1PCA), K2PCA: rowsOf(r.K2PCA), Clusters: r.Clusters,
		K: r.K, Silhouette: num(r.Silhouette), Heatmap: rowsOf(r.Heatmap), HeatmapOrder: r.HeatmapOrder,
		NeighboursKernel: r.NeighboursKernel, NeighboursEmbedding: r.NeighboursEmbedding}
	for _, m := range r.Dendrogram {
		out.Dendrogram = append(out.Dendrogram, Merge{m.A, m.B, m.Height, m.Size})
	}
	for _, t := range r.Timings {
		out.Timings = append(out.Timings, Timing{t.Stage, float64(t.Duration.Microseconds()) / 1000})
	}
	return out
}

// EmbeddingMatrix returns the embedding as a matrix (nil if absent or not
// N × Dim).
func (r *Result) EmbeddingMatrix() *mat.Dense { return matrixOf(r.Embedding, r.N, r.Dim) }

// Encode returns the stored form of r.
func (r *Result) Encode() ([]byte, error) { return json.Marshal(r) }

// Decode reads a stored result.
func Decode(b []byte) (*Result, error) {
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode result: %w", err)
	}
	if r.Version < 1 || r.Version > ResultVersion {
		return nil, fmt.Errorf("decode result: version %d", r.Version)
	}
	return &r, nil
}

// FormatScore is the share of held-out trials whose answer the embedding
// predicts in the trial's own format (issue 27): for odd-one-out the odd
// one (the item left out of the closest pair, embed.OddOneOutAccuracy),
// for rank the first choice (the reference nearest the query,
// embed.RankTop1Accuracy). The trials are those whose derived triplets the
// fit held out (analysis.HeldOut on the question id), so the score and the
// held-out triplet error judge the same answers.
type FormatScore struct {
	Name   string   `json:"name"` // "odd-one-out accuracy" or "rank top-1 accuracy"
	Value  *float64 `json:"value"`
	Trials int      `json:"trials"`
	Chance float64  `json:"chance"` // the score of answering at random
}
