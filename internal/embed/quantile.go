package embed

import (
	"math"
	"slices"
)

// Percentiles returns the (1−level)/2 and (1+level)/2 quantiles of v (NaNs
// left out), by linear interpolation between order statistics (type 7 of
// Hyndman and Fan 1996, R's default): the bootstrap percentile interval
// (Efron and Tibshirani 1993, ch. 13). NaN for no values.
func Percentiles(v []float64, level float64) (lo, hi float64) {
	s := SortedNumbers(v)
	if len(s) == 0 {
		return math.NaN(), math.NaN()
	}
	return Quantile(s, (1-level)/2), Quantile(s, (1+level)/2)
}

// SortedNumbers returns the values of v that are not NaN, sorted (+Inf
// last).
func SortedNumbers(v []float64) []float64 {
	s := make([]float64, 0, len(v))
	for _, x := range v {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	slices.Sort(s)
	return s
}

// Quantile returns the p-quantile of the sorted values s (type 7). Next
// to an equal or an +Inf neighbour it returns the order statistic itself,
// so that +Inf values (a learning curve's answers that no number of
// answers reaches) give +Inf or a finite end, never NaN.
func Quantile(s []float64, p float64) float64 {
	h := p * float64(len(s)-1)
	i := int(math.Floor(h))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	if i < 0 {
		return s[0]
	}
	if s[i+1] == s[i] || math.IsInf(s[i+1], 1) && h == float64(i) {
		return s[i]
	}
	return s[i] + (h-float64(i))*(s[i+1]-s[i])
}
