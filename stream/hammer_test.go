package stream_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/stream"
)

// TestHammer runs 64 goroutines of streams sharing one breaker and one bulkhead: Map and
// Filter streams with random concurrency, order and error strategy whose consumers cancel at
// random moments, and guarded subscriptions that complete, fail or are cancelled after a few
// elements. Every call and every attempt counts what the breaker must record; at the end the
// breaker's events add up to those counts, the bulkhead never let more calls in than its
// maximum and has every permit back, and every stream that was not cancelled yielded one
// result per element.
func TestHammer(t *testing.T) {
	const maxCalls = 6
	cb := newBreaker(t, circuitbreaker.Config{
		SlidingWindowSize: 20, MinimumNumberOfCalls: 20, WaitDurationInOpenState: time.Millisecond,
		PermittedNumberOfCallsInHalfOpenState: 4,
	})
	bh, err := bulkhead.New("bh", bulkhead.Config{MaxConcurrentCalls: maxCalls, MaxWaitDuration: time.Millisecond})
	require.NoError(t, err)
	rt := newRetry(t, retry.Config{MaxAttempts: 2, WaitDuration: retry.NoWait})
	var recordedOK, recordedFailed atomic.Int64
	cb.Subscribe(func(e circuitbreaker.Event) {
		switch e.Type {
		case circuitbreaker.EventSuccess:
			recordedOK.Add(1)
		case circuitbreaker.EventError:
			recordedFailed.Add(1)
		}
	})
	ps := levee.Patterns{Retry: rt, CircuitBreaker: cb, Bulkhead: bh}
	p := levee.DefaultPipeline[int](ps, nil)

	var (
		wantOK, wantFailed atomic.Int64
		running            inflight
		incomplete         atomic.Int64 // streams whose result count was wrong
		streams            atomic.Int64
	)
	// call counts the outcome the breaker records for it: a success, a failure, or nothing
	// for a call ended by its caller's cancellation.
	call := func(ctx context.Context, v int) (int, error) {
		running.enter()
		defer running.leave()
		if v%5 == 0 {
			select {
			case <-time.After(time.Duration(v%3) * 50 * time.Microsecond):
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		if v%4 == 0 {
			wantFailed.Add(1)
			return 0, errBoom
		}
		wantOK.Add(1)
		return v, nil
	}

	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for range 40 {
				streams.Add(1)
				ctx, cancel := context.WithCancel(context.Background())
				switch r.IntN(3) {
				case 0, 1:
					n := r.IntN(40)
					vs := make([]int, n)
					for i := range vs {
						vs[i] = r.IntN(1000)
					}
					opts := []stream.Option{stream.Concurrency(1 + r.IntN(4)), stream.Buffer(r.IntN(3))}
					if r.IntN(2) == 0 {
						opts = append(opts, stream.Unordered())
					}
					stop := r.IntN(4) == 0
					if stop {
						opts = append(opts, stream.StopOnError())
					}
					cancelAfter := -1
					if r.IntN(3) == 0 {
						cancelAfter = r.IntN(n + 1)
					}
					var got int
					if r.IntN(2) == 0 {
						out, err := stream.Map(ctx, feed(ctx, vs...), p, call, opts...)
						if err != nil {
							panic(err)
						}
						for range out {
							if got++; got == cancelAfter {
								cancel()
							}
						}
					} else {
						keep := func(ctx context.Context, v int) (bool, error) {
							x, err := call(ctx, v)
							return x%2 == 0, err
						}
						out, err := stream.Filter(ctx, feed(ctx, vs...), levee.DefaultPipeline[bool](ps, nil), keep, opts...)
						if err != nil {
							panic(err)
						}
						for range out {
							if got++; got == cancelAfter {
								cancel()
							}
						}
						got = -1 // Filter drops elements: no count to check
					}
					if cancelAfter < 0 && !stop && got >= 0 && got != n {
						incomplete.Add(1)
					}
				case 2:
					elements := r.IntN(4)
					fail := r.IntN(3) == 0
					cancels := r.IntN(3) == 0
					src := stream.Source[int](func(ctx context.Context, emit func(int) error) error {
						running.enter()
						defer running.leave()
						for e := range elements {
							if err := emit(e); err != nil {
								return err
							}
						}
						if cancels {
							if elements > 0 {
								wantOK.Add(1) // the consumer cancels after reading them all
							}
							<-ctx.Done()
							return ctx.Err()
						}
						if fail {
							wantFailed.Add(1)
							return errBoom
						}
						wantOK.Add(1)
						return nil
					})
					items, err := stream.Subscribe(ctx, ps, src)
					if err != nil {
						panic(err)
					}
					if cancels && elements == 0 {
						cancel() // nothing to read: the source is cancelled wherever it is
					}
					read := 0
					for it := range items {
						if it.Err != nil {
							continue
						}
						if read++; cancels && read == elements {
							cancel()
						}
					}
				}
				cancel()
			}
		})
	}
	wg.Wait()

	assert.LessOrEqual(t, running.max.Load(), int64(maxCalls), "the bulkhead bounds every call")
	assert.Equal(t, maxCalls, available(bh), "every bulkhead permit is back")
	assert.Zero(t, bh.Metrics().NumberOfWaitingCalls)
	assert.Equal(t, wantOK.Load(), recordedOK.Load(), "successes recorded by the breaker")
	assert.Equal(t, wantFailed.Load(), recordedFailed.Load(), "failures recorded by the breaker")
	assert.Zero(t, incomplete.Load(), "streams with a result missing")
	assert.Equal(t, int64(64*40), streams.Load())
	t.Logf("breaker recorded %d successes and %d failures; state %v, %d refusals",
		recordedOK.Load(), recordedFailed.Load(), cb.State(), cb.Metrics().NumberOfNotPermittedCalls)
}
