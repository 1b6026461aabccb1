package http

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/dashboard"
	"github.com/closer-lab/closer/internal/recompute"
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

func itemViews(items []collect.Item) []templates.ItemView {
	out := make([]templates.ItemView, len(items))
	for i, it := range items {
		out[i] = templates.ItemView{Index: it.Index, Label: it.Label}
		if it.ContentType != "" {
			out[i].URL = "/img/" + it.SHA256
		}
	}
	return out
}

func pct(x *float64) string {
	if x == nil {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100**x)
}

func msText(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	if x >= 1000 {
		return fmt.Sprintf("%.1f s", x/1000)
	}
	return fmt.Sprintf("%.0f ms", x)
}

// dashboardPage fills the dashboard's view. The aggregates over the answers
// come from s.dash's tally of the study, advanced past the answers added
// since the last load; the decoded results and their plots from s.dash
// while the run is the same.
func (s *Server) dashboardPage(r *http.Request, st collect.Study) (templates.DashboardPage, error) {
	ctx := r.Context()
	v := templates.DashboardPage{Study: st, Methods: collect.EmbeddingMethods, JobsEnabled: s.cfg.Jobs != nil,
		Notice: dashboardNotices[r.URL.Query().Get("msg")]}
	ver, err := s.store.DashboardVersion(ctx, st.ID)
	if err != nil {
		return v, err
	}
	v.PeoplePage, _ = strconv.Atoi(r.URL.Query().Get("people"))
	v.PeoplePage = max(1, v.PeoplePage)
	var people []collect.DashboardParticipant
	var total int
	err = s.dash.withTally(ctx, s.store, st.ID, ver.Structure, func(t *dashboard.Tally) error {
		v.Stats, v.Figures = t.Figures(dashboardTimeBuckets, dashboardRTBins)
		var page []dashboard.ParticipantCount
		page, total = t.ParticipantsPage(peoplePageSize, (v.PeoplePage-1)*peoplePageSize)
		if len(page) == 0 {
			return nil
		}
		ids := make([]int64, len(page))
		for i, p := range page {
			ids[i] = p.ID
		}
		rows, err := s.store.DashboardParticipants(ctx, st.ID, ids)
		people = dashboard.WithCounts(page, rows)
		return err
	})
	if err != nil {
		return v, err
	}
	// The clock moves the rate window without any new answer.
	v.Stats.AnswersPerMinute = float64(ver.Recent) / ver.RecentWindow.Minutes()
	v.Figures.Excluded = ver.Excluded
	if v.Settings, err = s.store.RecomputeSettings(ctx, st.ID); err != nil {
		return v, err
	}
	if v.Latest, err = s.store.LatestRun(ctx, st.ID); err != nil {
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
	v.PeoplePages = (total + peoplePageSize - 1) / peoplePageSize
	if s.cfg.Jobs != nil {
		if v.Pending, v.PendingJob, err = s.cfg.Jobs.Pending(ctx, st.ID); err != nil {
			return v, err
		}
	}
	var run *runEntry
	if v.Shown != nil {
		id := v.Shown.ID
		if run, err = s.dash.run(id, func() ([]byte, error) { return s.store.RunResult(ctx, id) }); err != nil {
			return v, err
		}
		if run.res.N != len(items) {
			run = nil // items were added since: the stored coordinates do not fit
		}
	}
	var res *recompute.Result
	if run != nil {
		res = run.res
	}

	views := itemViews(items)
	v.HasImages = len(items) == 0 || views[0].URL != ""
	v.Live = st.Status == collect.StatusOpen || v.Pending != ""
	v.ContradictionShare = "0%"
	if v.Stats.Comparisons > 0 {
		v.ContradictionShare = fmt.Sprintf("%.1f%%", 100*float64(v.Stats.Contradictions)/float64(v.Stats.Comparisons))
	}
	v.MedianResponse = msText(v.Figures.MedianResponseMS)
	v.DesignProgress = fmt.Sprintf("%d questions per participant", st.QuestionsPerParticipant)
	if collect.IsStateful(st.Design) {
		ds, err := s.store.DesignStatusOf(ctx, st)
		if err != nil {
			return v, err
		}
		v.DesignProgress = designProgress(ds)
	}
	v.Plots = s.dashboardPlots(v, views, run, runs)

	// Participants with their quality figures from the last run.
	var quality map[string]recompute.Participant
	if res != nil {
		quality = make(map[string]recompute.Participant, len(res.Participants))
		for _, q := range res.Participants {
			quality[q.PublicID] = q
		}
	}
	v.ParticipantsTotal = total
	for _, p := range people {
		row := templates.QualityRow{PublicID: p.PublicID, ExternalID: p.ExternalID, Answers: p.Answers, Excluded: p.ExcludedAt != nil,
			Median: "–", Fast: "–", Self: "–", Majority: "–", Agreement: "–"}
		if q, ok := quality[p.PublicID]; ok {
			if q.MedianResponseMS != nil {
				row.Median = msText(*q.MedianResponseMS)
			}
			row.Fast, row.Self, row.Majority, row.Agreement = pct(q.FastShare), pct(q.SelfContradiction), pct(q.MajorityDisagreement), pct(q.EmbeddingAgreement)
		}
		v.Participants = append(v.Participants, row)
	}

	// The nearest-neighbour gallery, one page of items.
	if res != nil && len(res.NeighboursKernel) == len(items) {
		v.GalleryPages = (len(items) + galleryPageSize - 1) / galleryPageSize
		v.GalleryPage, _ = strconv.Atoi(r.URL.Query().Get("items"))
		v.GalleryPage = max(1, min(v.GalleryPage, v.GalleryPages))
		for i := (v.GalleryPage - 1) * galleryPageSize; i < min(len(items), v.GalleryPage*galleryPageSize); i++ {
			g := templates.GalleryRow{Item: views[i]}
			for _, j := range res.NeighboursKernel[i] {
				g.ByKernel = append(g.ByKernel, views[j])
			}
			for _, j := range res.NeighboursEmbedding[i] {
				g.ByEmbedding = append(g.ByEmbedding, views[j])
			}
			v.Gallery = append(v.Gallery, g)
		}
	}
	for _, c := range v.Figures.Contradicted {
		if c.Anchor < len(views) && c.J < len(views) && c.K < len(views) {
			v.Contradicted = append(v.Contradicted, templates.ContradictionRow{Anchor: views[c.Anchor], J: views[c.J], K: views[c.K],
				JCloser: c.JCloser, KCloser: c.KCloser})
		}
	}
	return v, nil
}

// designProgress says how far a landmark or basis design got.
func designProgress(ds collect.DesignStatus) string {
	p := ds.Progress
	switch {
	case !ds.Started:
		return "not started"
	case p.Done:
		if p.Basis != nil {
			return fmt.Sprintf("complete; d̂ = %d", p.Basis.DHat)
		}
		return "complete"
	case p.Basis != nil:
		return fmt.Sprintf("%s phase, %d axes so far (d̂ = %d)", p.Basis.Phase, p.Basis.Axes, p.Basis.DHat)
	case p.Landmark != nil:
		return fmt.Sprintf("%d of %d answers (%.0f%%), %d of %d comparisons covered",
			p.Landmark.Answered, p.Landmark.Needed, 100*p.Landmark.Fraction(), p.Landmark.Covered, p.Landmark.Comparisons)
	}
	return "started"
}

// dashboardPlots draws the plots; those of the run's results are drawn once
// per run (run may be nil).
func (s *Server) dashboardPlots(v templates.DashboardPage, views []templates.ItemView, run *runEntry, runs []collect.Run) []templates.Plot {
	raw := func(s string) templ.Component { return templ.Raw(s) }
	var res *recompute.Result
	cached := func(name string, draw func() string) templ.Component {
		return templ.Raw(s.dash.plot(run, name, draw))
	}
	if run != nil {
		res = run.res
	}
	var plots []templates.Plot
	scatter := func(rows [][]float64, thumbs bool) []scatterItem {
		var out []scatterItem
		for i, row := range rows {
			if len(row) == 0 || i >= len(views) {
				continue
			}
			label := views[i].Label
			if label != strconv.Itoa(i) {
				label = fmt.Sprintf("%s (#%d)", label, i)
			}
			it := scatterItem{X: row[0], Label: label, Cluster: -1}
			if len(row) > 1 {
				it.Y = row[1]
			}
			if thumbs {
				it.Image = views[i].URL
			}
			if i < len(res.Clusters) {
				it.Cluster = res.Clusters[i]
			}
			out = append(out, it)
		}
		return out
	}
	if res != nil {
		note := fmt.Sprintf("%s in %d-D", res.Method, res.Dim)
		if res.Dim > 2 {
			note += " (first two dimensions)"
		}
		if res.HeldoutError != nil {
			note += fmt.Sprintf("; held-out error %.1f%% on %d answers", 100**res.HeldoutError, res.Heldout)
		}
		note += "; framed by cluster; scroll to zoom, drag to pan"
		plots = append(plots,
			templates.Plot{ID: "embedding", Title: "Embedding", Note: note, Wide: true,
				SVG: cached("embedding", func() string {
					return scatterSVG(scatter(res.Embedding, true), 880, 560, true, "embedding of the items")
				})},
		)
		if len(res.BasisCoords) == len(views) && len(res.BasisCoords) > 0 && len(res.BasisCoords[0]) > 0 {
			note := "the basis design's own coordinates (first two axes)"
			if res.BasisDHat != nil {
				state := "so far"
				if res.BasisComplete {
					state = "final"
				}
				note = fmt.Sprintf("%s; d̂ = %d (%s)", note, *res.BasisDHat, state)
			}
			plots = append(plots, templates.Plot{ID: "basis", Title: "Basis design", Note: note, Wide: true,
				SVG: cached("basis", func() string {
					return scatterSVG(scatter(res.BasisCoords, true), 880, 480, true, "basis design coordinates")
				})})
		}
		plots = append(plots,
			templates.Plot{ID: "k1pca", Title: "k1 kernel PCA", Note: fmt.Sprintf("coloured by kernel k-means (k = %d)", res.K),
				SVG: cached("k1pca", func() string { return scatterSVG(scatter(res.K1PCA, false), 430, 340, true, "k1 kernel PCA") })},
			templates.Plot{ID: "k2pca", Title: "k2 kernel PCA", Note: "same colours",
				SVG: cached("k2pca", func() string { return scatterSVG(scatter(res.K2PCA, false), 430, 340, true, "k2 kernel PCA") })})
	}
	// Learning curve over the finished runs.
	var held, train series
	held.Class, held.Legend = "s1", "held-out error"
	train.Class, train.Legend = "s2", "training error"
	for _, r := range runs {
		if r.Status != collect.RunDone || r.HeldoutError == nil {
			continue
		}
		held.X, held.Y = append(held.X, float64(r.Answers)), append(held.Y, *r.HeldoutError)
		train.X, train.Y = append(train.X, float64(r.Answers)), append(train.Y, deref(r.TrainError))
	}
	plots = append(plots, templates.Plot{ID: "learning", Title: "Learning curve", Note: "triplet error of each recompute's embedding",
		SVG: raw(lineSVG([]series{held, train}, 430, 300, "answers used", "triplet error", true, "held-out error versus answers"))})
	// Answers over time.
	f := v.Figures
	timeNote, timeSVG := "", barsSVG(nil, 0, 1, fmtTick, 430, 300, "", "", "answers over time")
	if f.First != nil {
		span := f.Last.Sub(*f.First)
		step := math.Max(span.Seconds(), 1) / float64(len(f.AnswersOverTime))
		d := time.Duration(step * float64(time.Second))
		for _, unit := range []time.Duration{time.Hour, time.Minute, time.Second, time.Millisecond} {
			if d >= 10*unit || unit == time.Millisecond {
				d = d.Round(unit)
				break
			}
		}
		timeNote = fmt.Sprintf("per %s, UTC", d)
		timeSVG = barsSVG(f.AnswersOverTime, float64(f.First.Unix()), step, timeFmt(span), 430, 300, "", "answers", "answers over time")
	}
	plots = append(plots, templates.Plot{ID: "answers", Title: "Answers over time", Note: timeNote, SVG: raw(timeSVG)})
	plots = append(plots, templates.Plot{ID: "response", Title: "Response times", Note: "the last bar holds the slowest 5% and beyond",
		SVG: raw(barsSVG(f.ResponseHist, 0, f.ResponseBinMS/1000, func(x float64) string { return fmtTick(x) + " s" }, 430, 300, "seconds", "answers", "response-time histogram"))})
	if res != nil {
		var cuts []float64
		n := len(res.HeatmapOrder)
		for a := 1; a < n; a++ {
			if res.Clusters[res.HeatmapOrder[a]] != res.Clusters[res.HeatmapOrder[a-1]] {
				cuts = append(cuts, float64(a)/float64(n))
			}
		}
		note := "items in cluster order"
		if len(res.Heatmap) < n {
			note += fmt.Sprintf(", averaged over blocks of about %d", (n+len(res.Heatmap)-1)/len(res.Heatmap))
		}
		plots = append(plots, templates.Plot{ID: "heatmap", Title: "k1 kernel matrix", Note: note,
			SVG: cached("heatmap", func() string { return heatmapSVG(res.Heatmap, cuts, 330, "kernel heat map") })})
		merges := make([]dendroMerge, len(res.Dendrogram))
		for i, m := range res.Dendrogram {
			merges[i] = dendroMerge{m.A, m.B, m.Height}
		}
		labels := make([]string, len(views))
		for i, it := range views {
			labels[i] = it.Label
		}
		plots = append(plots, templates.Plot{ID: "dendrogram", Title: "Dendrogram", Note: "complete linkage on the k1 kernel distance; leaves coloured by cluster", Wide: true,
			SVG: cached("dendrogram", func() string { return dendrogramSVG(len(views), merges, labels, res.Clusters, 880, 320, "dendrogram") })})
	}
	return plots
}

func deref(x *float64) float64 {
	if x == nil {
		return math.NaN()
	}
	return *x
}

// dashboard is a study's results dashboard (GET /admin/studies/{slug}/dashboard).
func (s *Server) dashboard(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	v, err := s.dashboardPage(r, st)
	if err != nil {
		return err
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
	stats, err := s.dash.stats(ctx, s.store, st.ID, ver.Structure)
	if err != nil {
		return err
	}
	latest, err := s.store.LatestRun(ctx, st.ID)
	if err != nil {
		return err
	}
	pending, job := "", int64(0)
	if s.cfg.Jobs != nil {
		if pending, job, err = s.cfg.Jobs.Pending(ctx, st.ID); err != nil {
			return err
		}
	}
	v := templates.DashboardPage{Latest: latest, Pending: pending, PendingJob: job, JobsEnabled: s.cfg.Jobs != nil}
	out := map[string]any{"status": st.Status, "answers": stats.Answers, "participants": stats.Participants,
		"pending": pending, "state": templates.RunState(v), "live": st.Status == collect.StatusOpen || pending != ""}
	if latest != nil {
		out["latest_run"] = map[string]any{"id": latest.ID, "status": latest.Status, "stage": latest.Stage, "answers": latest.Answers}
		if latest.Status == collect.RunDone {
			out["done_run"] = latest.ID
		}
	}
	return writeJSON(w, http.StatusOK, out)
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
	in := collect.RecomputeSettings{MinNewAnswers: int(minNew), MaxAge: time.Duration(age * float64(time.Minute)),
		Method: r.PostFormValue("method"), Dim: int(dim), Clusters: int(k)}
	if !(ok1 && ok2 && ok3 && ok4) {
		err = &httpError{status: http.StatusUnprocessableEntity, msg: "every setting needs a number"}
	} else {
		err = s.store.SetRecomputeSettings(r.Context(), st.ID, in)
	}
	if err != nil {
		status, msg := classify(err)
		if status >= 500 {
			return err
		}
		v, perr := s.dashboardPage(r, st)
		if perr != nil {
			return perr
		}
		v.Error, v.Settings = msg, in
		return s.render(w, r, status, templates.DashboardShowPage(v))
	}
	return s.toDashboard(w, r, st.Slug, "saved", "#settings")
}
