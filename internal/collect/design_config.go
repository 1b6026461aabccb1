package collect

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/basis"
	"github.com/closer-lab/closer/internal/landmark"
)

// The stateful designs (see RegisterDesigns) and the name recorded on the
// random questions a design study serves when its design has nothing open.
const (
	DesignLandmarkK1 = "landmark-k1"
	DesignLandmarkK2 = "landmark-k2"
	DesignBasis      = "basis"
	DesignFallback   = "random-fallback"
)

// MaxLandmarks bounds the number of landmarks a study may use.
const MaxLandmarks = 1000

// DesignConfig holds a study's design settings (studies.design_config).
// Which fields apply depends on the design: landmark designs use Landmarks
// or LandmarkItems, Repeats and Seed; basis uses Repeats, Extra and Seed;
// random uses none.
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
}

// IsStateful reports whether design keeps state in design_states (the
// landmark and basis designs).
func IsStateful(design string) bool {
	return design == DesignLandmarkK1 || design == DesignLandmarkK2 || design == DesignBasis
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

// checkDesignConfig normalises and checks in's design settings for a study
// with the given item labels (nil for a study without items yet) and
// returns a user-facing error naming the first rule the settings break.
func checkDesignConfig(in *StudyInput, labels []string) error {
	c := &in.DesignConfig
	if in.Design == DesignRandom || !IsStateful(in.Design) {
		// Other designs take no settings; keep the seed for later.
		*c = DesignConfig{Seed: c.Seed}
		return nil
	}
	if c.Seed == 0 {
		c.Seed = randomSeed()
	}
	if c.Repeats < 0 || c.Repeats > landmark.MaxRepeats {
		return userErr(KindInvalid, "repeats must be between 1 and %d", landmark.MaxRepeats)
	}
	if c.Repeats == 0 {
		c.Repeats = 1
	}
	if in.Design == DesignBasis {
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
		if _, err := landmark.New(len(labels), c.landmarkConfig(in.Design)); err != nil {
			return userErr(KindInvalid, "landmark design: %v", err)
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
