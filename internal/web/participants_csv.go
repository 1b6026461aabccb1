package web

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
)

// ParticipantsColumns are participants.csv's columns. New columns go at
// the end: scripts read the others by position. fast_share_under_ms is
// the threshold fast_share counts answers under (the study's exclusion
// rule's when it sets one, else 1000: recompute.FastThreshold, as of the
// last recompute); then the platform's link parameters kept with the
// participant (collect.ProlificParams, then MTurk's assignment and HIT),
// empty where the platform has none; then the participant's arm (its name;
// a study without arms: its design). With ?previews=1 the researchers'
// preview sessions are listed too, and a last column, preview, marks them
// (study.PreviewColumn); by default they are left out.
var ParticipantsColumns = append(append([]string{"participant", "external_id", "answers", "started_at", "completed_at", "completion_code",
	"excluded", "excluded_reason", "median_response_ms", "fast_share", "left_share", "self_contradiction", "majority_disagreement",
	"embedding_agreement", "catch_trials", "catch_accuracy", "repeat_trials", "self_consistency", "skipped",
	"fast_share_under_ms"}, participantParamColumns...), "arm")

// participantParamColumns are the kept link parameters participants.csv
// lists, under their platform's names.
var participantParamColumns = []string{"STUDY_ID", "SESSION_ID", "assignmentId", "hitId"}

// participantsCSV lists every participant of the study, oldest first, with
// the quality figures of the last recompute (empty without one, or for a
// participant who answered since) (GET /admin/studies/{slug}/participants.csv);
// preview sessions only with ?previews=1.
func (s *Server) participantsCSV(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	previews := r.URL.Query().Get("previews") == "1"
	ps, err := s.store.ListParticipants(r.Context(), st.ID, math.MaxInt32)
	if err != nil {
		return err
	}
	quality := map[string]recompute.Participant{}
	fastMS := ""
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
		fastMS = strconv.Itoa(res.FastThresholdMS())
	}
	cw := csvResponse(w, st.Slug+"-participants.csv")
	columns := ParticipantsColumns
	if previews {
		columns = append(columns[:len(columns):len(columns)], study.PreviewColumn)
	}
	cw.Write(columns)
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
		if p.Preview && !previews {
			continue
		}
		q, ok := quality[p.PublicID]
		under := ""
		if ok && q.FastShare != nil {
			under = fastMS
		}
		row := []string{p.PublicID, p.ExternalID, strconv.Itoa(p.Answered), at(&p.CreatedAt), at(p.CompletedAt),
			p.CompletionCode, strconv.FormatBool(p.Excluded), p.ExcludedReason, opt(q.MedianResponseMS), opt(q.FastShare), opt(q.LeftShare),
			opt(q.SelfContradiction), opt(q.MajorityDisagreement), opt(q.EmbeddingAgreement),
			strconv.Itoa(p.CatchTrials), opt(p.CatchAccuracy()), strconv.Itoa(p.RepeatTrials), opt(p.Consistency()), strconv.Itoa(p.Skipped),
			under}
		for _, k := range participantParamColumns {
			row = append(row, p.PlatformParams[k])
		}
		row = append(row, study.ArmName(st, p.Arm))
		if previews {
			row = append(row, strconv.FormatBool(p.Preview))
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}
