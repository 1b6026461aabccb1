package web

import (
	"reflect"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
)

// TestParseArms: the arms field's lines (comments and empty lines
// skipped, shares as numbers or percentages, settings as key=value) read
// as the arms they say; every refusal names its line and says why; the
// text of stored arms reads back as the same arms.
func TestParseArms(t *testing.T) {
	t.Parallel()
	f, err := parseArms("# two designs\n\nsmart  active 50%  warmup=5 score=infogain model=ckl candidates=200 pool=30 repeats=2 seed=9\r\nplain random 0.5\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []study.Arm{
		{Name: "smart", Design: study.DesignActive, Share: 0.5,
			Config: study.DesignConfig{Seed: 9, Repeats: 2, Warmup: 5, Score: "infogain", Model: "ckl", Candidates: 200, Pool: 30}},
		{Name: "plain", Design: study.DesignRandom, Share: 0.5},
	}
	if !reflect.DeepEqual(f.arms, want) || !reflect.DeepEqual(f.lines, []int{3, 4}) {
		t.Fatalf("arms %+v at lines %v", f.arms, f.lines)
	}
	f, err = parseArms("lm landmark-k1 0.3 landmarks=4\nlm2 landmark-k2 0.2 landmark-items=0,3,5 repeats=3\nb basis 0.5 extra=yes coordinates=median")
	if err != nil {
		t.Fatal(err)
	}
	if c := f.arms[1].Config; !reflect.DeepEqual(c.LandmarkItems, []int{0, 3, 5}) || c.Repeats != 3 || !f.arms[2].Config.Extra ||
		f.arms[2].Config.Coordinates != "median" || f.arms[0].Config.Landmarks != 4 {
		t.Fatalf("arms %+v", f.arms)
	}
	back, err := parseArms(armsText(f.arms))
	if err != nil || !reflect.DeepEqual(back.arms, f.arms) {
		t.Fatalf("%q read back as %+v, %v", armsText(f.arms), back.arms, err)
	}
	if f, err := parseArms(" \n# nothing\n"); err != nil || f.arms != nil {
		t.Fatalf("an empty field: %+v, %v", f.arms, err)
	}
	nine := ""
	for i := range 9 {
		nine += string(rune('a'+i)) + " random 0.1\n"
	}
	for _, c := range []struct{ text, msg string }{
		{"a random", `Arms, line 1: write an arm as: name design share [setting=value ...], for example "smart active 0.5 warmup=5"`},
		{"a random 0.5\nB random 0.5", `Arms, line 2: the name "B" must be 1 to 32 lower-case letters, digits and dashes`},
		{"a random 0.5\n\na random 0.5", `Arms, line 3: the name "a" is taken by line 1`},
		{"a randm 0.5", `Arms, line 1: unknown design "randm" (random, landmark-k1, landmark-k2, basis or active)`},
		{"a random half", `Arms, line 1: the share "half" is not a number above 0 (for example 0.5 or 50%)`},
		{"a random -0.5", `Arms, line 1: the share "-0.5" is not a number above 0 (for example 0.5 or 50%)`},
		{"a active 0.5 size=3", `Arms, line 1: unknown setting "size" (the settings are landmarks, landmark-items, repeats, seed, extra, coordinates, warmup, score, model, candidates, pool)`},
		{"a random 0.5 landmarks=3", `Arms, line 1: landmarks does not apply to the random design (it takes seed)`},
		{"a basis 0.5 warmup=3", `Arms, line 1: warmup does not apply to the basis design (it takes seed, repeats, extra, coordinates)`},
		{"a active 0.5 pool", `Arms, line 1: give pool a value, as pool=…`},
		{"a active 0.5 pool=3 pool=4", `Arms, line 1: pool is given twice`},
		{"a active 0.5 pool=many", `Arms, line 1: pool: "many" is not a whole number`},
		{"a basis 0.5 extra=maybe", `Arms, line 1: extra: "maybe": write yes or no`},
		{"a landmark-k1 0.5 landmark-items=1, 2", `Arms, line 1: landmark-items: "1," is not a list of item numbers separated by commas (no spaces)`},
		{"a landmark-k1 0.5 landmark-items=1;2", `Arms, line 1: landmark-items: "1;2" is not a list of item numbers separated by commas (no spaces)`},
		{nine, `Arms, line 9: a study runs at most 8 arms`},
	} {
		_, err := parseArms(c.text)
		if err == nil || err.Error() != c.msg || collect.KindOf(err) != study.KindInvalid {
			t.Errorf("%q: %v, want %q", c.text, err, c.msg)
		}
	}
}

// TestHeldoutField: the held-out share is typed in percent, 0 to 50, and
// a stored share shows as the percentage that reads back as it.
func TestHeldoutField(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]float64{"": 0, "0": 0, "10": 0.1, " 12.5 % ": 0.125, "50": 0.5} {
		if got, err := parseHeldout(text); err != nil || got != want {
			t.Errorf("%q: %g, %v; want %g", text, got, err, want)
		}
	}
	for _, text := range []string{"60", "-1", "ten", "NaN"} {
		if _, err := parseHeldout(text); err == nil || err.Error() != "the held-out questions must be between 0 and 50 % of each participant's questions" {
			t.Errorf("%q: %v", text, err)
		}
	}
	for _, share := range []float64{0, 0.1, 0.07, 0.2, 0.125, 0.5} {
		if got, err := parseHeldout(heldoutText(share)); err != nil || got != share {
			t.Errorf("%g shown as %q reads back as %g, %v", share, heldoutText(share), got, err)
		}
	}
}
