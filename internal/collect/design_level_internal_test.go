package collect

import "testing"

// TestLevelFor checks the cap a spreading arm's claims use for a crowd of
// a given size (capLevel): one lease per comparison while the leases out
// leave a fifth of the pool free, and just enough more once they do not.
func TestLevelFor(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rows, leases int64
		want         int
	}{
		{0, 0, 1},       // no pool yet
		{0, 10, 1},      // a covered design
		{2508, 0, 1},    // landmark-k1, 40 items, 12 landmarks: nobody there
		{2508, 400, 1},  // 200 annotators with a question open and one ahead
		{2508, 2006, 1}, // 80% of the comparisons on lease
		{2508, 2007, 2}, // just past it
		{2508, 3000, 2}, // 1,500 annotators
		{2508, 4100, 3}, // 2,050 annotators
		{12, 40, 5},     // TestCrowdSpreadsLeasesPastOnePerComparison's crowd
	} {
		if got := levelFor(c.rows, c.leases); got != c.want {
			t.Errorf("levelFor(%d rows, %d leases) = %d, want %d", c.rows, c.leases, got, c.want)
		}
	}
}
