package landmark

import (
	"testing"

	"github.com/closer-lab/closer/internal/design"
)

// BenchmarkNew builds the k1 design for n = 10,000 items and 30 landmarks
// (4,349,130 comparisons).
func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := New(10000, Config{Variant: K1, NumLandmarks: 30, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenRecord measures one simulated round at scale: Open 50
// comparisons of the n = 10,000, 30-landmark k1 design and record an
// answer to each. Reported per round.
func BenchmarkOpenRecord(b *testing.B) {
	d, err := New(10000, Config{Variant: K1, NumLandmarks: 30, Repeats: 2, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	var buf []design.Need
	b.ResetTimer()
	for b.Loop() {
		buf = d.Open(buf[:0], 50)
		if len(buf) == 0 {
			b.Fatal("design exhausted")
		}
		for _, nd := range buf {
			d.Record(answer(nd.Key))
		}
	}
}

// BenchmarkMarshalState serialises the n = 10,000, 30-landmark k1 design
// after 1,000,000 answers.
func BenchmarkMarshalState(b *testing.B) {
	d, err := New(10000, Config{Variant: K1, NumLandmarks: 30, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	for _, nd := range d.Open(nil, 1000000) {
		d.Record(answer(nd.Key))
	}
	var size int
	b.ResetTimer()
	for b.Loop() {
		st, err := d.MarshalState()
		if err != nil {
			b.Fatal(err)
		}
		size = len(st)
	}
	b.ReportMetric(float64(size), "state-bytes")
}
