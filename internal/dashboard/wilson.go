package dashboard

import "math"

// Z95 is the standard normal quantile of a two-sided 95% interval.
const Z95 = 1.959963984540054

// Wilson returns the Wilson score interval of a share: wrong of n
// held-out answers, at the normal quantile z (Wilson 1927; Brown, Cai and
// DasGupta 2001 recommend it over the normal approximation, which gives
// an empty interval at 0 wrong). It stays within [0, 1]; n ≤ 0 gives
// [0, 1].
func Wilson(wrong, n int, z float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	nn := float64(n)
	p := float64(wrong) / nn
	z2 := z * z
	mid := (p + z2/(2*nn)) / (1 + z2/nn)
	half := z / (1 + z2/nn) * math.Sqrt(p*(1-p)/nn+z2/(4*nn*nn))
	return math.Max(0, mid-half), math.Min(1, mid+half)
}
