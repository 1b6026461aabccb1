package collect

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

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

// repeats returns Repeats or its default 1.
func (c DesignConfig) repeats() int {
	if c.Repeats <= 0 {
		return 1
	}
	return c.Repeats
}

// landmarkConfig is the landmark package's configuration for design.
func (c DesignConfig) landmarkConfig(design string) landmark.Config {
	v := landmark.K1
	if design == DesignLandmarkK2 {
		v = landmark.K2
	}
	lc := landmark.Config{Variant: v, Repeats: c.repeats(), Seed: c.Seed}
	if len(c.LandmarkItems) > 0 {
		lc.Landmarks = append([]int(nil), c.LandmarkItems...)
	} else {
		lc.NumLandmarks = c.Landmarks
	}
	return lc
}

// basisConfig is the basis package's configuration.
func (c DesignConfig) basisConfig() basis.Config {
	return basis.Config{Seed: c.Seed, Repeats: c.repeats(), Extra: c.Extra, Coordinates: c.Coordinates}
}

// activeConfig is the active package's configuration.
func (c DesignConfig) activeConfig() active.Config {
	return active.Config{Seed: c.Seed, WarmupPerItem: c.Warmup, Pool: c.Pool, Repeats: c.repeats(),
		Score: active.ScoreConfig{Model: active.Model(c.Model), Rule: active.Rule(c.Score), Candidates: c.Candidates}}
}

// randomSeed draws a seed for a new study (never 0, so a stored 0 means
// "not set").
func randomSeed() uint64 {
	var b [8]byte
	rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])>>12 | 1
}

// querier is what both a pool and a transaction offer.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// itemLabels returns a study's item labels by index.
func itemLabels(ctx context.Context, q querier, studyID int64) ([]string, error) {
	rows, err := q.Query(ctx, `SELECT label FROM items WHERE study_id = $1 ORDER BY idx`, studyID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// checkDesignConfig normalises and checks in's design settings (and its
// arms') for a study with the given item labels
// (nil for a study without items yet) and returns a user-facing error
// naming the first rule the settings break. With arms, in.Design and
// in.DesignConfig become the first arm's.
func checkDesignConfig(in *StudyInput, labels []string) error {
	if len(in.Arms) == 0 {
		in.Arms = nil
		return checkConfig(in.Design, &in.DesignConfig, labels)
	}
	if err := checkArms(in.Arms, labels); err != nil {
		return err
	}
	in.Design, in.DesignConfig = in.Arms[0].Design, in.Arms[0].Config
	return nil
}

// checkConfig normalises and checks the settings c of design for a study
// with the given item labels (nil: no items yet).
func checkConfig(design string, c *DesignConfig, labels []string) error {
	if design == DesignRandom || !IsStateful(design) {
		// Other designs take no settings; keep the seed for later.
		*c = DesignConfig{Seed: c.Seed}
		return nil
	}
	if c.Seed == 0 {
		c.Seed = randomSeed()
	}
	if design == DesignActive {
		return checkActiveConfig(c, labels)
	}
	c.Warmup, c.Score, c.Model, c.Candidates, c.Pool = 0, "", "", 0, 0
	if c.Repeats < 0 || c.Repeats > landmark.MaxRepeats {
		return userErr(KindInvalid, "repeats must be between 1 and %d", landmark.MaxRepeats)
	}
	if c.Repeats == 0 {
		c.Repeats = 1
	}
	if design == DesignBasis {
		c.Landmarks, c.LandmarkItems = 0, nil
		if c.Coordinates == "" {
			c.Coordinates = basis.CoordRankDifference
		}
		if err := c.basisConfig().Validate(); err != nil {
			return userErr(KindInvalid, "basis design: %v", err)
		}
		return nil
	}
	c.Extra, c.Coordinates = false, ""
	if len(c.LandmarkItems) > 0 {
		if labels == nil {
			return userErr(KindInvalid, "upload the items before picking landmarks by label or index (or give a number of landmarks to draw at random)")
		}
		seen := map[int]bool{}
		for _, idx := range c.LandmarkItems {
			if idx < 0 || idx >= len(labels) {
				return userErr(KindInvalid, "landmark %d is not an item index 0..%d", idx, len(labels)-1)
			}
			if seen[idx] {
				return userErr(KindInvalid, "landmark %d is picked twice", idx)
			}
			seen[idx] = true
		}
		c.Landmarks = 0
	}
	if len(c.LandmarkItems) == 0 {
		switch {
		case c.Landmarks < 2:
			return userErr(KindInvalid, "a landmark design needs at least 2 landmarks (give a number, or pick items)")
		case c.Landmarks > MaxLandmarks:
			return userErr(KindInvalid, "at most %d landmarks", MaxLandmarks)
		case labels != nil && c.Landmarks > len(labels):
			return userErr(KindInvalid, "%d landmarks but the study has only %d items", c.Landmarks, len(labels))
		}
	} else if len(c.LandmarkItems) < 2 || len(c.LandmarkItems) > MaxLandmarks {
		return userErr(KindInvalid, "pick between 2 and %d landmarks (%d picked)", MaxLandmarks, len(c.LandmarkItems))
	}
	if len(labels) >= 3 {
		if _, err := landmark.New(len(labels), c.landmarkConfig(design)); err != nil {
			return userErr(KindInvalid, "landmark design: %v", err)
		}
	}
	return nil
}

// checkActiveConfig normalises and checks an active design's settings:
// the defaults written out (but the pool size, whose default is the
// number of items), the landmark and basis settings cleared.
func checkActiveConfig(c *DesignConfig, labels []string) error {
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
		return userErr(KindInvalid, "the warm-up must be between 1 and %d answers per item", active.MaxWarmupPerItem)
	case c.Score != string(active.Uncertainty) && c.Score != string(active.InfoGain):
		return userErr(KindInvalid, "unknown score %q (uncertainty or infogain)", c.Score)
	case c.Model != string(active.TSTE) && c.Model != string(active.CKL):
		return userErr(KindInvalid, "unknown answer model %q (tste or ckl)", c.Model)
	case c.Candidates < 1 || c.Candidates > active.MaxCandidates:
		return userErr(KindInvalid, "candidates per head must be between 1 and %d", active.MaxCandidates)
	case c.Pool < 0 || c.Pool > active.MaxPool:
		return userErr(KindInvalid, "the pool size must be between 0 (the number of items) and %d", active.MaxPool)
	case c.Repeats < 1 || c.Repeats > active.MaxRepeats:
		return userErr(KindInvalid, "repeats must be between 1 and %d", active.MaxRepeats)
	}
	if len(labels) >= 3 {
		if _, err := active.New(len(labels), c.activeConfig()); err != nil {
			return userErr(KindInvalid, "active design: %v", err)
		}
	}
	return nil
}

// DesignConfigOf returns a study's design settings.
func (s *Store) DesignConfigOf(ctx context.Context, studyID int64) (DesignConfig, error) {
	var raw []byte
	err := s.pool.QueryRow(ctx, `SELECT design_config FROM studies WHERE id = $1`, studyID).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return DesignConfig{}, fmt.Errorf("design config: %w", notFound("study"))
	}
	if err != nil {
		return DesignConfig{}, fmt.Errorf("design config: %w", err)
	}
	var c DesignConfig
	if err := json.Unmarshal(raw, &c); err != nil {
		return DesignConfig{}, fmt.Errorf("design config: %w", err)
	}
	return c, nil
}

// designConfigChanged reports whether a stored config differs from a new one
// in what the design uses.
func designConfigChanged(old []byte, c DesignConfig) bool {
	var o DesignConfig
	if err := json.Unmarshal(old, &o); err != nil {
		return true
	}
	a, _ := json.Marshal(o)
	b, _ := json.Marshal(c)
	return string(a) != string(b)
}
