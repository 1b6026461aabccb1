package embed

import (
	"context"
	"fmt"
	"runtime"
	"sync"
)

// RunFits runs fit(ctx, i) for i = 0..n−1 on up to workers goroutines (0:
// GOMAXPROCS): the independent fits of cross-validation folds, bootstrap
// replicates and learning-curve points. The first error cancels the ctx
// the other fits see, stops handing out fits and is returned as fit
// returned it; when the caller's ctx ends first, the fits not started
// are skipped and its error is returned wrapped with what. admit, when
// set, is called before fit i is handed out and may block (bootstrap
// bounds the replicates it holds unreduced that way); its error stops
// handing out fits as a cancel does.
func RunFits(ctx context.Context, what string, workers, n int, admit func(context.Context) error, fit func(ctx context.Context, i int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	jobs := make(chan int)
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := fit(inner, i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					cancel()
				}
			}
		}()
	}
feed:
	for i := range n {
		// A ready worker must not win the select below over a cancel.
		if inner.Err() != nil || admit != nil && admit(inner) != nil {
			break
		}
		select {
		case jobs <- i:
		case <-inner.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
