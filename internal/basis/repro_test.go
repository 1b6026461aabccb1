package basis

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/closer-lab/closer/internal/triplet"
	"gonum.org/v1/gonum/mat"
)

var reproduce = flag.Bool("reproduce", false, "run the paper reproductions (slow)")

func needReproduce(t *testing.T) {
	t.Helper()
	if !*reproduce {
		t.Skip("reproduction: run with -reproduce")
	}
}

// parallel runs f(0..m-1) on GOMAXPROCS goroutines.
func parallel(m int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range m {
		next <- i
	}
	close(next)
	wg.Wait()
}

type generator func(rng *rand.Rand, n, d int) *mat.Dense

var table1Sets = []struct {
	name  string
	gen   generator
	paper [4]float64 // Anderton et al. Table 1, true d = 1, 2, 3, 5
}{
	{"ball", triplet.Ball, [4]float64{1, 2, 2.11, 3.66}},
	{"cube", triplet.UniformCube, [4]float64{1, 2, 2.37, 3.74}},
	{"gaussian", func(rng *rand.Rand, n, d int) *mat.Dense { return triplet.Gaussian(rng, n, d, 1) }, [4]float64{1, 2, 2.98, 3.91}},
	{"sphere", triplet.Sphere, [4]float64{1, 1, 2, 3.09}},
}

// TestReproduceTable1 reproduces Anderton et al. Table 1: the average
// dimension estimate d̂ over 20 runs of 1,000 points (the paper averages
// 100 runs) must lie within ±0.5 of the paper's figure.
func TestReproduceTable1(t *testing.T) {
	t.Parallel()
	needReproduce(t)
	const n, runs = 1000, 20
	dims := [4]int{1, 2, 3, 5}
	var sum [4][4]float64
	var cmps [4][4]float64
	var mu sync.Mutex
	parallel(len(table1Sets)*len(dims)*runs, func(i int) {
		set, di, r := i/(len(dims)*runs), (i/runs)%len(dims), i%runs
		seed := uint64(1000*set + 100*di + r)
		x := table1Sets[set].gen(triplet.NewRand(seed), n, dims[di])
		s := New(n, Config{Seed: seed})
		st := Run(s, triplet.NewOracle(x, 0, seed), 0, 0)
		if !st.Done {
			panic("run not done")
		}
		mu.Lock()
		sum[set][di] += float64(s.DHat())
		cmps[set][di] += float64(st.Answers)
		mu.Unlock()
	})
	t.Logf("Table 1, %d points, average of %d runs (paper in brackets), mean comparisons per run", n, runs)
	t.Logf("%-9s %14s %14s %14s %14s", "true d:", "1", "2", "3", "5")
	for si, set := range table1Sets {
		line := fmt.Sprintf("%-9s", set.name)
		for di := range dims {
			avg := sum[si][di] / runs
			line += fmt.Sprintf(" %5.2f (%4.2f) %s", avg, set.paper[di], okMark(math.Abs(avg-set.paper[di]) <= 0.5))
			if math.Abs(avg-set.paper[di]) > 0.5 {
				t.Errorf("%s d=%d: d̂ = %.2f, paper %.2f", set.name, dims[di], avg, set.paper[di])
			}
		}
		t.Log(line)
	}
	for si, set := range table1Sets {
		line := fmt.Sprintf("%-9s", set.name)
		for di := range dims {
			line += fmt.Sprintf(" %14.0f", cmps[si][di]/runs)
		}
		t.Log("comparisons " + line)
	}
}

func okMark(ok bool) string {
	if ok {
		return "ok  "
	}
	return "FAIL"
}
