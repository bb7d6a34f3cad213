package stream_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/stream"
)

// guards is a full set of patterns whose permits can be counted after a scenario: the breaker
// is HALF_OPEN with 10 probe permits and decides only after 10 outcomes, so every permit it
// hands out is either recorded or must come back.
type guards struct {
	ps levee.Patterns
	cb *circuitbreaker.CircuitBreaker
	bh *bulkhead.Bulkhead
	rl *ratelimiter.RateLimiter
}

const probes = 10

func newGuards(t *testing.T, bulkheadWait time.Duration, rateLimited bool) guards {
	t.Helper()
	cb := newBreaker(t, circuitbreaker.Config{PermittedNumberOfCallsInHalfOpenState: probes, MinimumNumberOfCalls: probes})
	require.NoError(t, cb.TransitionToOpenState())
	require.NoError(t, cb.TransitionToHalfOpenState())
	bh, err := bulkhead.New("bh", bulkhead.Config{MaxConcurrentCalls: 3, MaxWaitDuration: bulkheadWait})
	require.NoError(t, err)
	rlc := ratelimiter.Config{LimitForPeriod: 1000, LimitRefreshPeriod: time.Hour}
	if rateLimited {
		// One waiter at most: the next one would wait longer than TimeoutDuration and is
		// refused at once. (Of several cancelled waiters, only the last reservation made can
		// be given back: see the ratelimiter package.)
		rlc = ratelimiter.Config{LimitForPeriod: 1, LimitRefreshPeriod: time.Hour, TimeoutDuration: 90 * time.Minute}
	}
	rl := newRateLimiter(t, rlc)
	rt := newRetry(t, retry.Config{MaxAttempts: 2, WaitDuration: time.Hour})
	return guards{ps: levee.Patterns{Retry: rt, CircuitBreaker: cb, RateLimiter: rl, Bulkhead: bh}, cb: cb, bh: bh, rl: rl}
}

// check verifies that nothing is held: every bulkhead permit is free and every breaker probe
// permit not spent on a recorded outcome can be taken again; recorded is the number of
// outcomes the breaker must have recorded.
func (g guards) check(t *testing.T, recorded int) {
	t.Helper()
	assert.Equal(t, 3, available(g.bh), "bulkhead permits")
	assert.Zero(t, g.bh.Metrics().NumberOfWaitingCalls)
	assert.Zero(t, g.rl.Metrics().NumberOfWaitingCalls)
	m := g.cb.Metrics()
	assert.Equal(t, recorded, m.NumberOfBufferedCalls, "outcomes recorded by the breaker")
	assert.Equal(t, circuitbreaker.HalfOpen, g.cb.State())
	free := 0
	for tryAcquire(g.cb) == nil {
		free++
	}
	assert.Equal(t, probes-recorded, free, "breaker probe permits")
}

// TestMapCancellationAtEachStage cancels the consumer's context at each stage of an element's
// life and checks that every goroutine ended (goleak) and every permit came back.
func TestMapCancellationAtEachStage(t *testing.T) {
	for _, tc := range []struct {
		name string
		// call is the guarded function; reached is closed once the stage is reached.
		call        func(reached func()) func(context.Context, int) (int, error)
		rateLimited bool
		read        bool // the consumer reads (else a result waits to be sent)
		recorded    int  // breaker outcomes per call made before the cancel
		calls       int  // calls reached before the cancel, for concurrency 1
		results     int  // results received
	}{
		{name: "before the first element", call: func(func()) func(context.Context, int) (int, error) {
			return func(context.Context, int) (int, error) { panic("not called") }
		}, read: true},
		{name: "while a call runs", call: func(reached func()) func(context.Context, int) (int, error) {
			return func(ctx context.Context, v int) (int, error) {
				reached()
				<-ctx.Done()
				return 0, ctx.Err()
			}
		}, read: true, calls: 1},
		{name: "while a retry waits", call: func(reached func()) func(context.Context, int) (int, error) {
			return func(ctx context.Context, v int) (int, error) {
				reached()
				return 0, errBoom
			}
		}, read: true, recorded: 1, calls: 1},
		{name: "while a result waits to be sent", call: func(reached func()) func(context.Context, int) (int, error) {
			return func(ctx context.Context, v int) (int, error) {
				reached()
				return v, nil
			}
		}, recorded: 1, calls: 1},
		// The test takes the only permission of the cycle: one element waits for the next
		// cycle, and with concurrency 3 (unordered) the four others are refused at once.
		{name: "while waiting for the rate limiter", rateLimited: true, call: func(reached func()) func(context.Context, int) (int, error) {
			return func(ctx context.Context, v int) (int, error) {
				reached()
				return v, nil
			}
		}, read: true},
	} {
		for _, c := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s concurrency %d", tc.name, c), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					g := newGuards(t, 0, tc.rateLimited)
					opts := []stream.Option{stream.Concurrency(c), stream.Buffer(0)} // a result waits for the consumer
					wantResults := tc.results
					if tc.rateLimited {
						require.NoError(t, g.rl.AcquirePermission(context.Background(), 1))
						opts = append(opts, stream.Unordered())
						if c > 1 {
							wantResults = 4 // every element but the one waiting is refused
						}
					}
					ctx, cancel := context.WithCancel(context.Background())
					var calls atomic.Int64
					in := make(chan int)
					go func() {
						defer close(in)
						if tc.name == "before the first element" {
							<-ctx.Done()
							return
						}
						for i := range 5 {
							select {
							case in <- i:
							case <-ctx.Done():
								return
							}
						}
					}()
					out, err := stream.Map(ctx, in, levee.DefaultPipeline[int](g.ps, nil),
						tc.call(func() { calls.Add(1) }), opts...)
					require.NoError(t, err)
					var got []stream.Result[int, int]
					var reading chan struct{}
					if tc.read {
						reading = make(chan struct{})
						go func() { got = drain(out); close(reading) }()
					}
					synctest.Wait()
					n := int(calls.Load())
					if c == 1 {
						assert.Equal(t, tc.calls, n)
					}
					cancel()
					if tc.read {
						<-reading
					} else {
						got = drain(out)
					}
					assert.Len(t, got, wantResults, "nothing is sent once the consumer cancelled")
					for _, r := range got {
						if tc.rateLimited {
							assert.ErrorIs(t, r.Err, ratelimiter.ErrRequestNotPermitted)
						} else {
							assert.NoError(t, r.Err)
						}
					}
					if tc.rateLimited {
						assert.Equal(t, 0, g.rl.Metrics().AvailablePermissions, "the reservation came back")
					}
					g.check(t, tc.recorded*n)
				})
				goleak.VerifyNone(t)
			})
		}
	}
}

// TestSubscribeCancellationAtEachStage does the same for a guarded subscription.
func TestSubscribeCancellationAtEachStage(t *testing.T) {
	for _, tc := range []struct {
		name         string
		src          stream.Source[int]
		rateLimited  bool
		bulkheadFull bool
		read         int // elements the consumer reads before cancelling; -1: it reads nothing and keeps
		//             the source waiting in emit
		recorded int // breaker outcomes recorded (the success of an attempt that emitted)
		items    int // items received
	}{
		{name: "before the first element", src: func(ctx context.Context, emit func(int) error) error {
			<-ctx.Done()
			return ctx.Err()
		}},
		{name: "while the stream runs", src: func(ctx context.Context, emit func(int) error) error {
			if err := emit(1); err != nil {
				return err
			}
			<-ctx.Done()
			return ctx.Err()
		}, read: 1, recorded: 1, items: 1},
		{name: "while a retry waits", src: func(ctx context.Context, emit func(int) error) error {
			if err := emit(1); err != nil {
				return err
			}
			return errBoom
		}, read: 1, recorded: 1, items: 1},
		{name: "while an element waits to be sent", src: func(ctx context.Context, emit func(int) error) error {
			return emit(1)
		}, read: -1, recorded: 1},
		{name: "while waiting for the rate limiter", rateLimited: true, src: func(ctx context.Context, emit func(int) error) error {
			return emit(1)
		}},
		{name: "while waiting for the bulkhead", bulkheadFull: true, src: func(ctx context.Context, emit func(int) error) error {
			return emit(1)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := newGuards(t, time.Hour, tc.rateLimited)
				if tc.rateLimited {
					require.NoError(t, g.rl.AcquirePermission(context.Background(), 1))
				}
				if tc.bulkheadFull {
					for range 3 {
						require.True(t, g.bh.TryAcquire())
					}
				}
				ctx, cancel := context.WithCancel(context.Background())
				items, err := stream.Subscribe(ctx, g.ps, tc.src)
				require.NoError(t, err)
				var got []stream.Item[int]
				for range tc.read {
					got = append(got, <-items)
				}
				synctest.Wait()
				if tc.rateLimited {
					assert.Equal(t, 1, g.rl.Metrics().NumberOfWaitingCalls)
				}
				if tc.bulkheadFull {
					assert.Equal(t, 1, g.bh.Metrics().NumberOfWaitingCalls)
				}
				cancel()
				got = append(got, drain(items)...)
				if tc.bulkheadFull {
					for range 3 {
						g.bh.Release() // the test's own permits
					}
				}
				assert.Len(t, got, tc.items)
				for _, it := range got {
					assert.NoError(t, it.Err)
				}
				if tc.rateLimited {
					assert.Equal(t, 0, g.rl.Metrics().AvailablePermissions, "the reservation came back")
				}
				g.check(t, tc.recorded)
			})
			goleak.VerifyNone(t)
		})
	}
}
