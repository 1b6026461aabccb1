package embed

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestRunFitsAll: every fit runs once, on at most workers goroutines at
// a time, and admit is asked before each.
func TestRunFitsAll(t *testing.T) {
	t.Parallel()
	const n, workers = 40, 3
	var (
		mu          sync.Mutex
		ran         = make([]int, n)
		busy, most  int
		admitted    atomic.Int32
		releaseBusy = func() { mu.Lock(); busy--; mu.Unlock() }
	)
	err := RunFits(context.Background(), "test", workers, n, func(context.Context) error {
		admitted.Add(1)
		return nil
	}, func(ctx context.Context, i int) error {
		mu.Lock()
		ran[i]++
		busy++
		most = max(most, busy)
		mu.Unlock()
		defer releaseBusy()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range ran {
		if r != 1 {
			t.Errorf("fit %d ran %d times", i, r)
		}
	}
	if most > workers {
		t.Errorf("%d fits at once, workers %d", most, workers)
	}
	if admitted.Load() != n {
		t.Errorf("admit asked %d times, want %d", admitted.Load(), n)
	}
}

// TestRunFitsFirstError: a fit's error is returned as the fit returned it,
// the other fits see their ctx cancelled, and no fit is handed out after.
func TestRunFitsFirstError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	var started atomic.Int32
	err := RunFits(context.Background(), "test", 1, 100, nil, func(ctx context.Context, i int) error {
		started.Add(1)
		if i == 2 {
			return boom
		}
		return ctx.Err()
	})
	if err != boom {
		t.Errorf("err = %v, want the fit's own", err)
	}
	// One worker: fit 3 may already be handed out when 2 fails, no more.
	if s := started.Load(); s > 4 {
		t.Errorf("%d fits started after the failure at the third", s)
	}
}

// TestRunFitsCancelled: a cancelled caller's ctx stops the fits and is
// returned wrapped with what.
func TestRunFitsCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var started atomic.Int32
	err := RunFits(ctx, "dimension cv", 2, 50, nil, func(ctx context.Context, i int) error {
		started.Add(1)
		return nil
	})
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "dimension cv: ") {
		t.Errorf("err = %v, want dimension cv: context canceled", err)
	}
	if s := started.Load(); s > 0 {
		t.Errorf("%d fits started with a cancelled ctx", s)
	}
}
