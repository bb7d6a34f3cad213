package bench

import (
	"context"

	fsbulkhead "github.com/failsafe-go/failsafe-go/bulkhead"
	"golang.org/x/sync/semaphore"

	"github.com/levee-go/levee/bulkhead"
)

// BulkheadLimit is the number of concurrent calls every bulkhead admits: Resilience4j's
// default, far more than the benchmark's goroutines, so that every acquire finds a permit.
const BulkheadLimit = 25

// permits is one bulkhead's acquire and release.
type permits struct {
	impl    string
	acquire func(ctx context.Context) error
	release func()
}

// newBulkheads returns levee's bulkhead (Acquire, Release), x/sync/semaphore (Acquire and
// Release of weight 1), a buffered-channel semaphore and failsafe-go's bulkhead
// (AcquirePermit, ReleasePermit), each admitting BulkheadLimit concurrent calls.
func newBulkheads() ([]permits, error) {
	lv, err := bulkhead.New("bench", bulkhead.Config{MaxConcurrentCalls: BulkheadLimit})
	if err != nil {
		return nil, err
	}
	sem := semaphore.NewWeighted(BulkheadLimit)
	ch := make(chan struct{}, BulkheadLimit)
	fs := fsbulkhead.New[int](BulkheadLimit)
	return []permits{
		{"levee", lv.Acquire, lv.Release},
		{"semaphore", func(ctx context.Context) error { return sem.Acquire(ctx, 1) }, func() { sem.Release(1) }},
		{"chan", func(ctx context.Context) error {
			select {
			case ch <- struct{}{}:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}, func() { <-ch }},
		{"failsafe", fs.AcquirePermit, fs.ReleasePermit},
	}, nil
}

// BulkheadCases returns one acquire and release of a permit in each bulkhead of newBulkheads.
// Every acquire takes the context, as the callers of a bulkhead do.
func BulkheadCases() ([]Case, error) {
	bhs, err := newBulkheads()
	if err != nil {
		return nil, err
	}
	cases := make([]Case, len(bhs))
	for i, bh := range bhs {
		cases[i] = Case{Impl: bh.impl, Do: func(ctx context.Context) error {
			if err := bh.acquire(ctx); err != nil {
				return err
			}
			bh.release()
			return nil
		}}
	}
	return cases, nil
}
