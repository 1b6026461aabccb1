package static

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The text colours of style.css against the backgrounds they are drawn on
// pass WCAG 2.1 AA: a contrast ratio of at least 4.5:1 for body text
// (success criterion 1.4.3). The pairs are the ones the annotator and
// researcher pages use; a colour changed in style.css is checked here.
func TestTextContrastPassesWCAGAA(t *testing.T) {
	t.Parallel()
	css, err := FS.ReadFile("style.css")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, m := range regexp.MustCompile(`(--[a-z-]+):\s*(#[0-9a-fA-F]{6})`).FindAllStringSubmatch(string(css), -1) {
		vars[m[1]] = m[2]
	}
	color := func(v string) string {
		t.Helper()
		if strings.HasPrefix(v, "--") {
			c, ok := vars[v]
			if !ok {
				t.Fatalf("style.css defines no %s", v)
			}
			return c
		}
		if !strings.Contains(string(css), v) {
			t.Fatalf("style.css no longer uses %s: update this test", v)
		}
		return v
	}
	for _, p := range []struct{ what, fg, bg string }{
		{"text on the page", "--fg", "--bg"},
		{"text on cards and option buttons", "--fg", "--card"},
		{"muted text (progress, hints, key labels) on the page", "--muted", "--bg"},
		{"muted text on cards", "--muted", "--card"},
		{"links on the page", "--accent", "--bg"},
		{"links on cards", "--accent", "--card"},
		{"primary buttons", "#fff", "--accent"},
		{"primary buttons, hovered", "#fff", "--accent-dark"},
		{"errors", "--danger", "#fdecea"},
		{"rejected files on the page", "--danger", "--bg"},
		{"status: open", "#146c2e", "#dcf5e4"},
		{"status: paused", "#8a5a00", "#fff2d6"},
		{"status: closed", "#666", "#f1f1f1"},
		{"the studies list's full badge", "--danger", "#fde4e1"},
		{"placeholders (muted) in fields", "--muted", "#ffffff"},
		{"read-only fields (muted)", "--muted", "#eef0f3"},
	} {
		r := contrast(t, color(p.fg), color(p.bg))
		if r < 4.5 {
			t.Errorf("%s: %s on %s has contrast %.2f:1, below WCAG AA's 4.5:1", p.what, p.fg, p.bg, r)
		}
	}
}

// The arms' learning curves on the dashboard (dashboard.css, classes a0
// to a7) are drawn in colours of at least 3:1 against the card they sit
// on (WCAG 2.1 success criterion 1.4.11, non-text contrast), each arm in
// a colour of its own (the dashes tell neighbours apart without colour).
func TestArmCurveColoursContrast(t *testing.T) {
	t.Parallel()
	css, err := FS.ReadFile("dashboard.css")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`svg\.plot \.a([0-9]) \{ stroke: (#[0-9A-Fa-f]{6}); fill: #[0-9A-Fa-f]{6};( stroke-dasharray: ([0-9 ]+);)? \}`)
	ms := re.FindAllStringSubmatch(string(css), -1)
	if len(ms) != 8 {
		t.Fatalf("dashboard.css styles %d arm curves, want a0 to a7", len(ms))
	}
	seen := map[string]bool{}
	for i, m := range ms {
		if m[1] != strconv.Itoa(i) {
			t.Fatalf("arm class a%s where a%d was expected", m[1], i)
		}
		if r := contrast(t, m[2], "#ffffff"); r < 3 {
			t.Errorf("arm %d: %s on the white card has contrast %.2f:1, below 3:1", i, m[2], r)
		}
		if seen[strings.ToLower(m[2])] {
			t.Errorf("arm %d: colour %s used twice", i, m[2])
		}
		seen[strings.ToLower(m[2])] = true
	}
}

// The question page's progress bar: its fill against its track, and its
// edge against the page and a card, at least 3:1 (WCAG 2.1 success
// criterion 1.4.11, non-text contrast), so that the bar and how far it has
// filled can be seen.
func TestProgressBarContrast(t *testing.T) {
	t.Parallel()
	css, err := FS.ReadFile("style.css")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, m := range regexp.MustCompile(`(--[a-z-]+):\s*(#[0-9a-fA-F]{6})`).FindAllStringSubmatch(string(css), -1) {
		vars[m[1]] = m[2]
	}
	for _, rule := range []string{"background: var(--progress-track)", "border: 1px solid var(--muted)",
		"::-webkit-progress-value { background: var(--accent)", "::-moz-progress-bar { background: var(--accent)"} {
		if !strings.Contains(string(css), rule) {
			t.Fatalf("style.css's progress bar no longer has %q: update this test", rule)
		}
	}
	for _, p := range []struct{ what, fg, bg string }{
		{"the fill on the track", "--accent", "--progress-track"},
		{"the edge on the page", "--muted", "--bg"},
		{"the edge on a card", "--muted", "--card"},
	} {
		if r := contrast(t, vars[p.fg], vars[p.bg]); r < 3 {
			t.Errorf("%s: %s on %s has contrast %.2f:1, below 3:1", p.what, p.fg, p.bg, r)
		}
	}
}

// contrast is WCAG 2.1's contrast ratio (L1 + 0.05) / (L2 + 0.05) of two
// #rgb or #rrggbb colours.
func contrast(t *testing.T, a, b string) float64 {
	la, lb := luminance(t, a), luminance(t, b)
	return (math.Max(la, lb) + 0.05) / (math.Min(la, lb) + 0.05)
}

// luminance is WCAG 2.1's relative luminance of an sRGB colour.
func luminance(t *testing.T, hex string) float64 {
	h := strings.TrimPrefix(hex, "#")
	if len(h) == 3 {
		h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
	}
	if len(h) != 6 {
		t.Fatalf("colour %q", hex)
	}
	var l float64
	for i, w := range []float64{0.2126, 0.7152, 0.0722} {
		v, err := strconv.ParseUint(h[2*i:2*i+2], 16, 8)
		if err != nil {
			t.Fatalf("colour %q: %v", hex, err)
		}
		c := float64(v) / 255
		if c <= 0.04045 {
			c /= 12.92
		} else {
			c = math.Pow((c+0.055)/1.055, 2.4)
		}
		l += w * c
	}
	return l
}

// The formula against values published with WCAG: black on white is 21:1,
// and #777 on white is 4.48:1 (the grey often quoted as just failing AA).
func TestContrastFormula(t *testing.T) {
	t.Parallel()
	if r := contrast(t, "#000", "#fff"); math.Abs(r-21) > 1e-9 {
		t.Errorf("black on white %.4f, want 21", r)
	}
	if r := contrast(t, "#777777", "#ffffff"); math.Abs(r-4.48) > 0.005 {
		t.Errorf("#777 on white %.4f, want 4.48", r)
	}
}
