// Package format writes the numbers the pages and messages show: shares as
// percentages and counts with thousands separators, each quantity in one
// way wherever it appears. It imports nothing of the module.
package format

import (
	"math"
	"strconv"
)

// Percent writes the share x (0.256 for 25.6%) as a percentage with
// decimals fixed digits after the point: Percent(0.256, 0) = "26%",
// Percent(0.1, 1) = "10.0%".
func Percent(x float64, decimals int) string {
	return strconv.FormatFloat(100*x, 'f', decimals, 64) + "%"
}

// PercentCompact writes the share x as a percentage rounded to one decimal,
// the decimal left out when it is zero: "12.5%", "50%". The shares a
// researcher sets (an arm's, the held-out questions') and the errors the
// arms are compared on read this way.
func PercentCompact(x float64) string {
	return compact(x) + "%"
}

// PercentagePoints writes a difference of shares in percentage points,
// rounded as PercentCompact rounds: "1 percentage point", "2.5 percentage
// points".
func PercentagePoints(x float64) string {
	p := compact(x)
	if p == "1" {
		return "1 percentage point"
	}
	return p + " percentage points"
}

// compact is 100x rounded to one decimal, without a zero decimal.
func compact(x float64) string {
	return strconv.FormatFloat(math.Round(x*1000)/10, 'f', -1, 64)
}

// PercentOf writes part of whole as a whole percentage rounded down and at
// most 100, so that progress reads 100% only when it is complete; "0%" for
// a whole of 0 or less.
func PercentOf(part, whole int) string {
	if whole <= 0 {
		return "0%"
	}
	return strconv.Itoa(min(100, part*100/whole)) + "%"
}

// PercentOfFixed writes part of whole as a percentage with decimals fixed
// digits after the point, from 100·part/whole rounded once: 23 of 80 is
// "28.8%" (28.75 exactly, rounded half to even); "0%" for a whole of 0
// or less.
func PercentOfFixed(part, whole, decimals int) string {
	if whole <= 0 {
		return "0%"
	}
	return strconv.FormatFloat(100*float64(part)/float64(whole), 'f', decimals, 64) + "%"
}

// PercentNumber writes the share x as a whole number of percent, without
// the sign: the value of a form field that asks for a percentage ("15"
// for 0.15).
func PercentNumber(x float64) string {
	return strconv.Itoa(int(math.Round(x * 100)))
}

// Thousands writes n with a comma between groups of three digits:
// "1,234,567", "-1,000".
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
