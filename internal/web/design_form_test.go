package web

import (
	"net/url"
	"slices"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
)

// TestResolvePicksAndBack: picks by label, by index, separated by commas,
// semicolons, new lines or spaces, resolve to the items they name; the
// labels shown on the edit form read back as the same picks, with an index
// where a label holds a separator.
func TestResolvePicksAndBack(t *testing.T) {
	t.Parallel()
	labels := []string{"cat", "big dog", "a,b", "7", "twin", "twin"}
	for _, c := range []struct {
		text string
		want []int
		err  string
	}{
		{"cat, big dog", []int{0, 1}, ""},
		{"cat;2\n3", []int{0, 2, 3}, ""},
		{"cat 1", []int{0, 1}, ""},
		{"7", []int{3}, ""}, // the label "7" wins over index 7
		{"twin", nil, `the label "twin" names 2 items; pick them by index`},
		{"4, 5", []int{4, 5}, ""},
		{"cat, 0", nil, `landmark "0" is picked twice`},
		{"6", nil, `unknown landmark "6": not an item label nor an index 0..5`},
		{"-1", nil, `unknown landmark "-1": not an item label nor an index 0..5`},
	} {
		t.Run(c.text, func(t *testing.T) {
			t.Parallel()
			got, err := resolvePicks(c.text, labels)
			if c.err != "" {
				if err == nil || err.Error() != c.err || collect.KindOf(err) != study.KindInvalid {
					t.Fatalf("error %v, want KindInvalid %q", err, c.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("%v, %v; want %v", got, err, c.want)
			}
			back, err := resolvePicks(pickedLabels(got, labels), labels)
			if err != nil || !slices.Equal(back, got) {
				t.Errorf("shown as %q, read back as %v, %v", pickedLabels(got, labels), back, err)
			}
		})
	}
	if got := pickedLabels([]int{2, 0, 9}, labels); got != "2, cat, 9" {
		t.Errorf("pickedLabels = %q, want the index for a label with a comma and for a missing item", got)
	}
}

// TestParseDesignForm: numbers are read, and every field that is not a
// whole number is named at once.
func TestParseDesignForm(t *testing.T) {
	t.Parallel()
	d := parseDesignForm(url.Values{"seed": {" 42 "}, "repeats": {"3"}, "landmarks": {"5"}, "landmark_picks": {" a, b "},
		"extra": {"yes"}, "coordinates": {"median"}})
	want := study.DesignConfig{Seed: 42, Repeats: 3, Landmarks: 5, Extra: true, Coordinates: "median"}
	if d.problem != "" || d.picks != "a, b" || d.config.Seed != want.Seed || d.config.Repeats != want.Repeats ||
		d.config.Landmarks != want.Landmarks || d.config.Extra != want.Extra || d.config.Coordinates != want.Coordinates {
		t.Errorf("parsed %+v", d)
	}
	d = parseDesignForm(url.Values{"seed": {"x"}, "repeats": {"1.5"}, "landmarks": {"many"}})
	if want := "the seed must be a whole number (or empty to draw one); repeats must be a whole number; the number of landmarks must be a whole number"; d.problem != want {
		t.Errorf("problem %q, want %q", d.problem, want)
	}
}
