package loadgen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseThink(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Think{
		"0":         {},
		"250ms":     {Mean: 250 * time.Millisecond},
		"exp:2s":    {Mean: 2 * time.Second, Exponential: true},
		" exp:0 ":   {Exponential: true},
		"exp:1.5ms": {Mean: 1500 * time.Microsecond, Exponential: true},
	} {
		got, err := ParseThink(in)
		if err != nil || got != want {
			t.Errorf("ParseThink(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "fast", "-1s", "exp:", "gauss:1s", "200"} {
		if _, err := ParseThink(in); err == nil {
			t.Errorf("ParseThink(%q) accepted", in)
		}
	}
}

// Exponential think times have the mean asked for; fixed ones are fixed.
func TestThinkDraw(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	exp := Think{Mean: 100 * time.Millisecond, Exponential: true}
	var sum time.Duration
	const n = 20000
	for range n {
		sum += exp.draw(rng)
	}
	if mean := sum / n; mean < 95*time.Millisecond || mean > 105*time.Millisecond {
		t.Errorf("exponential mean %v, want about 100ms", mean)
	}
	if d := (Think{Mean: time.Second}).draw(rng); d != time.Second {
		t.Errorf("fixed draw %v", d)
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"3": 3 * time.Second,
		"0": 0,
		now.Add(7 * time.Second).Format(http.TimeFormat):  7 * time.Second,
		now.Add(-7 * time.Second).Format(http.TimeFormat): 0,
	} {
		got, ok := retryAfter(http.Header{"Retry-After": {v}}, now)
		if !ok || got != want {
			t.Errorf("Retry-After %q: %v %v, want %v", v, got, ok, want)
		}
	}
	for _, v := range []string{"", "soon", "-2"} {
		if _, ok := retryAfter(http.Header{"Retry-After": {v}}, now); ok {
			t.Errorf("Retry-After %q accepted", v)
		}
	}
}

func TestPercentileNearestRank(t *testing.T) {
	t.Parallel()
	s := newEndpointStats()
	for i := 1; i <= 200; i++ {
		s.latencies = append(s.latencies, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{50: 100, 95: 190, 99: 198, 100: 200, 0.1: 1} {
		if got := s.Percentile(p); got != want*time.Millisecond {
			t.Errorf("p%v = %v, want %v", p, got, want*time.Millisecond)
		}
	}
	if got := newEndpointStats().Percentile(99); got != 0 {
		t.Errorf("p99 of nothing = %v", got)
	}
}

func TestCheckBaseURL(t *testing.T) {
	t.Parallel()
	if got, err := checkBaseURL("http://localhost:8080/"); err != nil || got != "http://localhost:8080" {
		t.Errorf("got %q, %v", got, err)
	}
	for _, bad := range []string{"localhost:8080", "ftp://x", "http://x/api", "http://x?a=1", "http://"} {
		if _, err := checkBaseURL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestOracle(t *testing.T) {
	t.Parallel()
	o, err := ReadOracle(strings.NewReader("item,x,y\na,0,0\nb,1,0\nc,3,0\n3,0,5\n"))
	if err != nil {
		t.Fatal(err)
	}
	it := func(i int, label string) Item { return Item{Index: i, Label: label} }
	for _, tc := range []struct {
		anchor, left, right Item
		want                int
	}{
		{it(0, "a"), it(1, "b"), it(2, "c"), 1},
		{it(0, "a"), it(2, "c"), it(1, "b"), 1},
		{it(2, "c"), it(0, "a"), it(1, "b"), 1},
		{it(3, "disk-04"), it(1, "b"), it(2, "c"), 1}, // by index: (0,5)
		{it(3, "disk-04"), it(2, "c"), it(0, "a"), 0},
	} {
		got, err := o.Closer(tc.anchor, tc.left, tc.right)
		if err != nil || got != tc.want {
			t.Errorf("Closer(%v, %v, %v) = %d, %v; want %d", tc.anchor, tc.left, tc.right, got, err, tc.want)
		}
	}
	if _, err := o.Closer(it(9, "z"), it(1, "b"), it(2, "c")); err == nil || !strings.Contains(err.Error(), `"z"`) {
		t.Errorf("missing item: %v", err)
	}
	if _, err := ReadOracle(strings.NewReader("item,x\na,1\na,2\n")); err == nil {
		t.Error("a repeated item was accepted")
	}
}

// With a ramp, annotator i of N joins no earlier than i·Ramp/N after the
// start; without one they all join at once.
func TestRampSpreadsArrivals(t *testing.T) {
	t.Parallel()
	for _, ramp := range []time.Duration{0, 400 * time.Millisecond} {
		var mu sync.Mutex
		var joins []time.Duration
		release := make(chan struct{})
		start := time.Now()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/participants"):
				mu.Lock()
				joins = append(joins, time.Since(start))
				mu.Unlock()
				w.WriteHeader(http.StatusCreated)
				fmt.Fprint(w, `{"token":"t"}`)
			default: // every participant waits on its first question until the run is over
				<-release
				fmt.Fprint(w, `{"done":true}`)
			}
		}))
		time.AfterFunc(time.Second, func() { close(release) })
		_, err := Run(context.Background(), Config{BaseURL: srv.URL, Study: "s", Concurrency: 4, Duration: 700 * time.Millisecond,
			Ramp: ramp, Timeout: 5 * time.Second})
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(joins)
		if len(joins) != 4 {
			t.Fatalf("ramp %v: %d joins, want one per annotator", ramp, len(joins))
		}
		for i, at := range joins {
			if due := ramp * time.Duration(i) / 4; at < due {
				t.Errorf("ramp %v: annotator %d joined after %v, before its arrival at %v", ramp, i, at, due)
			}
		}
		if ramp == 0 && joins[3] > 200*time.Millisecond {
			t.Errorf("without a ramp the last annotator joined only after %v", joins[3])
		}
	}
	if _, err := Run(context.Background(), Config{BaseURL: "http://127.0.0.1:1", Study: "s", Concurrency: 1, Duration: time.Second, Ramp: time.Second}); err == nil {
		t.Error("a ramp as long as the run was accepted")
	}
}

// The steady-state latencies are those of the requests sent after the
// ramp: with a ramp they are a part of all, without one all of them.
func TestSteadyStateAfterRamp(t *testing.T) {
	t.Parallel()
	for _, ramp := range []time.Duration{0, 300 * time.Millisecond} {
		var mu sync.Mutex
		var sentAfter, joins int
		start := time.Now()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/participants") {
				mu.Lock()
				joins++
				if time.Since(start) >= ramp {
					sentAfter++
				}
				mu.Unlock()
				time.Sleep(20 * time.Millisecond) // so that the annotators join a few times each
				w.WriteHeader(http.StatusCreated)
				fmt.Fprint(w, `{"token":"t"}`)
				return
			}
			fmt.Fprint(w, `{"done":true}`) // every participant is done at once and joins again
		}))
		res, err := Run(context.Background(), Config{BaseURL: srv.URL, Study: "s", Concurrency: 3, Duration: 600 * time.Millisecond,
			Ramp: ramp, Timeout: 5 * time.Second})
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		st := res.Endpoints[Participants]
		t.Logf("ramp %v: %d joins, %d counted after the ramp", ramp, st.OK(), st.SteadyOK())
		if st.OK() != joins {
			t.Fatalf("ramp %v: %d joins counted, the server saw %d", ramp, st.OK(), joins)
		}
		switch {
		case ramp == 0 && st.SteadyOK() != st.OK():
			t.Errorf("without a ramp %d of %d joins are steady, want all", st.SteadyOK(), st.OK())
		case ramp > 0 && (st.SteadyOK() == 0 || st.SteadyOK() >= st.OK()):
			t.Errorf("ramp %v: %d of %d joins steady, want some but not all", ramp, st.SteadyOK(), st.OK())
		case ramp > 0 && st.SteadyOK() > sentAfter:
			t.Errorf("ramp %v: %d joins steady, but only %d reached the server after the ramp", ramp, st.SteadyOK(), sentAfter)
		}
		if st.SteadyOK() > 0 && st.SteadyPercentile(100) > st.Percentile(100) {
			t.Errorf("steady max %v above the run's max %v", st.SteadyPercentile(100), st.Percentile(100))
		}
	}
}
