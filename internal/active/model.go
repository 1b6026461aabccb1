// Package active is the active question design: after a warm-up of random
// questions, each question is chosen because its answer is expected to
// teach the most about the current embedding. It has two parts:
//
//   - the scorer (Pool, Scorer): a pure function from a fitted embedding and
//     the answers so far to the best questions for a set of heads (anchors),
//     scored by expected information gain (Tamuz et al. 2011, "Adaptively
//     learning the crowd kernel", the rule Salmon uses) or by uncertainty
//     (the answer probability closest to 1/2);
//   - the Design, a design.Design state machine that asks random questions
//     during the warm-up and afterwards serves the pool of scored questions
//     of its last Refresh, heads taken round robin.
//
// Scoring never runs while a participant waits: the web app's worker (and
// the simulator, in its place) fits the embedding, calls Refresh with it,
// and requests take the best unasked question from the pool.
package active

import (
	"fmt"
	"math"
)

// Model is the answer model: the probability that an annotator says b is
// closer to a than c, given the points.
type Model string

const (
	// TSTE is t-STE's answer probability (van der Maaten and Weinberger
	// 2012, sec. 4, eq. for p_ijl with the Student-t kernel):
	//
	//	p(b ≺ c | a) = q(d_ab) / (q(d_ab) + q(d_ac)),  q(d) = (1 + d/α)^{−(α+1)/2}
	//
	// on squared distances d, α the degrees of freedom.
	TSTE Model = "tste"
	// CKL is the crowd-kernel answer probability (Tamuz et al. 2011,
	// the relative-similarity model):
	//
	//	p(b ≺ c | a) = (μ + d_ac) / (2μ + d_ab + d_ac)
	//
	// which is the same form as TSTE with q(d) = 1/(μ + d).
	CKL Model = "ckl"
)

// ParseModel reads "tste" or "ckl".
func ParseModel(s string) (Model, error) {
	switch Model(s) {
	case TSTE, CKL:
		return Model(s), nil
	}
	return "", fmt.Errorf("answer model %q: want tste or ckl", s)
}

// Rule is how a question is scored.
type Rule string

const (
	// InfoGain is the expected information gain about the head's position
	// (Tamuz et al. 2011, sec. 3): with τ_a the posterior of the head a
	// over candidate locations ℓ (the current positions of the items,
	// weighted by the likelihood of a's answered triplets under the model),
	// p_ℓ = p(b ≺ c | a at ℓ) and P = Σ_ℓ τ_a(ℓ) p_ℓ,
	//
	//	I(answer; location) = H(P) − Σ_ℓ τ_a(ℓ) H(p_ℓ),   H(p) = −p ln p − (1−p) ln(1−p),
	//
	// in nats: the mutual information between the answer and the head's
	// location, largest for questions whose answer is uncertain overall
	// (H(P) high) but would be certain if the location were known.
	InfoGain Rule = "infogain"
	// Uncertainty scores a question by how close the model's answer
	// probability at the current fit is to 1/2: 1/2 − |p − 1/2|.
	Uncertainty Rule = "uncertainty"
)

// ParseRule reads "infogain" or "uncertainty".
func ParseRule(s string) (Rule, error) {
	switch Rule(s) {
	case InfoGain, Uncertainty:
		return Rule(s), nil
	}
	return "", fmt.Errorf("score %q: want infogain or uncertainty", s)
}

// logWeight returns ln q(d) of the model for the squared distance d: the
// answer probability is q(d_ab) / (q(d_ab) + q(d_ac)). alpha is t-STE's
// degrees of freedom, mu CKL's μ.
func logWeight(m Model, alpha, mu, d float64) float64 {
	if m == CKL {
		return -math.Log(mu + d)
	}
	return -(alpha + 1) / 2 * math.Log1p(d/alpha)
}

// Probability returns the model's probability that b is closer to a than
// c, for the squared distances dab = d(a, b) and dac = d(a, c).
func Probability(m Model, alpha, mu, dab, dac float64) float64 {
	lb, lc := logWeight(m, alpha, mu, dab), logWeight(m, alpha, mu, dac)
	// q_b/(q_b+q_c) = 1/(1+exp(l_c−l_b)), stable for any gap.
	return 1 / (1 + math.Exp(lc-lb))
}

// entropy is the binary entropy in nats (0 at p = 0 or 1).
func entropy(p float64) float64 {
	if p <= 0 || p >= 1 {
		return 0
	}
	return -p*math.Log(p) - (1-p)*math.Log1p(-p)
}
