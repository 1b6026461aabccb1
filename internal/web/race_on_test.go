//go:build race

package web_test

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = true
