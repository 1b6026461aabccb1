package web

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/closer-lab/closer/internal/csvsafe"
	"github.com/closer-lab/closer/internal/kernel"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// Columns of the dashboard's CSV exports (the x and k columns repeat per
// dimension and per item).
var (
	EmbeddingColumns = []string{"item", "label", "x1"}
	KernelPCAColumns = []string{"item", "label", "k1_pc1", "k1_pc2", "k2_pc1", "k2_pc2", "cluster"}
	KernelColumns    = []string{"item", "label", "k0"}
)

// lastResult returns the study's items and its last recompute's results.
func (s *Server) lastResult(r *http.Request) (study.Study, []study.Item, *recompute.Result, error) {
	st, err := s.studyFromURL(r)
	if err != nil {
		return st, nil, nil, err
	}
	items, err := s.store.ListItems(r.Context(), st.ID)
	if err != nil {
		return st, nil, nil, err
	}
	_, blob, err := s.store.LatestResult(r.Context(), st.ID)
	if err != nil {
		return st, nil, nil, err
	}
	if blob == nil {
		return st, nil, nil, &httpError{status: http.StatusNotFound, msg: "this study has no recompute results yet: recompute it from its dashboard"}
	}
	res, err := recompute.Decode(blob)
	if err != nil {
		return st, nil, nil, err
	}
	if res.N != len(items) {
		return st, nil, nil, &httpError{status: http.StatusConflict, msg: "items were added since the last recompute: recompute first"}
	}
	return st, items, res, nil
}

// csvResponse starts a CSV download; its writer neutralises cells a
// spreadsheet would run (labels are file names).
func csvResponse(w http.ResponseWriter, name string) *csvsafe.Writer {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Cache-Control", "no-store")
	return csvsafe.NewWriter(w)
}

func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// embeddingCSV is the last embedding as item,label,x1..xd
// (GET /admin/studies/{slug}/embedding.csv).
func (s *Server) embeddingCSV(w http.ResponseWriter, r *http.Request) error {
	st, items, res, err := s.lastResult(r)
	if err != nil {
		return err
	}
	cw := csvResponse(w, st.Slug+"-embedding.csv")
	head := []string{"item", "label"}
	for d := 1; d <= res.Dim; d++ {
		head = append(head, fmt.Sprintf("x%d", d))
	}
	cw.Write(head)
	for i, it := range items {
		rec := []string{strconv.Itoa(it.Index), it.Label}
		for _, x := range res.Embedding[i] {
			rec = append(rec, ftoa(x))
		}
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// kernelPCACSV is the last k1 and k2 kernel PCA scores and clusters
// (GET /admin/studies/{slug}/kernel-pca.csv).
func (s *Server) kernelPCACSV(w http.ResponseWriter, r *http.Request) error {
	st, items, res, err := s.lastResult(r)
	if err != nil {
		return err
	}
	cw := csvResponse(w, st.Slug+"-kernel-pca.csv")
	cw.Write(KernelPCAColumns)
	for i, it := range items {
		cw.Write([]string{strconv.Itoa(it.Index), it.Label, ftoa(res.K1PCA[i][0]), ftoa(res.K1PCA[i][1]),
			ftoa(res.K2PCA[i][0]), ftoa(res.K2PCA[i][1]), strconv.Itoa(res.Clusters[i])})
	}
	cw.Flush()
	return cw.Error()
}

// kernelCSV is the k1 kernel matrix (with the diagonal-dominance fix, as
// the recompute uses it) of the current answers of participants not
// excluded: item,label,k0..k(n-1) (GET /admin/studies/{slug}/kernel.csv).
func (s *Server) kernelCSV(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	items, err := s.store.ListItems(r.Context(), st.ID)
	if err != nil {
		return err
	}
	answers, err := s.store.RunAnswers(r.Context(), st.ID, false)
	if err != nil {
		return err
	}
	if len(answers) == 0 || len(items) < 3 {
		return &httpError{status: http.StatusNotFound, msg: "the kernel needs at least three items and one answer"}
	}
	ts := make([]triplet.Triplet, len(answers))
	for i, a := range answers {
		ts[i] = triplet.Triplet{Anchor: a.Anchor, Closer: a.Closer, Farther: a.Farther}
	}
	f, err := kernel.NewFeatures(kernel.K1, len(items), ts, nil)
	if err != nil {
		return err
	}
	K := kernel.Matrix(f, true)
	cw := csvResponse(w, st.Slug+"-kernel.csv")
	head := []string{"item", "label"}
	for j := range items {
		head = append(head, "k"+strconv.Itoa(j))
	}
	cw.Write(head)
	rec := make([]string, 0, len(items)+2)
	for i, it := range items {
		rec = append(rec[:0], strconv.Itoa(it.Index), it.Label)
		for j := range items {
			rec = append(rec, ftoa(K.At(i, j)))
		}
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}
