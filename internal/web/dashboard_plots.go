package web

import (
	"fmt"
	"math"

	"github.com/a-h/templ"

	"github.com/closer-lab/closer/internal/analysis"
	"github.com/closer-lab/closer/internal/dashboard"
	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/plot"
	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// dashboardPlots assembles the dashboard's plots, in the page's order: the
// run's results (run may be nil; their SVG is drawn once per run and
// cached), the learning curve over the finished runs, and the answers'
// figures.
//
// With u, the embedding's items carry their bootstrap ellipses.
func (s *Server) dashboardPlots(f dashboard.Figures, views []templates.ItemView, run *runEntry, runs []study.Run, u *analysis.Uncertainty) []templates.Plot {
	cached := func(name string, draw func() string) templ.Component {
		return templ.Raw(s.dash.plot(run, name, draw))
	}
	var plots []templates.Plot
	if run != nil {
		plots = append(plots, resultPlots(run.res, views, cached, u)...)
	}
	plots = append(plots, learningPlot(runs), answersPlot(f), responsePlot(f))
	if run != nil {
		plots = append(plots, clusterPlots(run.res, views, cached)...)
	}
	return plots
}

// drawFunc returns a plot's SVG, drawing it with draw unless cached.
type drawFunc func(name string, draw func() string) templ.Component

// resultPlots are the embedding, the basis design's coordinates (for a
// basis study) and the two kernel PCAs.
func resultPlots(res *recompute.Result, views []templates.ItemView, cached drawFunc, u *analysis.Uncertainty) []templates.Plot {
	note := embeddingNote(res)
	if u != nil {
		note += fmt.Sprintf("; ellipses: where %d bootstrap refits put each item (90%%)", u.Reps)
	}
	plots := []templates.Plot{{ID: "embedding", Title: "Embedding", Note: note, Wide: true,
		SVG: cached("embedding", func() string {
			pts := scatterItems(res.Embedding, views, res.Clusters, true)
			if u != nil && len(pts) == len(u.Cov) {
				for i := range pts {
					pts[i].Cov, pts[i].Spread = u.Cov[i], true
				}
			}
			opt := scatterAxes(res.Embedding, "dimension", "(unit: the map's root-mean-square radius)", res.K, "frame")
			if u != nil && len(pts) == len(u.Cov) {
				opt.Legend = append(opt.Legend, plot.LegendEntry{Color: "#888", Text: "90% of refits", Kind: "ellipse"})
			}
			return plot.ScatterWith(pts, 880, 560, true, "embedding of the items", opt)
		})}}
	if len(res.BasisCoords) == len(views) && len(res.BasisCoords) > 0 && len(res.BasisCoords[0]) > 0 {
		plots = append(plots, templates.Plot{ID: "basis", Title: "Basis design", Note: basisNote(res), Wide: true,
			SVG: cached("basis", func() string {
				return plot.ScatterWith(scatterItems(res.BasisCoords, views, res.Clusters, true), 880, 480, true, "basis design coordinates",
					scatterAxes(res.BasisCoords, "basis coordinate", "", res.K, "frame"))
			})})
	}
	return append(plots,
		templates.Plot{ID: "k1pca", Title: "k1 kernel PCA", Note: fmt.Sprintf("coloured by kernel k-means (k = %d)", res.K),
			SVG: cached("k1pca", func() string {
				return plot.ScatterWith(scatterItems(res.K1PCA, views, res.Clusters, false), 430, 340, true, "k1 kernel PCA",
					scatterAxes(res.K1PCA, "k1 principal component", "", res.K, "dot"))
			})},
		templates.Plot{ID: "k2pca", Title: "k2 kernel PCA", Note: "same colours",
			SVG: cached("k2pca", func() string {
				return plot.ScatterWith(scatterItems(res.K2PCA, views, res.Clusters, false), 430, 340, true, "k2 kernel PCA",
					scatterAxes(res.K2PCA, "k2 principal component", "", res.K, "dot"))
			})})
}

// scatterAxes are a scatter plot's axis labels ("dimension 1 (unit: …)",
// "dimension 2"; none for a second axis the rows lack), its legend of the
// k clusters' colours (dots or frames) and the robust view.
func scatterAxes(rows [][]float64, axis, unit string, k int, kind string) plot.ScatterOptions {
	opt := plot.ScatterOptions{XLabel: axis + " 1", Robust: true, Legend: plot.ClusterLegend(k, kind)}
	if unit != "" {
		opt.XLabel += " " + unit
	}
	if len(rows) > 0 && len(rows[0]) > 1 {
		opt.YLabel = axis + " 2"
	} else {
		opt.XLabel += "; one dimension, drawn on a line"
	}
	return opt
}

// scatterItems are the points of rows (an item's coordinates, the first
// two drawn) with their labels, clusters and, with thumbs, thumbnails;
// rows without coordinates or item are left out.
func scatterItems(rows [][]float64, views []templates.ItemView, clusters []int, thumbs bool) []plot.Point {
	var out []plot.Point
	for i, row := range rows {
		if len(row) == 0 || i >= len(views) {
			continue
		}
		// A text item is labelled by its text (cut as labels are).
		it := plot.Point{X: row[0], Label: pointLabel(media.TextLabel(views[i].Shown()), i), Cluster: -1}
		if len(row) > 1 {
			it.Y = row[1]
		}
		if thumbs {
			it.Image = views[i].URL
		}
		if i < len(clusters) {
			it.Cluster = clusters[i]
		}
		out = append(out, it)
	}
	return out
}

// learningPlot is the held-out and training error of each finished run
// against its answers, the held-out error with its 95% Wilson interval on
// the run's held-out answers (the arms' curves' method; a run stored
// before their number was kept has no interval, NaN leaves it out).
func learningPlot(runs []study.Run) templates.Plot {
	held := plot.Series{Class: "s1", Legend: "held-out error"}
	train := plot.Series{Class: "s2", Legend: "training error"}
	banded := false
	for _, r := range runs {
		if r.Status != study.RunDone || r.HeldoutError == nil {
			continue
		}
		held.X, held.Y = append(held.X, float64(r.Answers)), append(held.Y, *r.HeldoutError)
		train.X, train.Y = append(train.X, float64(r.Answers)), append(train.Y, deref(r.TrainError))
		lo, hi := math.NaN(), math.NaN()
		if n := r.HeldoutAnswers; n != nil && *n > 0 {
			lo, hi = dashboard.Wilson(int(math.Round(*r.HeldoutError*float64(*n))), *n, dashboard.Z95)
			banded = true
		}
		held.Low, held.High = append(held.Low, lo), append(held.High, hi)
	}
	if banded {
		held.Legend = "held-out error (95% interval)"
	} else {
		held.Low, held.High = nil, nil
	}
	return templates.Plot{ID: "learning", Title: "Learning curve", Note: "triplet error of each recompute's embedding; the shaded band is the 95% Wilson interval of the held-out error on that run's held-out answers",
		SVG: templ.Raw(plot.Lines([]plot.Series{held, train}, 430, 300, "answers used", "triplet error (share wrong)", true, "held-out error versus answers"))}
}

// answersPlot is the answers in equal intervals over the collection's span.
func answersPlot(f dashboard.Figures) templates.Plot {
	p := templates.Plot{ID: "answers", Title: "Answers over time",
		SVG: templ.Raw(plot.Bars(nil, 0, 1, plot.Tick, 430, 300, "", "", "answers over time"))}
	if f.First != nil {
		span := f.Last.Sub(*f.First)
		step := math.Max(span.Seconds(), 1) / float64(len(f.AnswersOverTime))
		p.Note = intervalNote(step)
		p.SVG = templ.Raw(plot.Bars(f.AnswersOverTime, float64(f.First.Unix()), step, plot.TimeFormat(span), 430, 300, "time (UTC)", "answers", "answers over time"))
	}
	return p
}

// responsePlot is the response-time histogram.
func responsePlot(f dashboard.Figures) templates.Plot {
	return templates.Plot{ID: "response", Title: "Response times", Note: "the last bar holds the slowest 5% and beyond",
		SVG: templ.Raw(plot.Bars(f.ResponseHist, 0, f.ResponseBinMS/1000, func(x float64) string { return plot.Tick(x) + " s" },
			430, 300, "response time (seconds)", "answers", "response-time histogram"))}
}

// clusterPlots are the k1 kernel's heat map in cluster order and the
// dendrogram.
func clusterPlots(res *recompute.Result, views []templates.ItemView, cached drawFunc) []templates.Plot {
	var cuts []float64
	n := len(res.HeatmapOrder)
	for a := 1; a < n; a++ {
		if res.Clusters[res.HeatmapOrder[a]] != res.Clusters[res.HeatmapOrder[a-1]] {
			cuts = append(cuts, float64(a)/float64(n))
		}
	}
	merges := make([]plot.Merge, len(res.Dendrogram))
	for i, m := range res.Dendrogram {
		merges[i] = plot.Merge{A: m.A, B: m.B, Height: m.Height}
	}
	labels := make([]string, len(views))
	for i, it := range views {
		labels[i] = it.Label
	}
	return []templates.Plot{
		{ID: "heatmap", Title: "k1 kernel matrix", Note: heatmapNote(n, len(res.Heatmap)),
			SVG: cached("heatmap", func() string { return plot.Heatmap(res.Heatmap, cuts, 330, "kernel heat map") })},
		{ID: "dendrogram", Title: "Dendrogram", Note: "complete linkage on the k1 kernel distance; leaves coloured by cluster", Wide: true,
			SVG: cached("dendrogram", func() string {
				return plot.Dendrogram(len(views), merges, labels, res.Clusters, 880, 320, "dendrogram")
			})},
	}
}
