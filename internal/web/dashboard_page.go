package web

import (
	"context"
	"fmt"
	"net/url"
	"slices"

	"github.com/closer-lab/closer/internal/analysis"
	"github.com/closer-lab/closer/internal/dashboard"
	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/format"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

const (
	galleryPageSize      = 20
	peoplePageSize       = 50
	dashboardTimeBuckets = 48
	dashboardRTBins      = 30
	dashboardTopContra   = 12
)

// dashboardNotices are the messages a redirect may ask the page to show.
var dashboardNotices = map[string]string{
	"queued":    "A recompute is queued.",
	"already":   "A recompute is already queued or running.",
	"cancelled": "The recompute was cancelled.",
	"nothing":   "No recompute was queued or running.",
	"saved":     "Settings saved; they apply from the next recompute.",
	"excluded":  "Participant excluded: their answers stay stored and are left out of the next recompute and of exports.",
	"included":  "Participant included again.",
	"imported":  "Study imported. Recompute it to see its results.",
}

// dashboardParams are what a dashboard request asks for.
type dashboardParams struct {
	notice      string // the message a redirect asked for ("" for none)
	peoplePage  int    // the pages of participants and of items asked for, from 1
	galleryPage int
}

// dashboardParamsOf reads a dashboard request's query.
func dashboardParamsOf(q url.Values) dashboardParams {
	return dashboardParams{notice: dashboardNotices[q.Get("msg")],
		peoplePage: requestedPage(q, "people"), galleryPage: requestedPage(q, "items")}
}

// fetchDashboardPage builds the dashboard's view of the study. The
// aggregates over the answers come from s.dash's tally of the study,
// advanced past the answers added since the last load; the decoded results
// and their plots from s.dash while the run is the same.
func (s *Server) fetchDashboardPage(ctx context.Context, st study.Study, p dashboardParams) (templates.DashboardPage, error) {
	v := templates.DashboardPage{Study: st, Methods: embed.MethodNames(), Notice: p.notice, PeoplePage: p.peoplePage, Can: canFrom(ctx)}
	v.JobsEnabled = s.cfg.Jobs != nil
	ver, err := s.store.DashboardVersion(ctx, st.ID)
	if err != nil {
		return v, err
	}
	var people []study.DashboardParticipant
	// Those who answered only trials (catch, repeat, "can't decide") are
	// listed too: their answers are not in the tally.
	trials, err := s.store.TrialAnswerCounts(ctx, st.ID)
	if err != nil {
		return v, err
	}
	err = s.dash.tallies.With(ctx, st.ID, ver.Structure, func(t *dashboard.Tally) error {
		v.Stats, v.Figures = t.Figures(dashboardTimeBuckets, dashboardRTBins)
		all := t.ParticipantsByAnswers(trials)
		v.ParticipantsTotal = len(all)
		lo, hi := pageBounds(v.PeoplePage, peoplePageSize, len(all))
		people, err = s.participantRows(ctx, st.ID, all[lo:hi])
		return err
	})
	if err != nil {
		return v, err
	}
	v.PeoplePages = pageCount(v.ParticipantsTotal, peoplePageSize)
	// The clock moves the rate window without any new answer.
	v.Stats.AnswersPerMinute = float64(ver.Recent) / ver.RecentWindow.Minutes()
	v.Figures.Excluded = ver.Excluded
	if v.Skipped, err = s.store.CantDecideCount(ctx, st.ID); err != nil {
		return v, err
	}
	if v.Settings, err = s.store.RecomputeSettings(ctx, st.ID); err != nil {
		return v, err
	}
	if v.Latest, err = s.store.LatestRun(ctx, st.ID); err != nil {
		return v, err
	}
	if v.Newer, v.ExclusionsChanged, err = s.freshness(ctx, st.ID, v.Latest, v.Stats.Answers); err != nil {
		return v, err
	}
	if v.Shown, err = s.store.LatestDoneRun(ctx, st.ID); err != nil {
		return v, err
	}
	runs, err := s.store.Runs(ctx, st.ID)
	if err != nil {
		return v, err
	}
	items, err := s.store.ListItems(ctx, st.ID)
	if err != nil {
		return v, err
	}
	if s.cfg.Jobs != nil {
		if v.Pending, v.PendingJob, err = s.cfg.Jobs.Pending(ctx, st.ID); err != nil {
			return v, err
		}
	}
	var run, latest *runEntry
	if v.Shown != nil {
		id := v.Shown.ID
		if run, err = s.dash.run(id, func() ([]byte, error) { return s.store.RunResult(ctx, id) }); err != nil {
			return v, err
		}
		latest = run
		if run.res.N != len(items) {
			run = nil // items were added since: the stored coordinates do not fit
		}
	}
	var res *recompute.Result
	if run != nil {
		res = run.res
	}
	var trust *analysis.Trust
	if v.Shown != nil {
		if trust, err = s.store.RunTrust(ctx, v.Shown.ID); err != nil {
			return v, err
		}
		if trust == nil { // not due at this run (recompute.TrustGrowth): the last one
			last, answers, at, t, err := s.store.LatestTrust(ctx, st.ID)
			if err != nil {
				return v, err
			}
			if t != nil && last < v.Shown.ID {
				trust = recompute.CarriedTrust(t, last, answers, at)
			}
		}
		pc, err := s.paceOf(ctx, st)
		if err != nil {
			return v, err
		}
		v.Trust = trustView(trust, pc)
	}
	var unc *analysis.Uncertainty
	if trust != nil && trust.Uncertainty != nil && run != nil && len(trust.Uncertainty.Spread) == len(items) {
		unc = trust.Uncertainty
	}

	views := itemViews(items)
	// A study of label-only items (a triplet file's) has no images and
	// no texts: the page says so. Text items show as their text, sounds
	// as their labels.
	v.HasImages = len(items) == 0 || views[0].URL != "" || views[0].Text != "" || views[0].Sound != "" || views[0].Video != ""
	v.Live = st.Status == study.StatusOpen || v.Pending != ""
	v.ContradictionShare = contradictionShare(v.Stats)
	v.MedianResponse = msText(v.Figures.MedianResponseMS)
	v.DesignName = st.Design
	v.DesignProgress = fmt.Sprintf("%d questions per participant", st.QuestionsPerParticipant)
	// The design statuses, read once: the overview's progress and the
	// "Designs compared" section both use them.
	var statuses []study.DesignStatus
	if comparesDesigns(st) || study.IsStateful(st.Design) {
		if statuses, err = s.store.DesignStatuses(ctx, st); err != nil {
			return v, err
		}
	}
	if len(st.Arms) > 0 {
		v.DesignName = fmt.Sprintf("%d arms", len(st.Arms))
		v.DesignProgress = armsSummary(st.Arms)
	} else if study.IsStateful(st.Design) {
		v.DesignProgress = designProgress(statuses[0])
	}
	if comparesDesigns(st) {
		if v.Arms, err = s.armsView(ctx, st, statuses, latest, v.Stats.Participants); err != nil {
			return v, err
		}
	}
	v.Plots = s.dashboardPlots(v.Figures, views, run, runs, unc)
	v.Participants = qualityRows(st, people, res)
	v.FastMS = recompute.FastThreshold(st)
	if res != nil {
		v.FastMS = res.FastThresholdMS()
	}
	if res != nil && len(res.NeighboursKernel) == len(items) {
		v.GalleryPages = pageCount(len(items), galleryPageSize)
		v.GalleryPage = max(1, min(p.galleryPage, v.GalleryPages))
		lo, hi := pageBounds(v.GalleryPage, galleryPageSize, len(items))
		v.Gallery = galleryRows(res, views, lo, hi, unc)
	}
	v.Contradicted = contradictionRows(v.Figures.Contradicted, views)
	return v, nil
}

// participantRows reads the rows of the participants of page.
func (s *Server) participantRows(ctx context.Context, studyID int64, page []dashboard.ParticipantCount) ([]study.DashboardParticipant, error) {
	if len(page) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(page))
	for i, p := range page {
		ids[i] = p.ID
	}
	rows, err := s.store.DashboardParticipants(ctx, studyID, ids)
	if err != nil {
		return nil, err
	}
	return dashboard.InPageOrder(page, rows), nil
}

func itemViews(items []study.Item) []templates.ItemView {
	out := make([]templates.ItemView, len(items))
	for i, it := range items {
		out[i] = templates.ItemView{Index: it.Index, Label: it.Label}
		switch {
		case it.Kind == study.ItemText:
			out[i].Text = it.Text
		case it.Kind == study.ItemAudio:
			// Not a thumbnail: an <img> (and the scatter's <image>) of a
			// sound is a broken picture; its label stands for it.
			out[i].Sound = "/img/" + it.SHA256
		case it.Kind == study.ItemVideo:
			// As a sound: a link by its label (no poster frame is made).
			out[i].Video = "/img/" + it.SHA256
		case it.ContentType != "":
			out[i].URL = "/img/" + it.SHA256
		}
	}
	return out
}

// qualityRows are the participants with their quality figures from the
// run's results (res may be nil).
func qualityRows(st study.Study, people []study.DashboardParticipant, res *recompute.Result) []templates.QualityRow {
	var quality map[string]recompute.Participant
	if res != nil {
		quality = make(map[string]recompute.Participant, len(res.Participants))
		for _, q := range res.Participants {
			quality[q.PublicID] = q
		}
	}
	var rows []templates.QualityRow
	for _, p := range people {
		row := templates.QualityRow{PublicID: p.PublicID, ExternalID: p.ExternalID, Answers: p.Answers, Excluded: p.ExcludedAt != nil,
			Median: "–", Fast: "–", Self: "–", Majority: "–", Agreement: "–", Left: "–",
			Catch: pct(p.CatchAccuracy()), Consistent: pct(p.Consistency()), Skipped: p.Skipped,
			Arm: participantArm(st, p.Arm), Code: p.Code}
		if row.Excluded {
			row.Reason = exclusionReason(p.ExcludedReason)
		}
		if q, ok := quality[p.PublicID]; ok {
			if q.MedianResponseMS != nil {
				row.Median = msText(*q.MedianResponseMS)
			}
			row.Fast, row.Self, row.Majority, row.Agreement = pct(q.FastShare), pct(q.SelfContradiction), pct(q.MajorityDisagreement), pct(q.EmbeddingAgreement)
			row.Left = pct(q.LeftShare)
		}
		rows = append(rows, row)
	}
	return rows
}

// galleryRows are the items [lo, hi) with their nearest neighbours and,
// with u, how often each embedding neighbour recurs in the bootstrap.
func galleryRows(res *recompute.Result, views []templates.ItemView, lo, hi int, u *analysis.Uncertainty) []templates.GalleryRow {
	var rows []templates.GalleryRow
	for i := lo; i < hi; i++ {
		g := templates.GalleryRow{Item: views[i]}
		for _, j := range res.NeighboursKernel[i] {
			g.ByKernel = append(g.ByKernel, views[j])
		}
		for _, j := range res.NeighboursEmbedding[i] {
			g.ByEmbedding = append(g.ByEmbedding, views[j])
			if u != nil {
				g.Stability = append(g.Stability, neighbourFreq(u, i, j))
			}
		}
		rows = append(rows, g)
	}
	return rows
}

// contradictionRows are the contradicted comparisons of the study's items.
func contradictionRows(cs []study.VoteCount, views []templates.ItemView) []templates.ContradictionRow {
	var rows []templates.ContradictionRow
	for _, c := range cs {
		if c.Anchor < len(views) && c.J < len(views) && c.K < len(views) {
			rows = append(rows, templates.ContradictionRow{Anchor: views[c.Anchor], J: views[c.J], K: views[c.K],
				JCloser: c.JCloser, KCloser: c.KCloser})
		}
	}
	return rows
}

// participantArm is the name of a participant's arm, "–" in a study without arms.
func participantArm(st study.Study, arm int) string {
	if arm < 0 || arm >= len(st.Arms) {
		return "–"
	}
	return st.Arms[arm].Name
}

// exclusionReason says why a participant is excluded: the rule's own words,
// or that a researcher excluded them.
func exclusionReason(rule string) string {
	if rule == "" {
		return "excluded by a researcher"
	}
	return "excluded automatically: " + rule
}

// neighbourFreq is the share of bootstrap replicates in which j is among
// item i's nearest ("–" when j is not among the reference neighbours the
// bootstrap counted).
func neighbourFreq(u *analysis.Uncertainty, i, j int) string {
	if i < len(u.Neighbours) {
		if r := slices.Index(u.Neighbours[i], j); r >= 0 && r < len(u.NeighbourFreq[i]) {
			return format.Percent(u.NeighbourFreq[i][r], 0)
		}
	}
	return "–"
}
