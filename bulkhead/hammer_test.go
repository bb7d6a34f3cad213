package bulkhead_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/internal/safe"
)

// counters counts events by type.
type counters struct{ permitted, rejected, finished atomic.Int64 }

func count(b *bulkhead.Bulkhead) *counters {
	c := &counters{}
	b.Subscribe(func(e bulkhead.Event) {
		switch e.Type {
		case bulkhead.EventCallPermitted:
			c.permitted.Add(1)
		case bulkhead.EventCallRejected:
			c.rejected.Add(1)
		case bulkhead.EventCallFinished:
			c.finished.Add(1)
		}
	})
	return c
}

// hammer runs 64 goroutines of random calls against b: random holds, errors, panics,
// cancellations before and while waiting and while running, and TryAcquire. It returns the
// largest number of calls seen running at once and the outcome counts.
func hammer(t *testing.T, b *bulkhead.Bulkhead, changeMax func(r *rand.Rand)) (maxSeen int64, ok, full, cancelled int64) {
	var running, seen atomic.Int64
	var nOK, nFull, nCancelled atomic.Int64
	enter := func() {
		n := running.Add(1)
		for {
			m := seen.Load()
			if n <= m || seen.CompareAndSwap(m, n) {
				break
			}
		}
	}
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 200 {
				if changeMax != nil && r.IntN(20) == 0 {
					changeMax(r)
				}
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if r.IntN(4) == 0 {
					ctx, cancel = context.WithTimeout(ctx, time.Duration(r.IntN(300))*time.Microsecond)
				}
				if r.IntN(8) == 0 {
					if b.TryAcquire() {
						enter()
						runtime.Gosched()
						running.Add(-1)
						b.Release()
						nOK.Add(1)
					} else {
						nFull.Add(1)
					}
					cancel()
					continue
				}
				hold := time.Duration(r.IntN(200)) * time.Microsecond
				mode := r.IntN(10)
				_, err := bulkhead.Execute(ctx, b, func(ctx context.Context) (int, error) {
					enter()
					defer running.Add(-1)
					if r.IntN(2) == 0 {
						runtime.Gosched()
					}
					switch mode {
					case 0:
						panic("hammer")
					case 1:
						return 0, errBoom
					}
					select {
					case <-time.After(hold):
						return 1, nil
					case <-ctx.Done():
						return 0, ctx.Err()
					}
				})
				cancel()
				switch {
				case err == nil, errors.Is(err, errBoom), errors.As(err, new(*safe.PanicError)):
					nOK.Add(1) // the call ran to its end
				case errors.Is(err, bulkhead.ErrBulkheadFull):
					nFull.Add(1)
				case errors.Is(err, context.DeadlineExceeded):
					nCancelled.Add(1)
				default:
					t.Errorf("unexpected error %v", err)
				}
			}
		})
	}
	wg.Wait()
	return seen.Load(), nOK.Load(), nFull.Load(), nCancelled.Load()
}

func TestHammerNoPermitLostAndLimitHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, fair := range []bool{true, false} {
			b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 5, MaxWaitDuration: 100 * time.Microsecond, DisableFairCallHandling: !fair})
			c := count(b)
			maxSeen, ok, full, cancelled := hammer(t, b, nil)
			assert.LessOrEqual(t, maxSeen, int64(5), "fair=%v", fair)
			assert.Equal(t, int64(64*200), ok+full+cancelled)
			assert.Equal(t, metrics(5, 5, 0), b.Metrics(), "every permit is back")
			assert.Equal(t, int64(64*200), c.permitted.Load()+c.rejected.Load(), "one admission event per attempt")
			assert.LessOrEqual(t, c.finished.Load(), c.permitted.Load())
			assert.Positive(t, full, "the bulkhead was exercised while full")
			// Every permitted call that was not cancelled while running finished with an event.
			assert.GreaterOrEqual(t, c.finished.Load(), ok)
		}
	})
}

func TestHammerWithChangesOfMaxConcurrentCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 4, MaxWaitDuration: 200 * time.Microsecond})
		var mu sync.Mutex
		largest := 4
		maxSeen, ok, full, cancelled := hammer(t, b, func(r *rand.Rand) {
			n := 1 + r.IntN(8)
			mu.Lock()
			largest = max(largest, n)
			mu.Unlock()
			require.NoError(t, resize(b, n))
		})
		assert.LessOrEqual(t, maxSeen, int64(largest))
		assert.Equal(t, int64(64*200), ok+full+cancelled)
		m := b.Metrics()
		assert.Equal(t, m.MaxAllowedConcurrentCalls, m.AvailableConcurrentCalls, "every permit is back")
		assert.Zero(t, m.NumberOfWaitingCalls)
		// After quiescence the limit is exactly the last one set.
		require.NoError(t, resize(b, 3))
		for range 3 {
			require.True(t, b.TryAcquire())
		}
		assert.False(t, b.TryAcquire())
		for range 3 {
			b.Release()
		}
		assert.Equal(t, metrics(3, 3, 0), b.Metrics())
	})
}
