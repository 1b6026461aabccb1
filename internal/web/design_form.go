package web

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// designForm is the design part of the study form as typed: the settings
// that are numbers, the landmark picks as text, and what could not be read.
type designForm struct {
	config study.DesignConfig
	// picks is landmark_picks: item labels or indices separated by commas
	// (or spaces, semicolons, new lines).
	picks string
	// problem names the fields that are not whole numbers ("" if none).
	problem string
	// arms and heldout are the arms and heldout_pct fields as typed
	// (arms_form.go reads them); a form without the field (a script's
	// post) keeps a study's arms or share (armsGiven, heldoutGiven false).
	arms, heldout           string
	armsGiven, heldoutGiven bool
	// rows are the arms table as typed (arms_table.go; rowsGiven false
	// when the form has none, rowsErr when it has too many rows), and
	// armsShown the arms the form showed, as the arms field's text
	// (arms_shown; chooseArms compares both inputs against it).
	rows      []templates.ArmInput
	rowsGiven bool
	rowsErr   error
	armsShown string
}

// parseDesignForm reads the design settings of the study form (fields seed,
// repeats, landmarks, landmark_picks, extra, coordinates; the active
// design's warmup, score, model, candidates, pool; the arms and the
// held-out share as typed).
func parseDesignForm(f url.Values) designForm {
	d := designForm{
		config: study.DesignConfig{
			Extra:       f.Get("extra") != "",
			Coordinates: strings.TrimSpace(f.Get("coordinates")),
			Score:       strings.TrimSpace(f.Get("score")),
			Model:       strings.TrimSpace(f.Get("model")),
		},
		picks:   strings.TrimSpace(f.Get("landmark_picks")),
		arms:    f.Get("arms"),
		heldout: strings.TrimSpace(f.Get("heldout_pct")),
	}
	_, d.armsGiven = f["arms"]
	d.rows, d.rowsGiven, d.rowsErr = armRows(f)
	d.armsShown = f.Get("arms_shown")
	_, d.heldoutGiven = f["heldout_pct"]
	var bad []string
	if v := strings.TrimSpace(f.Get("seed")); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			bad = append(bad, "the seed must be a whole number (or empty to draw one)")
		}
		d.config.Seed = seed
	}
	num := func(name, what string) int {
		v := strings.TrimSpace(f.Get(name))
		if v == "" {
			return 0
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			bad = append(bad, what+" must be a whole number")
		}
		return n
	}
	d.config.Repeats = num("repeats", "repeats")
	d.config.Landmarks = num("landmarks", "the number of landmarks")
	d.config.Warmup = num("warmup", "the warm-up")
	d.config.Candidates = num("candidates", "the candidates per item")
	d.config.Pool = num("pool", "the pool size")
	d.problem = strings.Join(bad, "; ")
	return d
}

// designConfig turns the form into the settings the store checks and
// saves: picked landmarks become item indices by the study's labels
// (studyID 0 is a study being created, which has no items yet). A field
// that is not a number or a pick that names no item is a KindInvalid
// error for the form.
func (s *Server) designConfig(ctx context.Context, studyID int64, design string, d designForm) (study.DesignConfig, error) {
	if d.problem != "" {
		return d.config, invalidForm("%s", d.problem)
	}
	c := d.config
	if d.picks == "" || !isLandmarkDesign(design) {
		return c, nil
	}
	var labels []string
	if studyID != 0 {
		items, err := s.store.ListItems(ctx, studyID)
		if err != nil {
			return c, err
		}
		for _, it := range items {
			labels = append(labels, it.Label)
		}
	}
	if len(labels) == 0 {
		return c, invalidForm("upload the items before picking landmarks by label or index (or give a number of landmarks to draw at random)")
	}
	items, err := resolvePicks(d.picks, labels)
	if err != nil {
		return c, err
	}
	c.LandmarkItems, c.Landmarks = items, 0
	return c, nil
}

func isLandmarkDesign(design string) bool {
	return design == study.DesignLandmarkK1 || design == study.DesignLandmarkK2
}

// invalidForm is an error the form shows (a collect.KindInvalid error, as
// the store's own checks are).
func invalidForm(format string, args ...any) error {
	return &study.Error{Kind: study.KindInvalid, Msg: fmt.Sprintf(format, args...)}
}

// resolvePicks turns "label, label, 7" into item indices: each token is an
// item's label (exact; it must name one item) or else an index 0..n-1.
func resolvePicks(text string, labels []string) ([]int, error) {
	byLabel := map[string][]int{}
	for i, l := range labels {
		byLabel[l] = append(byLabel[l], i)
	}
	fields := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ';' || r == '\n' || r == '\r' || r == '\t' })
	var toks []string
	for _, f := range fields {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if _, ok := byLabel[f]; ok {
			toks = append(toks, f)
			continue
		}
		// Not a label: allow space-separated labels and indices too.
		toks = append(toks, strings.Fields(f)...)
	}
	seen := map[int]bool{}
	var out []int
	for _, tok := range toks {
		var idx int
		if ids := byLabel[tok]; len(ids) == 1 {
			idx = ids[0]
		} else if len(ids) > 1 {
			return nil, invalidForm("the label %q names %d items; pick them by index", tok, len(ids))
		} else if v, err := strconv.Atoi(tok); err == nil && v >= 0 && v < len(labels) {
			idx = v
		} else {
			return nil, invalidForm("unknown landmark %q: not an item label nor an index 0..%d", tok, len(labels)-1)
		}
		if seen[idx] {
			return nil, invalidForm("landmark %q is picked twice", tok)
		}
		seen[idx] = true
		out = append(out, idx)
	}
	return out, nil
}

// pickedLabels is the landmark_picks text of a study's picked landmarks:
// their labels, or the index where a label would not read back as the same
// one pick (it holds a separator, another item has it too, or the item is
// gone).
func pickedLabels(items []int, labels []string) string {
	count := map[string]int{}
	for _, l := range labels {
		count[l]++
	}
	picks := make([]string, len(items))
	for i, idx := range items {
		if idx >= 0 && idx < len(labels) && count[labels[idx]] == 1 && !strings.ContainsAny(labels[idx], ",;\n\r\t") {
			picks[i] = labels[idx]
		} else {
			picks[i] = strconv.Itoa(idx)
		}
	}
	return strings.Join(picks, ", ")
}
