package web

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
)

// The study form's arms field (issue 16): one arm a line,
//
//	name design share [setting=value ...]
//
// e.g. "smart active 0.5 warmup=5 pool=40" and "plain random 0.5". The
// share is a number (0.5) or a percentage (50%); the settings are the
// design's, as on the form: landmarks, landmark-items (item numbers
// separated by commas), repeats, seed, extra (yes or no), coordinates
// (rank-difference or median), warmup, score, model, candidates, pool.
// Empty lines and lines starting with # are skipped. An empty field is a
// study of one design (the design field's).

// maxArmsText bounds the arms field.
const maxArmsText = 10_000

// armsForm is the arms field (or the arms table) as read: the arms and
// the line (the table's row) of each.
type armsForm struct {
	arms  []study.Arm
	lines []int
	// table says that the arms came from the table: its refusals name a
	// row, not a line.
	table bool
}

// armSettings lists the settings each design takes (seed: every design,
// so that a stored random arm's seed reads back).
var armSettings = map[string][]string{
	study.DesignRandom:     {"seed"},
	study.DesignLandmarkK1: {"seed", "repeats", "landmarks", "landmark-items"},
	study.DesignLandmarkK2: {"seed", "repeats", "landmarks", "landmark-items"},
	study.DesignBasis:      {"seed", "repeats", "extra", "coordinates"},
	study.DesignActive:     {"seed", "repeats", "warmup", "score", "model", "candidates", "pool"},
}

var allArmSettings = []string{"landmarks", "landmark-items", "repeats", "seed", "extra", "coordinates", "warmup", "score", "model", "candidates", "pool"}

// armName is the store's rule for an arm's name (collect.checkArms), checked
// here too so that the message can name the line.
var armName = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)

// armsErr is a refusal of the arms field naming its line (0: the field).
func armsErr(line int, format string, args ...any) error {
	return armsForm{}.errAt(line, format, args...)
}

// errAt is a refusal naming the line of the arms field, or the row of
// the arms table (0: the arms as a whole).
func (f armsForm) errAt(line int, format string, args ...any) error {
	switch {
	case line == 0:
		return invalidForm("Arms: "+format, args...)
	case f.table:
		return invalidForm("Arms table, row %d: "+format, append([]any{line}, args...)...)
	}
	return invalidForm("Arms, line %d: "+format, append([]any{line}, args...)...)
}

// parseArms reads the arms field. It checks what the lines say (their
// form, names, designs, settings and numbers, at most collect.MaxArms
// arms); the store checks the rest (at least two arms, shares summing to
// 1, the settings against the items), and armsStoreErr names the line
// of its refusals.
func parseArms(text string) (armsForm, error) {
	var f armsForm
	if len(text) > maxArmsText {
		return f, armsErr(0, "the list is too long")
	}
	seen := map[string]int{}
	for i, raw := range strings.Split(text, "\n") {
		fields := strings.Fields(raw)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) < 3 {
			if len(f.arms) == study.MaxArms {
				return f, armsErr(i+1, "a study runs at most %d arms", study.MaxArms)
			}
			return f, armsErr(i+1, "write an arm as: name design share [setting=value ...], for example \"smart active 0.5 warmup=5\"")
		}
		if err := f.add(i+1, fields[0], fields[1], fields[2], fields[3:], seen); err != nil {
			return f, err
		}
	}
	return f, nil
}

// add reads one arm (its name, design, share and settings as typed) at
// line; seen holds the names taken and their lines.
func (f *armsForm) add(line int, name, design, shareText string, settings []string, seen map[string]int) error {
	if len(f.arms) == study.MaxArms {
		return f.errAt(line, "a study runs at most %d arms", study.MaxArms)
	}
	place := "line"
	if f.table {
		place = "row"
	}
	a := study.Arm{Name: name, Design: strings.ToLower(design)}
	if !armName.MatchString(a.Name) {
		return f.errAt(line, "the name %q must be 1 to 32 lower-case letters, digits and dashes", a.Name)
	}
	if at, ok := seen[a.Name]; ok {
		return f.errAt(line, "the name %q is taken by %s %d", a.Name, place, at)
	}
	seen[a.Name] = line
	allowed, ok := armSettings[a.Design]
	if !ok {
		return f.errAt(line, "unknown design %q (random, landmark-k1, landmark-k2, basis or active)", design)
	}
	share, err := parseShare(shareText)
	if err != nil {
		return f.errAt(line, "the share %q is not a number above 0 (for example 0.5 or 50%%)", shareText)
	}
	a.Share = share
	given := map[string]bool{}
	for _, kv := range settings {
		key, value, found := strings.Cut(kv, "=")
		key = strings.ToLower(key)
		switch {
		case !slices.Contains(allArmSettings, key):
			return f.errAt(line, "unknown setting %q (the settings are %s)", key, strings.Join(allArmSettings, ", "))
		case !slices.Contains(allowed, key):
			return f.errAt(line, "%s does not apply to the %s design (it takes %s)", key, a.Design, strings.Join(allowed, ", "))
		case !found || value == "":
			return f.errAt(line, "give %s a value, as %s=…", key, key)
		case given[key]:
			return f.errAt(line, "%s is given twice", key)
		}
		given[key] = true
		if err := setArmSetting(&a.Config, key, value); err != nil {
			return f.errAt(line, "%s: %v", key, err)
		}
	}
	f.arms = append(f.arms, a)
	f.lines = append(f.lines, line)
	return nil
}

// parseShare reads "0.5" or "50%".
func parseShare(s string) (float64, error) {
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return 0, errors.New("not a share")
	}
	if pct {
		v /= 100
	}
	return v, nil
}

// setArmSetting sets one setting of an arm.
func setArmSetting(c *study.DesignConfig, key, value string) error {
	whole := func() (int, error) {
		n, err := strconv.Atoi(value)
		if err != nil {
			return 0, fmt.Errorf("%q is not a whole number", value)
		}
		return n, nil
	}
	var err error
	switch key {
	case "seed":
		if c.Seed, err = strconv.ParseUint(value, 10, 64); err != nil {
			return fmt.Errorf("%q is not a whole number", value)
		}
	case "repeats":
		c.Repeats, err = whole()
	case "landmarks":
		c.Landmarks, err = whole()
	case "landmark-items":
		for _, p := range strings.Split(value, ",") {
			idx, perr := strconv.Atoi(p)
			if perr != nil {
				return fmt.Errorf("%q is not a list of item numbers separated by commas (no spaces)", value)
			}
			c.LandmarkItems = append(c.LandmarkItems, idx)
		}
	case "extra":
		switch strings.ToLower(value) {
		case "yes", "on", "true", "1":
			c.Extra = true
		case "no", "off", "false", "0":
			c.Extra = false
		default:
			return fmt.Errorf("%q: write yes or no", value)
		}
	case "coordinates":
		c.Coordinates = strings.ToLower(value)
	case "warmup":
		c.Warmup, err = whole()
	case "score":
		c.Score = strings.ToLower(value)
	case "model":
		c.Model = strings.ToLower(value)
	case "candidates":
		c.Candidates, err = whole()
	case "pool":
		c.Pool, err = whole()
	}
	return err
}

// armsStoreErr names the line of the arm a store refusal names ("arm
// NAME: ..."), or the field for the others about the arms.
func (f armsForm) armsStoreErr(err error) error {
	e, ok := collect.AsError(err)
	if !ok || e.Kind != study.KindInvalid {
		return err
	}
	for i, a := range f.arms {
		if rest, ok := strings.CutPrefix(e.Msg, "arm "+a.Name+": "); ok {
			return f.errAt(f.lines[i], "arm %s: %s", a.Name, rest)
		}
	}
	if strings.Contains(e.Msg, "arms") {
		return f.errAt(0, "%s", e.Msg)
	}
	return err
}

// armsText is the arms field of stored arms: one line an arm, with every
// setting the arm has (so that saving the form again changes nothing).
func armsText(arms []study.Arm) string {
	var b strings.Builder
	for _, a := range arms {
		fmt.Fprintf(&b, "%s %s %s", a.Name, a.Design, shareText(a.Share))
		if set := armSettingsText(a); set != "" {
			b.WriteString(" " + set)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// shareText is an arm's share as the form shows it.
func shareText(share float64) string { return strconv.FormatFloat(share, 'g', -1, 64) }

// armSettingsText is every setting arm a has, as setting=value separated
// by spaces: the arms field's line after the share, the arms table's
// settings cell.
func armSettingsText(a study.Arm) string {
	var out []string
	c := a.Config
	set := func(key string, v any) { out = append(out, fmt.Sprintf("%s=%v", key, v)) }
	if c.Seed != 0 {
		set("seed", c.Seed)
	}
	if c.Repeats != 0 && a.Design != study.DesignRandom {
		set("repeats", c.Repeats)
	}
	if c.Landmarks != 0 {
		set("landmarks", c.Landmarks)
	}
	if len(c.LandmarkItems) > 0 {
		items := make([]string, len(c.LandmarkItems))
		for i, idx := range c.LandmarkItems {
			items[i] = strconv.Itoa(idx)
		}
		set("landmark-items", strings.Join(items, ","))
	}
	if a.Design == study.DesignBasis {
		set("extra", map[bool]string{true: "yes", false: "no"}[c.Extra])
	}
	if c.Coordinates != "" {
		set("coordinates", c.Coordinates)
	}
	if c.Warmup != 0 {
		set("warmup", c.Warmup)
	}
	if c.Score != "" {
		set("score", c.Score)
	}
	if c.Model != "" {
		set("model", c.Model)
	}
	if c.Candidates != 0 {
		set("candidates", c.Candidates)
	}
	if c.Pool != 0 {
		set("pool", c.Pool)
	}
	return strings.Join(out, " ")
}

// heldoutText is the held-out share field of a stored share: a percentage.
func heldoutText(share float64) string {
	return strconv.FormatFloat(math.Round(share*100*1e6)/1e6, 'f', -1, 64)
}

// parseHeldout reads the held-out share field (a percentage, 0 to 50).
func parseHeldout(text string) (float64, error) {
	text = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(text), "%"))
	if text == "" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(v) || v < 0 || v > 100*study.MaxHeldoutShare {
		return 0, invalidForm("the held-out questions must be between 0 and %g %% of each participant's questions", 100*study.MaxHeldoutShare)
	}
	return v / 100, nil
}
