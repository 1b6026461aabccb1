package format_test

import (
	"math"
	"testing"

	"github.com/closer-lab/closer/internal/format"
)

func TestFormat(t *testing.T) {
	t.Parallel()
	// Expected strings by hand from each function's rule.
	for _, c := range []struct{ name, got, want string }{
		{"percent whole", format.Percent(0.256, 0), "26%"},
		{"percent whole rounds down", format.Percent(0.254, 0), "25%"},
		{"percent one decimal", format.Percent(0.1, 1), "10.0%"},
		{"percent one decimal of 1/8", format.Percent(0.125, 1), "12.5%"},
		{"percent of 3 in 2954", format.Percent(3.0/2954, 1), "0.1%"},
		{"percent zero", format.Percent(0, 0), "0%"},
		{"percent above one", format.Percent(1.5, 0), "150%"},

		{"compact whole", format.PercentCompact(0.5), "50%"},
		{"compact one decimal", format.PercentCompact(0.125), "12.5%"},
		{"compact rounds to one decimal", format.PercentCompact(0.12345), "12.3%"},
		{"compact rounds up", format.PercentCompact(0.19999), "20%"},
		{"compact zero", format.PercentCompact(0), "0%"},
		{"compact small", format.PercentCompact(0.0004), "0%"},

		{"one point", format.PercentagePoints(0.01), "1 percentage point"},
		{"points", format.PercentagePoints(0.025), "2.5 percentage points"},
		{"points of nothing", format.PercentagePoints(0), "0 percentage points"},
		{"points near 1", format.PercentagePoints(0.0104), "1 percentage point"},

		{"of: 1 in 3 rounds down", format.PercentOf(1, 3), "33%"},
		{"of: 199 in 200 is not done", format.PercentOf(199, 200), "99%"},
		{"of: all", format.PercentOf(90, 90), "100%"},
		{"of: more than all", format.PercentOf(120, 100), "100%"},
		{"of: none", format.PercentOf(0, 90), "0%"},
		{"of: an empty whole", format.PercentOf(5, 0), "0%"},

		// 100 × 3 / 2954 = 0.1016
		{"of fixed: 3 in 2954", format.PercentOfFixed(3, 2954, 1), "0.1%"},
		{"of fixed: 1 in 8", format.PercentOfFixed(1, 8, 1), "12.5%"},
		// 28.75 is exact; half to even. As a share first (23 / 80 × 100)
		// it would be 28.749… and read 28.7%.
		{"of fixed: 23 in 80", format.PercentOfFixed(23, 80, 1), "28.8%"},
		{"of fixed: 49 in 80", format.PercentOfFixed(49, 80, 1), "61.2%"},
		{"of fixed: whole", format.PercentOfFixed(7, 7, 0), "100%"},
		{"of fixed: an empty whole", format.PercentOfFixed(0, 0, 1), "0%"},

		{"number", format.PercentNumber(0.15), "15"},
		{"number rounds", format.PercentNumber(0.555), "56"},
		{"number zero", format.PercentNumber(0), "0"},
		{"number one", format.PercentNumber(1), "100"},

		{"thousands small", format.Thousands(999), "999"},
		{"thousands", format.Thousands(1000), "1,000"},
		{"thousands million", format.Thousands(1234567), "1,234,567"},
		{"thousands zero", format.Thousands(0), "0"},
		{"thousands negative", format.Thousands(-1000), "-1,000"},
		{"thousands negative small", format.Thousands(-100), "-100"},
		{"thousands negative million", format.Thousands(-123456789), "-123,456,789"},
		{"thousands max", format.Thousands(math.MaxInt64), "9,223,372,036,854,775,807"},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
	}
}
