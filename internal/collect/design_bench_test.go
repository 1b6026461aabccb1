package collect_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/triplet"
)

// BenchmarkDesignNextAnswer measures one question round trip in the store
// (issue the next question, record its answer: two transactions, each
// committed) for the stateful designs on n = 1,000 items, answered by a
// simulated error-free crowd (participants of 100 questions, one after the
// other). "cold" drops the process's cached design state before every
// question, as if every request reached a replica that had not seen the
// study's last answer (snapshot restore + event replay each time).
// cpu-ms/op is this process's CPU time (user + system, getrusage) per round
// trip: the Go side (designs, pgx, JSON, GC) without PostgreSQL's work, so
// it is less sensitive to a loaded machine than the wall time.
func BenchmarkDesignNextAnswer(b *testing.B) {
	const n = 1000
	x := triplet.Gaussian(triplet.NewRand(1), n, 3, 1)
	for _, bc := range []struct {
		name, design string
		cfg          collect.DesignConfig
		cold         bool
	}{
		{"landmark-k1", collect.DesignLandmarkK1, collect.DesignConfig{Seed: 1, Landmarks: 10}, false},
		{"landmark-k1-cold", collect.DesignLandmarkK1, collect.DesignConfig{Seed: 1, Landmarks: 10}, true},
		{"basis", collect.DesignBasis, collect.DesignConfig{Seed: 1}, false},
		{"basis-cold", collect.DesignBasis, collect.DesignConfig{Seed: 1}, true},
	} {
		b.Run(fmt.Sprintf("%s/n=%d", bc.name, n), func(b *testing.B) {
			ctx := context.Background()
			pool, _ := pgtest.NewDB(b)
			s, schs := designStore(pool)
			st := designStudy(b, s, "bench", bc.design, bc.cfg, n, 100)
			o := triplet.NewOracle(x, 0, 1)
			var p collect.Participant
			var err error
			fallbacks := 0
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%100 == 0 {
					b.StopTimer()
					p, _, err = s.CreateParticipant(ctx, st.ID, "", nil)
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				if bc.cold {
					schs[bc.design].DropCache()
				}
				pr, err := s.Next(ctx, p.ID)
				if err != nil {
					b.Fatal(err)
				}
				q := pr.Question
				if q.Design == collect.DesignFallback {
					fallbacks++
				}
				if _, err := s.Answer(ctx, p.ID, collect.AnswerInput{QuestionID: q.ID, Closer: answerFor(o, q)}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(fallbacks)/float64(b.N), "fallback/op")
		})
	}
}

// cpuTime returns the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
