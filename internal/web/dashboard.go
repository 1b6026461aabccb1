package web

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// Jobs is what the dashboard needs of the background jobs
// (*recompute.Jobs): enqueue a study's recompute, cancel it, and see
// whether one is queued or running.
type Jobs interface {
	Enqueue(ctx context.Context, studyID int64) (jobID int64, duplicate bool, err error)
	Cancel(ctx context.Context, studyID int64) error
	Pending(ctx context.Context, studyID int64) (state string, jobID int64, err error)
}

// dashboard is a study's results dashboard (GET /admin/studies/{slug}/dashboard).
func (s *Server) dashboard(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	v, err := s.fetchDashboardPage(r.Context(), st, dashboardParamsOf(r.URL.Query()))
	if err != nil {
		return err
	}
	if !identifyingFrom(r.Context()) { // a viewer's dashboard (issue 30)
		for i := range v.Participants {
			v.Participants[i].ExternalID = ""
		}
	}
	return s.render(w, r, http.StatusOK, templates.DashboardShowPage(v))
}

// dashboardStatus is the small JSON the dashboard polls to refresh itself
// (GET /admin/studies/{slug}/dashboard/status).
func (s *Server) dashboardStatus(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	ver, err := s.store.DashboardVersion(ctx, st.ID)
	if err != nil {
		return err
	}
	stats, err := s.dash.tallies.Stats(ctx, st.ID, ver.Structure)
	if err != nil {
		return err
	}
	latest, err := s.store.LatestRun(ctx, st.ID)
	if err != nil {
		return err
	}
	rs := templates.RecomputeState{Latest: latest, JobsEnabled: s.cfg.Jobs != nil}
	if rs.Newer, rs.ExclusionsChanged, err = s.freshness(ctx, st.ID, latest, stats.Answers); err != nil {
		return err
	}
	if s.cfg.Jobs != nil {
		if rs.Pending, rs.PendingJob, err = s.cfg.Jobs.Pending(ctx, st.ID); err != nil {
			return err
		}
	}
	out := map[string]any{"status": st.Status, "answers": stats.Answers, "participants": stats.Participants,
		"pending": rs.Pending, "state": templates.RunState(rs), "newer_answers": rs.Newer,
		"exclusions_changed": rs.ExclusionsChanged, "live": st.Status == study.StatusOpen || rs.Pending != ""}
	if latest != nil {
		out["latest_run"] = map[string]any{"id": latest.ID, "status": latest.Status, "stage": latest.Stage, "answers": latest.Answers}
		if latest.Status == study.RunDone {
			out["done_run"] = latest.ID
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

// freshness says what the figures of run, the study's latest run, leave
// out when it is done (0 and false otherwise): newer counts the answers
// stored after the run read the study's answers, of the answers stored
// now; exclusionsChanged says whether the participants excluded now (those
// with answers) differ from those whose answers the run left out. A run
// reads every answer at once, held-out answers and those of excluded
// participants included (each counted apart in its settings), and answers
// are never deleted. A run stored before runs kept their excluded
// participants says nothing about exclusions (false: unknown).
//
// A participant excluded before they answered and answering after the run
// counts as a change too; their answers are then newer as well.
func (s *Server) freshness(ctx context.Context, studyID int64, run *study.Run, answers int) (newer int, exclusionsChanged bool, err error) {
	if run == nil || run.Status != study.RunDone {
		return 0, false, nil
	}
	var set recompute.Settings
	if err := json.Unmarshal(run.Settings, &set); err != nil {
		return 0, false, nil
	}
	newer = max(0, answers-run.Answers-set.Excluded-set.Heldout)
	if set.ExcludedParticipants == nil {
		return newer, false, nil
	}
	now, err := s.store.ExcludedWithAnswers(ctx, studyID)
	if err != nil {
		return 0, false, err
	}
	return newer, now != *set.ExcludedParticipants, nil
}

func (s *Server) toDashboard(w http.ResponseWriter, r *http.Request, slug, msg, anchor string) error {
	http.Redirect(w, r, "/admin/studies/"+slug+"/dashboard?msg="+msg+anchor, http.StatusSeeOther)
	return nil
}

// dashboardRecompute enqueues a recompute now (POST .../dashboard/recompute).
func (s *Server) dashboardRecompute(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	if s.cfg.Jobs == nil {
		return &httpError{status: http.StatusServiceUnavailable, msg: "background jobs are not configured in this process"}
	}
	_, dup, err := s.cfg.Jobs.Enqueue(r.Context(), st.ID)
	if err != nil {
		return err
	}
	msg := "queued"
	if dup {
		msg = "already"
	}
	return s.toDashboard(w, r, st.Slug, msg, "#recompute")
}

// dashboardCancel cancels the queued or running recompute (POST .../dashboard/cancel).
func (s *Server) dashboardCancel(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	if s.cfg.Jobs == nil {
		return &httpError{status: http.StatusServiceUnavailable, msg: "background jobs are not configured in this process"}
	}
	err = s.cfg.Jobs.Cancel(r.Context(), st.ID)
	if errors.Is(err, recompute.ErrNothingToCancel) {
		return s.toDashboard(w, r, st.Slug, "nothing", "#recompute")
	}
	if err != nil {
		return err
	}
	return s.toDashboard(w, r, st.Slug, "cancelled", "#recompute")
}

// dashboardSettings saves the dashboard settings (POST .../dashboard/settings).
func (s *Server) dashboardSettings(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	num := func(name string) (float64, bool) {
		x, err := strconv.ParseFloat(strings.TrimSpace(r.PostFormValue(name)), 64)
		return x, err == nil && !math.IsNaN(x) && !math.IsInf(x, 0)
	}
	minNew, ok1 := num("min_new_answers")
	age, ok2 := num("max_age_minutes")
	dim, ok3 := num("dim")
	k, ok4 := num("clusters")
	in := study.RecomputeSettings{MinNewAnswers: int(minNew), MaxAge: time.Duration(age * float64(time.Minute)),
		Method: r.PostFormValue("method"), Dim: int(dim), Clusters: int(k)}
	var ok5 bool
	if in.Trust, ok5, err = s.trustSettingsOf(r, st.ID, num); err != nil {
		return err
	}
	if !(ok1 && ok2 && ok3 && ok4 && ok5) {
		err = &httpError{status: http.StatusUnprocessableEntity, msg: "every setting needs a number"}
	} else {
		err = s.store.SetRecomputeSettings(r.Context(), st.ID, in)
	}
	if err != nil {
		status, msg := classify(err)
		if status >= 500 {
			return err
		}
		v, perr := s.fetchDashboardPage(r.Context(), st, dashboardParamsOf(r.URL.Query()))
		if perr != nil {
			return perr
		}
		v.Error, v.Settings = msg, in
		return s.render(w, r, status, templates.DashboardShowPage(v))
	}
	return s.toDashboard(w, r, st.Slug, "saved", "#settings")
}
