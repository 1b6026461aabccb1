package web

import (
	"net/http"
	"strings"

	"github.com/closer-lab/closer/internal/study"
)

// trustSettingsOf reads the settings form's trust fields (the dimension
// choice, bootstrap and projection bounds); a form without them (an older
// page) keeps the study's stored ones. ok is false when a field present is
// not a number.
func (s *Server) trustSettingsOf(r *http.Request, studyID int64, num func(string) (float64, bool)) (study.TrustSettings, bool, error) {
	if _, present := r.PostForm["trust_max_dim"]; !present {
		rs, err := s.store.RecomputeSettings(r.Context(), studyID)
		return rs.Trust, true, err
	}
	maxDim, ok1 := num("trust_max_dim")
	folds, ok2 := num("trust_folds")
	reps, ok3 := num("bootstrap_reps")
	target, ok4 := num("target_error_pct")
	if strings.TrimSpace(r.PostFormValue("target_error_pct")) == "" {
		target, ok4 = 0, true
	}
	t := study.TrustSettings{MaxDim: int(maxDim), Folds: int(folds), Bootstrap: int(reps),
		Project: r.PostFormValue("project") != "", TargetError: target / 100}
	return t, ok1 && ok2 && ok3 && ok4, nil
}
