package basis

import (
	"testing"

	"github.com/closer-lab/closer/internal/triplet"
)

// BenchmarkRun3dgmm is one full basis run (Algorithm 1 and the
// coordinates, no Extra) on the 500-point 3dgmm set, 50 annotators.
func BenchmarkRun3dgmm(b *testing.B) {
	x := gmm(1, 3)
	answers := 0
	for b.Loop() {
		s := New(500, Config{Seed: 1})
		st := Run(s, triplet.NewOracle(x, 0, 1), 50, 0)
		answers = st.Answers
	}
	b.ReportMetric(float64(answers), "answers/run")
}

// BenchmarkRun3dgmmExtra adds the Extra phase (500 sorts open at once).
func BenchmarkRun3dgmmExtra(b *testing.B) {
	x := gmm(1, 3)
	answers := 0
	for b.Loop() {
		s := New(500, Config{Seed: 1, Extra: true})
		st := Run(s, triplet.NewOracle(x, 0, 1), 50, 0)
		answers = st.Answers
	}
	b.ReportMetric(float64(answers), "answers/run")
}

// BenchmarkMarshalRestore measures a snapshot round trip in the middle of
// the Extra phase on 500 points (the state a store would persist).
func BenchmarkMarshalRestore(b *testing.B) {
	x := gmm(1, 3)
	s := New(500, Config{Seed: 1, Extra: true})
	Run(s, triplet.NewOracle(x, 0, 1), 50, 45000)
	size := 0
	for b.Loop() {
		d, err := s.MarshalState()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Restore(d); err != nil {
			b.Fatal(err)
		}
		size = len(d)
	}
	b.ReportMetric(float64(size), "bytes")
}
