package active

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/closer-lab/closer/internal/embed"
	"github.com/closer-lab/closer/internal/triplet"
)

// benchStudy returns a study of n items in dim dimensions after the
// warm-up (10·n random answers) and a t-STE fit of them.
func benchStudy(b *testing.B, n, dim int) (*mat.Dense, []triplet.Triplet) {
	b.Helper()
	x := triplet.Gaussian(triplet.NewRand(1), n, dim, 1)
	answers := triplet.RandomTriplets(triplet.NewRand(2), triplet.NewOracle(x, 0.05, 3), DefaultWarmupPerItem*n)
	res, err := embed.Fit(context.Background(), n, answers, embed.Options{Method: embed.TSTE, Dim: dim, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	return res.X, answers
}

// BenchmarkScore10000 scores 10,000 candidate questions (100 heads × 100
// pairs) on a 100-item 2-D study on one core, the scorer's setup (model
// weights, posteriors) included. Target: under 20 ms (Salmon: 50 ms for 85
// items).
func BenchmarkScore10000(b *testing.B) {
	x, answers := benchStudy(b, 100, 2)
	heads := make([]int, 100)
	for i := range heads {
		heads[i] = i
	}
	for _, rule := range []Rule{InfoGain, Uncertainty} {
		b.Run(string(rule), func(b *testing.B) {
			cfg := ScoreConfig{Rule: rule, Candidates: 100, Workers: 1}
			var qs []Question
			cpu := threadCPU(b)
			for b.Loop() {
				var err error
				qs, err = Pool(qs[:0], x, answers, heads, 1, cfg, 1)
				if err != nil {
					b.Fatal(err)
				}
			}
			cpu.report(b)
		})
	}
}

// BenchmarkRefresh1000 refreshes the pool of 5,000 questions of a
// 1,000-item 2-D study after its warm-up (1,000 heads × 5, the best of
// 1,000 pairs each: a million candidates). Target: under 2 s.
func BenchmarkRefresh1000(b *testing.B) {
	n, pool := 1000, 5000
	if testing.Short() {
		// make bench-smoke (-short -benchtime 1x): the same code on 200
		// items; at full size its four refreshes took ~15 s of the run.
		n, pool = 200, 1000
	}
	x, answers := benchStudy(b, n, 2)
	for _, workers := range []int{1, 2} {
		b.Run(map[int]string{1: "one-core", 2: "two-cores"}[workers], func(b *testing.B) {
			cpu := threadCPU(b)
			for b.Loop() {
				d, err := New(n, Config{Seed: 1, Pool: pool, Score: ScoreConfig{Rule: InfoGain, Workers: workers}})
				if err != nil {
					b.Fatal(err)
				}
				if err := d.Refresh(x, answers); err != nil {
					b.Fatal(err)
				}
				if len(d.pool) != pool {
					b.Fatalf("pool of %d", len(d.pool))
				}
			}
			if workers == 1 {
				cpu.report(b)
			}
			d, _ := New(n, Config{Seed: 1, Pool: pool, Score: ScoreConfig{Rule: InfoGain, Workers: workers}})
			if err := d.Refresh(x, answers); err != nil {
				b.Fatal(err)
			}
			state, err := d.MarshalState()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(state)), "state-bytes")
		})
	}
}

// cpuClock measures the CPU time of the benchmark's own thread, which the
// work runs on with one worker: on a shared machine the wall time (ns/op)
// includes the time other processes held the core, the thread's CPU time
// (cpu-ms/op) does not.
type cpuClock struct{ start time.Duration }

func threadCPU(b *testing.B) *cpuClock {
	runtime.LockOSThread()
	b.Cleanup(runtime.UnlockOSThread)
	return &cpuClock{start: threadTime()}
}

func (c *cpuClock) report(b *testing.B) {
	b.ReportMetric(float64(threadTime()-c.start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// threadTime is the user + system CPU time of the calling thread
// (getrusage RUSAGE_THREAD, Linux).
func threadTime() time.Duration {
	const rusageThread = 1
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
