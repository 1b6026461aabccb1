package active

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/triplet"
)

// ScoreConfig configures the scorer. Zero fields take the defaults given.
type ScoreConfig struct {
	// Model is the answer model (default TSTE).
	Model Model
	// Alpha is t-STE's degrees of freedom (default max(dim − 1, 1), as
	// embed.TSTEParams); Mu is CKL's μ (default 0.1, as embed.CKLParams).
	// Use the values of the fit the points came from.
	Alpha, Mu float64
	// Rule is the score (default Uncertainty: it needed fewer answers than
	// InfoGain on every set of the reproduction, docs/active.md).
	Rule Rule
	// Candidates is the number of pairs (b, c) sampled per head (default
	// 1,000); every pair is scored when the head has no more than that.
	Candidates int
	// PosteriorMass and MaxSupport prune the head's posterior for
	// InfoGain: the locations are taken most probable first until they
	// hold PosteriorMass of the probability (default 0.999; 1 keeps every
	// location) or MaxSupport of them are taken (default 32; negative: no
	// cap), then renormalised. A question's score costs one logarithm per
	// kept location, so this bounds the cost when the posterior is still
	// broad (early in a study, or with many items).
	PosteriorMass float64
	MaxSupport    int
	// Workers bounds the goroutines of Pool (default GOMAXPROCS). It never
	// changes the result.
	Workers int
}

// Defaults for ScoreConfig.
const (
	DefaultCandidates    = 1000
	DefaultPosteriorMass = 0.999
	DefaultMaxSupport    = 32
	defaultMu            = 0.1
)

func (c ScoreConfig) withDefaults(dim int) ScoreConfig {
	if c.Model == "" {
		c.Model = TSTE
	}
	if c.Alpha == 0 {
		c.Alpha = math.Max(float64(dim-1), 1)
	}
	if c.Mu == 0 {
		c.Mu = defaultMu
	}
	if c.Rule == "" {
		c.Rule = Uncertainty
	}
	if c.Candidates == 0 {
		c.Candidates = DefaultCandidates
	}
	if c.PosteriorMass == 0 {
		c.PosteriorMass = DefaultPosteriorMass
	}
	if c.MaxSupport == 0 {
		c.MaxSupport = DefaultMaxSupport
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	return c
}

// Validate reports a setting out of range (zero fields are defaults).
func (c ScoreConfig) Validate() error {
	if c.Model != "" {
		if _, err := ParseModel(string(c.Model)); err != nil {
			return err
		}
	}
	if c.Rule != "" {
		if _, err := ParseRule(string(c.Rule)); err != nil {
			return err
		}
	}
	switch {
	case c.Alpha < 0 || math.IsNaN(c.Alpha) || math.IsInf(c.Alpha, 0):
		return fmt.Errorf("t-STE alpha %g: want a positive number", c.Alpha)
	case c.Mu < 0 || math.IsNaN(c.Mu) || math.IsInf(c.Mu, 0):
		return fmt.Errorf("CKL mu %g: want a positive number", c.Mu)
	case c.Candidates < 0 || c.Candidates > MaxCandidates:
		return fmt.Errorf("candidates per head %d: want 1..%d", c.Candidates, MaxCandidates)
	case c.PosteriorMass < 0 || c.PosteriorMass > 1 || math.IsNaN(c.PosteriorMass):
		return fmt.Errorf("posterior mass %g: want a share in (0, 1]", c.PosteriorMass)
	}
	return nil
}

// MaxCandidates bounds the pairs sampled per head.
const MaxCandidates = 1000000

// Question is a scored question: the comparison (Key.Anchor is the head)
// and its score (nats of expected information for InfoGain, 1/2 − |p − 1/2|
// for Uncertainty; higher is better).
type Question struct {
	Key   triplet.Key
	Score float64
}

// Location is one candidate location of a head in its posterior: the
// position of item Item, with probability Weight.
type Location struct {
	Item   int
	Weight float64
}

// Scorer scores questions against one fitted embedding and the answers it
// was fitted from. It holds the model weights q(d) between every pair of
// items (two n×n matrices, 16·n² bytes: 16 MB for 1,000 items). Its
// methods are safe for concurrent use.
type Scorer struct {
	cfg     ScoreConfig
	n       int
	w, logW []float64 // n×n: q(d(i, j)) and its logarithm
	byHead  [][]int32 // per head: its answered triplets as (closer, farther) pairs
	asked   map[triplet.Key]struct{}
}

// NewScorer prepares scoring against the points x (one row per item, from
// a fit) and the answers so far (every triplet's items must be rows of x).
func NewScorer(x *mat.Dense, answers []triplet.Triplet, cfg ScoreConfig) (*Scorer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("active: %w", err)
	}
	if x == nil {
		return nil, errors.New("active: no points to score against")
	}
	n, dim := x.Dims()
	if n < 3 {
		return nil, fmt.Errorf("active: need at least 3 items, have %d", n)
	}
	cfg = cfg.withDefaults(dim)
	for i := range n {
		for _, v := range x.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("active: item %d has a coordinate %g", i, v)
			}
		}
	}
	s := &Scorer{cfg: cfg, n: n, w: make([]float64, n*n), logW: make([]float64, n*n),
		byHead: make([][]int32, n), asked: make(map[triplet.Key]struct{}, len(answers))}
	for k, t := range answers {
		if err := t.Valid(n); err != nil {
			return nil, fmt.Errorf("active: answer %d: %w", k, err)
		}
		s.byHead[t.Anchor] = append(s.byHead[t.Anchor], int32(t.Closer), int32(t.Farther))
		s.asked[triplet.KeyOf(t)] = struct{}{}
	}
	s.weights(x)
	return s, nil
}

// weights fills w and logW, a row per goroutine chunk.
func (s *Scorer) weights(x *mat.Dense) {
	n := s.n
	s.parallel(n, func(i int) {
		xi := x.RawRowView(i)
		for j := range n {
			xj := x.RawRowView(j)
			var d float64
			for k := range xi {
				e := xi[k] - xj[k]
				d += e * e
			}
			l := logWeight(s.cfg.Model, s.cfg.Alpha, s.cfg.Mu, d)
			s.logW[i*n+j] = l
			s.w[i*n+j] = math.Exp(l)
		}
	})
}

// parallel runs f(0..m-1) on the configured workers.
func (s *Scorer) parallel(m int, f func(i int)) {
	workers := min(s.cfg.Workers, m)
	if workers <= 1 {
		for i := range m {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= m {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}

// Config returns the configuration with its defaults filled in.
func (s *Scorer) Config() ScoreConfig { return s.cfg }

// Probability returns the model's probability that b is closer to a than
// c, at the fitted positions.
func (s *Scorer) Probability(a, b, c int) float64 {
	row := a * s.n
	return s.w[row+b] / (s.w[row+b] + s.w[row+c])
}

// Posterior appends to dst the head's posterior over the candidate
// locations (the positions of all n items, itself included, under a
// uniform prior), weighted by the likelihood of its answered triplets
// under the model,
//
//	τ_a(ℓ) ∝ Π_{(a, b, c) answered} p(b ≺ c | a at ℓ),
//
// most probable first, pruned to PosteriorMass and MaxSupport and
// renormalised (Tamuz et al. 2011 discretise the posterior on the same
// support). Ties keep the lower item first.
func (s *Scorer) Posterior(dst []Location, head int) []Location {
	n := s.n
	pairs := s.byHead[head]
	start := len(dst)
	logPost := make([]float64, n)
	for l := range n {
		row := s.w[l*n : (l+1)*n]
		// The product of the probabilities, rescaled by powers of two
		// before it underflows: one division per answer, no logarithm.
		prod, exp := 1.0, 0
		for t := 0; t < len(pairs); t += 2 {
			u, v := row[pairs[t]], row[pairs[t+1]]
			prod *= u / (u + v)
			if prod < 1e-200 {
				f, e := math.Frexp(prod)
				prod, exp = f, exp+e
			}
		}
		logPost[l] = math.Log(prod) + float64(exp)*math.Ln2
	}
	top := math.Inf(-1)
	for _, v := range logPost {
		top = math.Max(top, v)
	}
	var total float64
	for l, v := range logPost {
		w := math.Exp(v - top)
		total += w
		dst = append(dst, Location{Item: l, Weight: w})
	}
	locs := dst[start:]
	if s.cfg.MaxSupport > 0 && s.cfg.MaxSupport < len(locs) {
		locs = topLocations(locs, s.cfg.MaxSupport)
	} else {
		slices.SortFunc(locs, byWeight)
	}
	keep, kept := 0, 0.0
	for keep < len(locs) {
		if s.cfg.MaxSupport > 0 && keep == s.cfg.MaxSupport {
			break
		}
		if s.cfg.PosteriorMass < 1 && kept >= s.cfg.PosteriorMass*total {
			break
		}
		kept += locs[keep].Weight
		keep++
	}
	locs = locs[:keep]
	for i := range locs {
		locs[i].Weight /= kept
	}
	return dst[:start+keep]
}

// byWeight orders locations most probable first, ties by item.
func byWeight(x, y Location) int {
	switch {
	case x.Weight > y.Weight:
		return -1
	case x.Weight < y.Weight:
		return 1
	}
	return x.Item - y.Item
}

// topLocations moves the k most probable locations (byWeight) to the front
// of locs, in order, and returns them: an insertion into a sorted prefix,
// which most locations skip after one comparison.
func topLocations(locs []Location, k int) []Location {
	top := locs[:0:0]
	top = append(top, locs[:k]...)
	slices.SortFunc(top, byWeight)
	for _, l := range locs[k:] {
		if byWeight(l, top[k-1]) >= 0 {
			continue
		}
		i := k - 1
		for i > 0 && byWeight(l, top[i-1]) < 0 {
			i--
		}
		copy(top[i+1:], top[i:k-1])
		top[i] = l
	}
	copy(locs, top)
	return locs[:k]
}

// InfoGain returns the expected information gain (nats) of asking the
// head a about b and c, with the head's posterior support (from
// Posterior):
//
//	I = H(Σ_ℓ τ(ℓ) p_ℓ) − Σ_ℓ τ(ℓ) H(p_ℓ),  p_ℓ = q_ℓb / (q_ℓb + q_ℓc)
//
// (Tamuz et al. 2011, sec. 3). H(p_ℓ) is computed as
// ln s − (q_b ln q_b + q_c ln q_c)/s with s = q_b + q_c, from the stored
// logarithms: one logarithm per location.
func (s *Scorer) InfoGain(b, c int, support []Location) float64 {
	n := s.n
	var pMean, hMean float64
	for _, loc := range support {
		row := loc.Item * n
		u, v := s.w[row+b], s.w[row+c]
		sum := u + v
		p := u / sum
		h := math.Log(sum) - (u*s.logW[row+b]+v*s.logW[row+c])/sum
		pMean += loc.Weight * p
		hMean += loc.Weight * h
	}
	return max(entropy(pMean)-hMean, 0) // rounding can leave −1e-17
}

// Uncertainty returns 1/2 − |p − 1/2| for the model's probability p that
// b is closer to the head a than c at the fitted positions.
func (s *Scorer) Uncertainty(a, b, c int) float64 {
	return 0.5 - math.Abs(s.Probability(a, b, c)-0.5)
}

// Best appends to dst the keep best questions for the head among the
// candidate pairs (all pairs of the other items when there are no more
// than Candidates of them, else Candidates distinct pairs drawn with
// rand.New(rand.NewPCG(seed, head))), leaving out questions already
// answered; best first, ties in drawing order.
func (s *Scorer) Best(dst []Question, head, keep int, seed uint64) []Question {
	if keep <= 0 {
		return dst
	}
	var support []Location
	if s.cfg.Rule == InfoGain {
		support = s.Posterior(nil, head)
	}
	start := len(dst)
	consider := func(b, c int) {
		key := triplet.QuestionKey(head, b, c)
		if _, ok := s.asked[key]; ok {
			return
		}
		var score float64
		if s.cfg.Rule == InfoGain {
			score = s.InfoGain(key.J, key.K, support)
		} else {
			score = s.Uncertainty(head, key.J, key.K)
		}
		best := dst[start:]
		if len(best) == keep && score <= best[keep-1].Score {
			return
		}
		// Insert after every question at least as good (earlier draws win ties).
		i := len(best)
		for i > 0 && best[i-1].Score < score {
			i--
		}
		if len(best) < keep {
			dst = append(dst, Question{})
			best = dst[start:]
		}
		copy(best[i+1:], best[i:len(best)-1])
		best[i] = Question{Key: key, Score: score}
	}
	n := s.n
	pairs := (n - 1) * (n - 2) / 2
	if pairs <= s.cfg.Candidates {
		for b := range n {
			for c := b + 1; c < n; c++ {
				if b != head && c != head {
					consider(b, c)
				}
			}
		}
		return dst
	}
	rng := rand.New(rand.NewPCG(seed, uint64(head)))
	drawn := make(map[[2]int32]struct{}, s.cfg.Candidates)
	for len(drawn) < s.cfg.Candidates {
		b, c := rng.IntN(n-1), rng.IntN(n-2)
		// b, c uniform over the other items, distinct: skip the head, then b.
		if b >= head {
			b++
		}
		lo, hi := min(head, b), max(head, b)
		if c >= lo {
			c++
		}
		if c >= hi {
			c++
		}
		if b > c {
			b, c = c, b
		}
		if _, dup := drawn[[2]int32{int32(b), int32(c)}]; dup {
			continue
		}
		drawn[[2]int32{int32(b), int32(c)}] = struct{}{}
		consider(b, c)
	}
	return dst
}

// Pool scores questions for the heads, perHead for each (the best of
// Candidates pairs, see Scorer.Best), and appends them to dst in round
// robin order: every head's best in the order of heads, then every head's
// second best, and so on. The heads are scored in parallel with seeds
// derived from seed and the head, so the result depends only on the input.
func Pool(dst []Question, x *mat.Dense, answers []triplet.Triplet, heads []int, perHead int, cfg ScoreConfig, seed uint64) ([]Question, error) {
	s, err := NewScorer(x, answers, cfg)
	if err != nil {
		return dst, err
	}
	return s.Pool(dst, heads, perHead, seed)
}

// Pool is the package's Pool with a prepared scorer.
func (s *Scorer) Pool(dst []Question, heads []int, perHead int, seed uint64) ([]Question, error) {
	for _, h := range heads {
		if h < 0 || h >= s.n {
			return dst, fmt.Errorf("active: head %d outside 0..%d", h, s.n-1)
		}
	}
	if perHead <= 0 {
		return dst, nil
	}
	best := make([][]Question, len(heads))
	s.parallel(len(heads), func(i int) {
		best[i] = s.Best(make([]Question, 0, perHead), heads[i], perHead, seed)
	})
	for r := range perHead {
		for _, b := range best {
			if r < len(b) {
				dst = append(dst, b[r])
			}
		}
	}
	return dst, nil
}
