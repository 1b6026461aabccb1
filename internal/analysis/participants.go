// Package analysis turns a study's answers into what its dashboard shows:
// per-participant quality figures, nearest neighbours, and the recompute
// pipeline that runs the kernels and the embedding. Pure Go: the store
// loads the answers, the recompute job saves the results.
package analysis

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
)

// Answer is one stored answer as the analysis needs it.
type Answer struct {
	Participant int // an index 0..p-1 chosen by the caller
	Triplet     triplet.Triplet
	ResponseMS  int  // negative when unknown
	Side        Side // which option was chosen, where it was shown
}

// Side is where the chosen option was shown on the question page.
type Side int

// The sides; SideUnknown for answers without their question's layout.
const (
	SideUnknown Side = iota
	SideLeft
	SideRight
)

// Quality holds one participant's figures. Rates are NaN where they are
// undefined (no answer to judge), so "0%" always means measured.
type Quality struct {
	Participant int
	Answers     int
	// MedianResponseMS over the answers with a known response time (NaN if none).
	MedianResponseMS float64
	// FastShare is the share of answers faster than the threshold.
	FastShare float64
	// SelfContradiction is the share of the questions this participant
	// answered more than once where they gave both answers.
	SelfContradiction float64
	// MajorityDisagreement is the share of this participant's answers, on
	// questions where the other participants have a strict majority, that
	// go against that majority (leave-one-participant-out).
	MajorityDisagreement float64
	// EmbeddingAgreement is the share of this participant's answers that the
	// given embedding satisfies (NaN without an embedding).
	EmbeddingAgreement float64
	// LeftShare is the share of the answers with a known side that chose
	// the left option: near 0.5 for someone who looks, near 0 or 1 for
	// someone who always presses the same key (NaN without sides).
	LeftShare float64
}

// ParticipantQuality computes the figures of every participant 0..p-1 that
// gave at least one answer, in participant order. fastMS is the "very fast
// answer" threshold in milliseconds; x is the current embedding or nil.
func ParticipantQuality(answers []Answer, fastMS int, x *mat.Dense) []Quality {
	p := 0
	for _, a := range answers {
		p = max(p, a.Participant+1)
	}
	all := triplet.NewVotes()
	for _, a := range answers {
		all.Add(a.Triplet)
	}
	byP := make([][]Answer, p)
	for _, a := range answers {
		byP[a.Participant] = append(byP[a.Participant], a)
	}
	var out []Quality
	for pid, as := range byP {
		if len(as) == 0 {
			continue
		}
		q := Quality{Participant: pid, Answers: len(as)}

		var times []float64
		fast := 0
		for _, a := range as {
			if a.ResponseMS >= 0 {
				times = append(times, float64(a.ResponseMS))
				if a.ResponseMS < fastMS {
					fast++
				}
			}
		}
		left, sided := 0, 0
		for _, a := range as {
			if a.Side != SideUnknown {
				sided++
				if a.Side == SideLeft {
					left++
				}
			}
		}
		q.LeftShare = ratio(left, sided)
		q.MedianResponseMS = median(times)
		q.FastShare = math.NaN()
		if len(times) > 0 {
			q.FastShare = float64(fast) / float64(len(times))
		}

		own := triplet.NewVotes()
		for _, a := range as {
			own.Add(a.Triplet)
		}
		repeated, contradicted := 0, 0
		for _, k := range own.Keys() {
			c := own.Get(k)
			if c.Total() > 1 {
				repeated++
				if c.Contradicted() {
					contradicted++
				}
			}
		}
		q.SelfContradiction = ratio(contradicted, repeated)

		judged, against := 0, 0
		for _, a := range as {
			k := triplet.KeyOf(a.Triplet)
			mine, total := own.Get(k), all.Get(k)
			others := triplet.Counts{JCloser: total.JCloser - mine.JCloser, KCloser: total.KCloser - mine.KCloser}
			if others.JCloser == others.KCloser {
				continue
			}
			judged++
			majorityJ := others.JCloser > others.KCloser
			if (a.Triplet.Closer == k.J) != majorityJ {
				against++
			}
		}
		q.MajorityDisagreement = ratio(against, judged)

		q.EmbeddingAgreement = math.NaN()
		if x != nil {
			ts := make([]triplet.Triplet, len(as))
			for i, a := range as {
				ts[i] = a.Triplet
			}
			q.EmbeddingAgreement = 1 - embed.TripletError(x, ts)
		}
		out = append(out, q)
	}
	return out
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// median returns the median of v (NaN for none); v is reordered.
func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	m := len(v) / 2
	if len(v)%2 == 1 {
		return v[m]
	}
	return (v[m-1] + v[m]) / 2
}
