package http

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/closer-lab/closer/internal/collect"
)

// designConfigInput reads the design settings of the study form (fields
// seed, repeats, landmarks, landmark_picks, extra, coordinates). A field
// that is not a number is reported through FormError by the store's check.
func designConfigInput(f url.Values) collect.DesignConfig {
	c := collect.DesignConfig{
		LandmarkPicks: strings.TrimSpace(f.Get("landmark_picks")),
		Extra:         f.Get("extra") != "",
		Coordinates:   strings.TrimSpace(f.Get("coordinates")),
	}
	var bad []string
	if v := strings.TrimSpace(f.Get("seed")); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			bad = append(bad, "the seed must be a whole number (or empty to draw one)")
		}
		c.Seed = seed
	}
	num := func(name, what string) int {
		v := strings.TrimSpace(f.Get(name))
		if v == "" {
			return 0
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			bad = append(bad, what+" must be a whole number")
		}
		return n
	}
	c.Repeats = num("repeats", "repeats")
	c.Landmarks = num("landmarks", "the number of landmarks")
	c.FormError = strings.Join(bad, "; ")
	return c
}
