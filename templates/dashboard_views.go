package templates

import (
	"time"

	"github.com/a-h/templ"

	"github.com/closer-lab/closer/internal/dashboard"
	"github.com/closer-lab/closer/internal/study"
)

// DashboardPage is a study's results dashboard.
type DashboardPage struct {
	// Can says which actions the viewer's role allows (the buttons and
	// forms shown).
	Can      Can
	Study    study.Study
	Stats    study.Stats
	Figures  dashboard.Figures
	Settings study.RecomputeSettings
	Methods  []string
	// RecomputeState: the latest run and the pending job.
	RecomputeState
	// Shown is the finished run whose results the page shows.
	Shown     *study.Run
	HasImages bool
	// Live pages refresh themselves (the study is open or a run is pending).
	Live   bool
	Notice string
	Error  string

	// Skipped counts the study's "can't decide" answers (shown where the
	// study offers the button or has such answers).
	Skipped int
	// Overview figures, already formatted.
	ContradictionShare string
	MedianResponse     string
	// DesignName and DesignProgress are the overview's design figure.
	DesignName     string
	DesignProgress string
	// Arms is the "Designs compared" section of a study with arms or a
	// held-out share (nil for the others).
	Arms *ArmsView
	// Trust is the shown run's dimension choice, uncertainty and
	// projection (nil without them; dashboard_results_views.go).
	Trust *TrustView

	Plots        []Plot
	Participants []QualityRow
	// FastMS is the threshold of the participants' "very fast" share: the
	// shown run's, or (no run) the one the next run will use.
	FastMS            int
	ParticipantsTotal int
	PeoplePage        int
	PeoplePages       int
	Gallery           []GalleryRow
	GalleryPage       int
	GalleryPages      int
	Contradicted      []ContradictionRow
}

// ArmsView is the dashboard's "Designs compared" section: the arms'
// learning curves on the study's held-out answers and a table of the arms.
type ArmsView struct {
	// Curve is the learning curves' SVG.
	Curve templ.Component
	// HeldoutPct is the study's held-out share as a percentage.
	HeldoutPct string
	// Summary says in words how the arms compare (or why they cannot yet).
	Summary string
	Rows    []ArmRow
	// Active reports an active arm (the table's pool columns).
	Active bool
	// Common heads the column of the arms' errors at the most answers
	// every arm reached (the sentence's numbers; "" before a comparison).
	Common string
}

// ArmRow is one arm's line of the table, its figures formatted.
type ArmRow struct {
	// Class is the arm's curve class (a0..a7), for its swatch.
	Class, Name, Design, Share string
	// Participants and answers (not held out) the latest run fitted
	// (excluded participants left out; before the arm's first fit, those
	// assigned and given now), and held-out answers its participants gave.
	Participants, Answers, Heldout int
	// AtCommon is the arm's error at ArmsView.Common answers ("–": none).
	AtCommon string
	// Error is the latest run's held-out error ("–" without one),
	// ErrorNote and ErrorTitle how it was measured (briefly, in full).
	Error, ErrorNote, ErrorTitle string
	// Warmup, Refreshes and PoolLeft describe an active arm ("" for the
	// others).
	Warmup, Refreshes, PoolLeft string
}

// Plot is one server-rendered SVG plot.
type Plot struct {
	ID    string
	Title string
	Note  string
	SVG   templ.Component
	Wide  bool
}

// ItemView is an item with its thumbnail URL ("" for label-only items).
type ItemView struct {
	Index int
	Label string
	URL   string // an image's
	Text  string // a text item's (issue 29): shown in place of a thumbnail
	Sound string // a sound's URL (issue 29): its label, a link that plays it
	Video string // a video's URL (issue 29): its label, a link that plays it
}

// Shown is what stands for the item where there is no thumbnail: a text
// item's text, else its label.
func (it ItemView) Shown() string {
	if it.Text != "" {
		return it.Text
	}
	return it.Label
}

// QualityRow is one participant's line in the dashboard.
type QualityRow struct {
	PublicID   string
	ExternalID string
	Answers    int
	Excluded   bool
	Median     string
	Fast       string
	Self       string
	Majority   string
	Agreement  string
	Left       string
	// Catch and Consistent are the shares of catch trials right and of
	// repeat trials answered the same way ("–" without any); Skipped
	// counts "can't decide".
	Catch, Consistent string
	Skipped           int
	// Arm is the participant's arm's name ("–" in a study without arms),
	// Code their completion code ("" until they finish) and Reason why
	// they are excluded ("" when they are not).
	Arm, Code, Reason string
}

// GalleryRow is an item with its nearest neighbours.
type GalleryRow struct {
	Item        ItemView
	ByKernel    []ItemView
	ByEmbedding []ItemView
	// Stability is, per embedding neighbour, the share of bootstrap
	// replicates it stays among the item's nearest (nil without them).
	Stability []string
}

// ContradictionRow is a comparison answered both ways.
type ContradictionRow struct {
	Anchor, J, K     ItemView
	JCloser, KCloser int
}

func runID(r *study.Run) string {
	if r == nil {
		return "0"
	}
	return itoa(int(r.ID))
}

func lastRun(r *study.Run) string {
	if r == nil || r.FinishedAt == nil {
		return "never"
	}
	return r.FinishedAt.UTC().Format("15:04 UTC")
}

func runNote(r *study.Run) string {
	if r == nil || r.FinishedAt == nil {
		return "no results yet"
	}
	return r.FinishedAt.UTC().Format("2006-01-02") + "; took " + r.Duration.Round(10*time.Millisecond).String() + " on " + itoa(r.Answers) + " answers"
}

// RecomputeState is what the dashboard and its status JSON say about a
// study's recompute.
type RecomputeState struct {
	Latest      *study.Run // the most recent run (any status)
	Pending     string     // the queued or running job's state, or ""
	PendingJob  int64      // and its id
	JobsEnabled bool
	// Newer counts the answers stored after the latest run read the
	// study's answers (when it is done): the figures leave them out.
	Newer int
	// ExclusionsChanged says that participants were excluded or included
	// again since the latest run (when it is done) read the answers: the
	// figures use the earlier exclusions.
	ExclusionsChanged bool
}

// RunState describes the job: queued, running (with its stage), or how the
// latest run ended.
func RunState(v RecomputeState) string {
	l := v.Latest
	// A job whose run row is already there (finished: River is marking the
	// job done) is not pending any more.
	pending := v.Pending != "" && (l == nil || l.JobID != v.PendingJob)
	switch {
	case l != nil && l.Status == study.RunRunning && l.JobID != 0 && v.JobsEnabled && v.Pending == "":
		return "The last recompute was interrupted (its worker stopped before it finished)."
	case l != nil && l.Status == study.RunRunning:
		stage := l.Stage
		if stage == "" {
			stage = "loading answers"
		}
		return "Recomputing on " + itoa(l.Answers) + " answers: " + stage + " (started " + when(&l.StartedAt) + ")."
	case pending && v.Pending == "running":
		return "A recompute is starting (loading the answers)."
	case pending:
		return "A recompute is queued."
	case l == nil:
		return "Not recomputed yet."
	case l.Status == study.RunFailed:
		return "The last recompute failed: " + l.Error
	case l.Status == study.RunCancelled:
		return "The last recompute was cancelled."
	}
	if v.ExclusionsChanged {
		out := "The exclusions changed since the last recompute (" + when(l.FinishedAt) + "): the figures below use the earlier exclusions."
		if v.Newer > 0 {
			out += " " + plural(v.Newer, "answer is", "answers are") + " newer as well; the figures leave them out."
		}
		return out
	}
	if v.Newer > 0 {
		return plural(v.Newer, "answer is", "answers are") + " newer than the last recompute (" + when(l.FinishedAt) + "); the figures below leave them out."
	}
	return "Up to date: the figures include every answer (recomputed " + when(l.FinishedAt) + ")."
}

// plural writes n with the singular or plural phrase ("1 answer is", "3
// answers are").
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return itoa(n) + " " + many
}

// SectionLink is one entry of the dashboard's table of contents: the id of
// a section (or of a plot, Sub) and its name.
type SectionLink struct {
	ID, Title string
	Sub       bool
}

// DashboardSections lists the dashboard's sections in page order, each
// plot among them, for the table of contents.
func DashboardSections(v DashboardPage) []SectionLink {
	out := []SectionLink{{ID: "overview", Title: "Overview"}, {ID: "recompute", Title: "Recompute"}}
	if v.Arms != nil {
		out = append(out, SectionLink{ID: "designs", Title: "Designs compared"})
	}
	if len(v.Plots) > 0 {
		out = append(out, SectionLink{ID: "plots", Title: "Plots:"})
		for _, p := range v.Plots {
			out = append(out, SectionLink{ID: p.ID, Title: p.Title, Sub: true})
		}
	}
	out = append(out, SectionLink{ID: "participants", Title: "Participants"}, SectionLink{ID: "neighbours", Title: "Neighbours"},
		SectionLink{ID: "contradicted", Title: "Contradicted"}, SectionLink{ID: "exports", Title: "Exports"})
	if v.Can.Do("POST /admin/studies/{slug}/dashboard/settings") {
		out = append(out, SectionLink{ID: "settings", Title: "Settings"})
	}
	return out
}
