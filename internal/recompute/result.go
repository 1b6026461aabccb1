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
	Iterations   int         `json:"iterations"`

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

// EmbeddingMatrix returns the embedding as a matrix (nil if absent).
func (r *Result) EmbeddingMatrix() *mat.Dense {
	if len(r.Embedding) == 0 || len(r.Embedding[0]) == 0 {
		return nil
	}
	x := mat.NewDense(len(r.Embedding), len(r.Embedding[0]), nil)
	for i, row := range r.Embedding {
		x.SetRow(i, row)
	}
	return x
}

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
