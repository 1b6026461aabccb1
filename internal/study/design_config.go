package study

import (
	"crypto/rand"
	"encoding/binary"

	"github.com/closer-lab/closer/internal/active"
	"github.com/closer-lab/closer/internal/basis"
	"github.com/closer-lab/closer/internal/landmark"
)

// The stateful designs (see RegisterDesigns) and the name recorded on the
// random questions a design study serves when its design has nothing open.
const (
	DesignLandmarkK1 = "landmark-k1"
	DesignLandmarkK2 = "landmark-k2"
	DesignBasis      = "basis"
	// DesignActive asks, after a warm-up of random questions, the questions
	// its last pool scored best (internal/active); the recompute worker
	// scores the pool (Store.ActiveArms, Store.ApplyActivePool).
	DesignActive   = "active"
	DesignFallback = "random-fallback"
	// DesignHeldout is recorded on a held-out question: a uniformly random
	// comparison that no design and no vote count sees (the study's
	// HeldoutShare), the study's common test set.
	DesignHeldout = "heldout"
)

// MaxLandmarks bounds the number of landmarks a study may use.
const MaxLandmarks = 1000

// DesignConfig holds a study's design settings (studies.design_config), or
// one arm's (Arm.Config). Which fields apply depends on the design: landmark
// designs use Landmarks or LandmarkItems, Repeats and Seed; basis uses
// Repeats, Extra, Coordinates and Seed; active uses Warmup, Score, Model,
// Candidates, Pool, Repeats and Seed; random uses none.
type DesignConfig struct {
	// Seed fixes the design's random choices (random landmarks, ties,
	// basis start point and pivots). 0 on a new study draws one.
	Seed uint64 `json:"seed"`
	// Repeats is how many answers each comparison collects (default 1;
	// odd for basis, which takes the majority).
	Repeats int `json:"repeats,omitempty"`
	// Landmarks is the number of landmarks drawn at random with Seed.
	Landmarks int `json:"landmarks,omitempty"`
	// LandmarkItems are landmarks picked by the researcher (item indices).
	LandmarkItems []int `json:"landmark_items,omitempty"`
	// Extra runs the basis scheme's section 4 phase.
	Extra bool `json:"extra,omitempty"`
	// Coordinates is the basis scheme's coordinate rule
	// (basis.CoordRankDifference or basis.CoordMedian). A basis study saved
	// without one gets rank-difference; those saved before the setting
	// existed were given the median rule they ran with by migration 000005.
	Coordinates string `json:"coordinates,omitempty"`

	// The active design's settings (active.Config and active.ScoreConfig).
	// Warmup is the random answers per item before scored questions start
	// (R: the warm-up is R·n answers; default 10).
	Warmup int `json:"warmup,omitempty"`
	// Score is how pool questions are scored: "uncertainty" (the default)
	// or "infogain".
	Score string `json:"score,omitempty"`
	// Model is the answer model of the scores: "tste" (the default) or
	// "ckl".
	Model string `json:"model,omitempty"`
	// Candidates is the pairs scored per head (default 1,000).
	Candidates int `json:"candidates,omitempty"`
	// Pool is the questions one refresh keeps (0: the number of items).
	Pool int `json:"pool,omitempty"`
}

// Defaults of the active design's settings.
const (
	DefaultActiveWarmup     = active.DefaultWarmupPerItem
	DefaultActiveScore      = string(active.Uncertainty)
	DefaultActiveModel      = string(active.TSTE)
	DefaultActiveCandidates = active.DefaultCandidates
)

// IsStateful reports whether design keeps state in design_states (the
// landmark, basis and active designs).
func IsStateful(design string) bool {
	return design == DesignLandmarkK1 || design == DesignLandmarkK2 || design == DesignBasis || design == DesignActive
}

// RepeatsOrDefault returns Repeats or its default 1.
func (c DesignConfig) RepeatsOrDefault() int {
	if c.Repeats <= 0 {
		return 1
	}
	return c.Repeats
}

// landmarkConfig is the landmark package's configuration for design.
func (c DesignConfig) LandmarkConfig(design string) landmark.Config {
	v := landmark.K1
	if design == DesignLandmarkK2 {
		v = landmark.K2
	}
	lc := landmark.Config{Variant: v, Repeats: c.RepeatsOrDefault(), Seed: c.Seed}
	if len(c.LandmarkItems) > 0 {
		lc.Landmarks = append([]int(nil), c.LandmarkItems...)
	} else {
		lc.NumLandmarks = c.Landmarks
	}
	return lc
}

// basisConfig is the basis package's configuration.
func (c DesignConfig) BasisConfig() basis.Config {
	return basis.Config{Seed: c.Seed, Repeats: c.RepeatsOrDefault(), Extra: c.Extra, Coordinates: c.Coordinates}
}

// activeConfig is the active package's configuration.
func (c DesignConfig) ActiveConfig() active.Config {
	return active.Config{Seed: c.Seed, WarmupPerItem: c.Warmup, Pool: c.Pool, Repeats: c.RepeatsOrDefault(),
		Score: active.ScoreConfig{Model: active.Model(c.Model), Rule: active.Rule(c.Score), Candidates: c.Candidates}}
}

// randomSeed draws a seed for a new study (never 0, so a stored 0 means
// "not set").
func randomSeed() uint64 {
	var b [8]byte
	rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])>>12 | 1
}

// checkDesignConfig normalises and checks in's design settings (and its
// arms') for a study with the given item labels
// (nil for a study without items yet) and returns a user-facing error
// naming the first rule the settings break. With arms, in.Design and
// in.DesignConfig become the first arm's.
func CheckDesignConfig(in *StudyInput, labels []string) error {
	if len(in.Arms) == 0 {
		in.Arms = nil
		return CheckConfig(in.Design, &in.DesignConfig, labels)
	}
	if err := CheckArms(in.Arms, labels); err != nil {
		return err
	}
	in.Design, in.DesignConfig = in.Arms[0].Design, in.Arms[0].Config
	return nil
}

// checkConfig normalises and checks the settings c of design for a study
// with the given item labels (nil: no items yet).
func CheckConfig(design string, c *DesignConfig, labels []string) error {
	if design == DesignRandom || !IsStateful(design) {
		// Other designs take no settings; keep the seed for later.
		*c = DesignConfig{Seed: c.Seed}
		return nil
	}
	if c.Seed == 0 {
		c.Seed = randomSeed()
	}
	if design == DesignActive {
		return CheckActiveConfig(c, labels)
	}
	c.Warmup, c.Score, c.Model, c.Candidates, c.Pool = 0, "", "", 0, 0
	if c.Repeats < 0 || c.Repeats > landmark.MaxRepeats {
		return Errorf(KindInvalid, "repeats must be between 1 and %d", landmark.MaxRepeats)
	}
	if c.Repeats == 0 {
		c.Repeats = 1
	}
	if design == DesignBasis {
		c.Landmarks, c.LandmarkItems = 0, nil
		if c.Coordinates == "" {
			c.Coordinates = basis.CoordRankDifference
		}
		if err := c.BasisConfig().Validate(); err != nil {
			return Errorf(KindInvalid, "basis design: %v", err)
		}
		return nil
	}
	c.Extra, c.Coordinates = false, ""
	if len(c.LandmarkItems) > 0 {
		if labels == nil {
			return Errorf(KindInvalid, "upload the items before picking landmarks by label or index (or give a number of landmarks to draw at random)")
		}
		seen := map[int]bool{}
		for _, idx := range c.LandmarkItems {
			if idx < 0 || idx >= len(labels) {
				return Errorf(KindInvalid, "landmark %d is not an item index 0..%d", idx, len(labels)-1)
			}
			if seen[idx] {
				return Errorf(KindInvalid, "landmark %d is picked twice", idx)
			}
			seen[idx] = true
		}
		c.Landmarks = 0
	}
	if len(c.LandmarkItems) == 0 {
		switch {
		case c.Landmarks < 2:
			return Errorf(KindInvalid, "a landmark design needs at least 2 landmarks (give a number, or pick items)")
		case c.Landmarks > MaxLandmarks:
			return Errorf(KindInvalid, "at most %d landmarks", MaxLandmarks)
		case labels != nil && c.Landmarks > len(labels):
			return Errorf(KindInvalid, "%d landmarks but the study has only %d items", c.Landmarks, len(labels))
		}
	} else if len(c.LandmarkItems) < 2 || len(c.LandmarkItems) > MaxLandmarks {
		return Errorf(KindInvalid, "pick between 2 and %d landmarks (%d picked)", MaxLandmarks, len(c.LandmarkItems))
	}
	if len(labels) >= 3 {
		if _, err := landmark.New(len(labels), c.LandmarkConfig(design)); err != nil {
			return Errorf(KindInvalid, "landmark design: %v", err)
		}
	}
	return nil
}

// checkActiveConfig normalises and checks an active design's settings:
// the defaults written out (but the pool size, whose default is the
// number of items), the landmark and basis settings cleared.
func CheckActiveConfig(c *DesignConfig, labels []string) error {
	c.Landmarks, c.LandmarkItems, c.Extra, c.Coordinates = 0, nil, false, ""
	if c.Warmup == 0 {
		c.Warmup = DefaultActiveWarmup
	}
	if c.Score == "" {
		c.Score = DefaultActiveScore
	}
	if c.Model == "" {
		c.Model = DefaultActiveModel
	}
	if c.Candidates == 0 {
		c.Candidates = DefaultActiveCandidates
	}
	if c.Repeats == 0 {
		c.Repeats = 1
	}
	switch {
	case c.Warmup < 1 || c.Warmup > active.MaxWarmupPerItem:
		return Errorf(KindInvalid, "the warm-up must be between 1 and %d answers per item", active.MaxWarmupPerItem)
	case c.Score != string(active.Uncertainty) && c.Score != string(active.InfoGain):
		return Errorf(KindInvalid, "unknown score %q (uncertainty or infogain)", c.Score)
	case c.Model != string(active.TSTE) && c.Model != string(active.CKL):
		return Errorf(KindInvalid, "unknown answer model %q (tste or ckl)", c.Model)
	case c.Candidates < 1 || c.Candidates > active.MaxCandidates:
		return Errorf(KindInvalid, "candidates per head must be between 1 and %d", active.MaxCandidates)
	case c.Pool < 0 || c.Pool > active.MaxPool:
		return Errorf(KindInvalid, "the pool size must be between 0 (the number of items) and %d", active.MaxPool)
	case c.Repeats < 1 || c.Repeats > active.MaxRepeats:
		return Errorf(KindInvalid, "repeats must be between 1 and %d", active.MaxRepeats)
	}
	if len(labels) >= 3 {
		if _, err := active.New(len(labels), c.ActiveConfig()); err != nil {
			return Errorf(KindInvalid, "active design: %v", err)
		}
	}
	return nil
}

// DesignRandom names the random design: every question is a uniformly
// random triple of distinct items (anchor, then an unordered pair), never a
// comparison the participant was already asked, shown with left and right
// in random order. It keeps no state.
const DesignRandom = "random"
