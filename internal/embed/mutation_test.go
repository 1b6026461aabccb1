package embed

import (
	"math"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/triplet"
)

// Tests written for the mutants that survived a mutation-testing run on this
// package (docs/mutation/embed.md).

// TestParseMethodEveryName: every method's name parses to that method and
// nothing else, and a name that is not one of them (another case, empty, a
// start's name) is an error listing the six names in their order. The
// names are those of the constants in embed.go, written out here by hand.
// `closer embed -method` and the recompute form call ParseMethod directly;
// Fit would still refuse an unknown method through its missing parameters.
func TestParseMethodEveryName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		want Method
	}{
		{"tste", TSTE}, {"ste", STE}, {"gnmds", GNMDS}, {"ckl", CKL}, {"soe", SOE}, {"dmoe", DMOE},
	} {
		if got, err := ParseMethod(c.name); err != nil || got != c.want {
			t.Errorf("ParseMethod(%q) = %q, %v; want %q, nil", c.name, got, err, c.want)
		}
	}
	for _, bad := range []string{"TSTE", "", "mds", "t-ste"} {
		got, err := ParseMethod(bad)
		if err == nil {
			t.Errorf("ParseMethod(%q) = %q, nil; want an error", bad, got)
			continue
		}
		if got != "" {
			t.Errorf("ParseMethod(%q) returned %q with its error; want \"\"", bad, got)
		}
		if want := "tste, ste, gnmds, ckl, soe, dmoe"; !strings.Contains(err.Error(), want) {
			t.Errorf("ParseMethod(%q): error %q does not list %q", bad, err, want)
		}
	}
}

// TestMDSStartByHand checks StartMDS on three items and one triplet against
// a hand computation of its definition (the comment on StartMDS): every pair
// starts at squared distance 1 and moves by ½ per net vote, D²_ij = 1 −
// E_ij/2; the start is classical MDS of D², rescaled to coordinates of root
// mean square InitScale, plus 1 % noise.
//
// Triplet (2; 0 closer, 1 farther): E_02 = +1, E_12 = −1, E_01 = 0, so
// D²_01 = 1, D²_02 = ½, D²_12 = 3/2. As D²_01 + D²_02 = D²_12 these are the
// squared sides of a right triangle (right angle at item 0), a Euclidean
// configuration of rank 2 that classical MDS recovers exactly for Dim ≥ 2.
// Centred, its squared norm is Σ_i ‖x_i − x̄‖² = (1/n)·Σ_{i<j} D²_ij = 1, so
// the rescaling to root mean square 1 over n·Dim coordinates multiplies the
// squared distances by n·Dim: (6, 3, 9) for Dim = 2 and (9, 4.5, 13.5) for
// Dim = 3 (the third eigenvalue is 0, so the third column is only noise).
// Triplet (0; 1 closer, 2 farther) mirrors it: D² = (½, 3/2, 1) for the
// pairs (0,1), (0,2), (1,2).
//
// The noise, N(0, 0.01²) per coordinate at InitScale 1, moves a distance by
// about 0.014; the tolerance 0.1 is 7 of those. The anchor 2 is the largest
// index of its triplet, so its votes land in the upper triangle, the half
// of the symmetric matrix the decomposition reads, through the second line
// of vote (raw[j*n+i]); anchor 0 uses the first line. Dim = n = 3 is
// allowed: only dim above n falls back to the random start.
func TestMDSStartByHand(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		tr   triplet.Triplet
		dim  int
		want [3]float64 // squared distances of pairs (0,1), (0,2), (1,2)
	}{
		{"anchor 2, Dim 2", triplet.Triplet{Anchor: 2, Closer: 0, Farther: 1}, 2, [3]float64{6, 3, 9}},
		{"anchor 0, Dim 2", triplet.Triplet{Anchor: 0, Closer: 1, Farther: 2}, 2, [3]float64{3, 9, 6}},
		{"anchor 2, Dim = n = 3", triplet.Triplet{Anchor: 2, Closer: 0, Farther: 1}, 3, [3]float64{9, 4.5, 13.5}},
	} {
		opt := Options{Method: GNMDS, Dim: c.dim, Start: StartMDS, InitScale: 1}.withDefaults()
		x := initialPoints(3, []triplet.Triplet{c.tr}, opt, 7)
		dist := func(i, j int) float64 {
			var s float64
			for k := range c.dim {
				d := x[i*c.dim+k] - x[j*c.dim+k]
				s += d * d
			}
			return math.Sqrt(s)
		}
		for p, ij := range [3][2]int{{0, 1}, {0, 2}, {1, 2}} {
			got, want := dist(ij[0], ij[1]), math.Sqrt(c.want[p])
			if math.Abs(got-want) > 0.1 {
				t.Errorf("%s: distance %d–%d is %.4f, want %.4f (squared %g)", c.name, ij[0], ij[1], got, want, c.want[p])
			}
		}
		// Classical MDS centres the points (up to the noise).
		for k := range c.dim {
			m := (x[k] + x[c.dim+k] + x[2*c.dim+k]) / 3
			if math.Abs(m) > 0.05 {
				t.Errorf("%s: column %d has mean %.4f, want ≈ 0", c.name, k, m)
			}
		}
	}
}
