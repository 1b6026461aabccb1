package http

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/closer-lab/closer/internal/recompute"
)

// ParticipantsColumns are participants.csv's columns.
var ParticipantsColumns = []string{"participant", "external_id", "answers", "started_at", "completed_at", "completion_code",
	"excluded", "excluded_reason", "median_response_ms", "fast_share", "left_share", "self_contradiction", "majority_disagreement",
	"embedding_agreement", "catch_trials", "catch_accuracy", "repeat_trials", "self_consistency", "skipped"}

// participantsCSV lists every participant of the study, oldest first, with
// the quality figures of the last recompute (empty without one, or for a
// participant who answered since) (GET /admin/studies/{slug}/participants.csv).
func (s *Server) participantsCSV(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	ps, err := s.store.ListParticipants(r.Context(), st.ID, math.MaxInt32)
	if err != nil {
		return err
	}
	quality := map[string]recompute.Participant{}
	if _, blob, err := s.store.LatestResult(r.Context(), st.ID); err != nil {
		return err
	} else if blob != nil {
		res, err := recompute.Decode(blob)
		if err != nil {
			return err
		}
		for _, q := range res.Participants {
			quality[q.PublicID] = q
		}
	}
	cw := csvResponse(w, st.Slug+"-participants.csv")
	cw.Write(ParticipantsColumns)
	opt := func(x *float64) string {
		if x == nil {
			return ""
		}
		return ftoa(*x)
	}
	at := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	}
	for i := len(ps) - 1; i >= 0; i-- { // ListParticipants gives the newest first
		p := ps[i]
		q := quality[p.PublicID]
		cw.Write([]string{p.PublicID, p.ExternalID, strconv.Itoa(p.Answered), at(&p.CreatedAt), at(p.CompletedAt),
			p.CompletionCode, strconv.FormatBool(p.Excluded), p.ExcludedReason, opt(q.MedianResponseMS), opt(q.FastShare), opt(q.LeftShare),
			opt(q.SelfContradiction), opt(q.MajorityDisagreement), opt(q.EmbeddingAgreement),
			strconv.Itoa(p.CatchTrials), opt(p.CatchAccuracy()), strconv.Itoa(p.RepeatTrials), opt(p.Consistency()), strconv.Itoa(p.Skipped)})
	}
	cw.Flush()
	return cw.Error()
}
