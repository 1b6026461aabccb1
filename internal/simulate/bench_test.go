package simulate

import (
	"context"
	"testing"

	"github.com/closer-lab/closer/internal/landmark"
	"github.com/closer-lab/closer/internal/triplet"
)

// BenchmarkRunLandmarkScale drives the k1 landmark design at the scale of
// the paper's MNIST experiment (n = 10,000 items, 30 landmarks, 4.35
// million comparisons) with 50 annotators for 150,000 answers (one op), to
// show the driver and the design are not the bottleneck of a simulation.
func BenchmarkRunLandmarkScale(b *testing.B) {
	x := triplet.Gaussian(triplet.NewRand(1), 10000, 5, 1)
	for b.Loop() {
		d, err := landmark.New(10000, landmark.Config{Variant: landmark.K1, NumLandmarks: 30, Seed: 2})
		if err != nil {
			b.Fatal(err)
		}
		o := triplet.NewOracle(x, 0.1, 3)
		st, err := Run(context.Background(), d, Crowd{Oracle: o, Annotators: 50, Seed: 4}, 150000, nil, func(Checkpoint) error { return nil })
		if err != nil || st.Fallbacks != 0 || st.Refused != 0 {
			b.Fatalf("%+v %v", st, err)
		}
	}
}
