package stream_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/stream"
	"github.com/levee-go/levee/timelimiter"
)

// A consumer that takes what it wants and cancels ends the attempt from outside: the breaker
// and the time limiter must record the same outcome for it, a success once an element came out
// and nothing before. The time limiter recorded nothing after an element while the breaker
// recorded a success.
func TestSubscribeBreakerAndTimeLimiterAgreeWhenTheConsumerCancels(t *testing.T) {
	for _, tc := range []struct {
		name     string
		emitted  int
		want     []int
		tlEvents []string
		cbEvents []string
	}{
		{"after the single element", 1, []int{0}, []string{"SUCCESS 300ms"}, []string{"SUCCESS 300ms"}},
		{"before any element", 0, nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tl := newTimeLimiter(t, timelimiterConfig(time.Second))
				cb := newBreaker(t, breakerConfig())
				var tlEvents, cbEvents []string
				tl.Subscribe(func(e timelimiter.Event) { tlEvents = append(tlEvents, e.Type.String()+" "+e.Duration.String()) })
				cb.Subscribe(func(e circuitbreaker.Event) {
					if e.Type == circuitbreaker.EventSuccess || e.Type == circuitbreaker.EventError {
						cbEvents = append(cbEvents, e.Type.String()+" "+e.Duration.String())
					}
				})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				items, err := stream.Subscribe(ctx, levee.Patterns{CircuitBreaker: cb, TimeLimiter: tl},
					stream.Source[int](func(ctx context.Context, emit func(int) error) error {
						for i := range tc.emitted {
							if err := emit(i); err != nil {
								return err
							}
						}
						<-ctx.Done() // a single value, and the stream stays open
						return ctx.Err()
					}))
				require.NoError(t, err)
				var got []int
				if tc.emitted > 0 {
					got = append(got, (<-items).Value)
				}
				time.Sleep(300 * time.Millisecond)
				cancel()
				rest := drain(items)
				assert.Empty(t, rest)
				assert.Equal(t, tc.want, got)
				assert.Equal(t, tc.tlEvents, tlEvents)
				assert.Equal(t, tc.cbEvents, cbEvents)
				assert.Equal(t, timelimiter.Metrics{NumberOfSuccessfulCalls: int64(tc.emitted)}, tl.Metrics())
				assert.Equal(t, tc.emitted, cb.Metrics().NumberOfSuccessfulCalls)
				assert.Equal(t, 0, cb.Metrics().NumberOfFailedCalls)
			})
		})
	}
}

// Retry ending an attempt to start over, after an element matched RetryOnResultPredicate, ends
// it from outside too: one success in each pattern for that attempt.
func TestSubscribeBreakerAndTimeLimiterAgreeWhenRetryStartsOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTimeLimiter(t, timelimiterConfig(time.Second))
		cb := newBreaker(t, breakerConfig())
		rt := newRetry(t, retry.Config{MaxAttempts: 2, WaitDuration: retry.NoWait,
			RetryOnResultPredicate: func(v any) bool { return v.(int) < 0 }})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		items, err := stream.Subscribe(ctx, levee.Patterns{Retry: rt, CircuitBreaker: cb, TimeLimiter: tl},
			stream.Source[int](func(ctx context.Context, emit func(int) error) error {
				time.Sleep(100 * time.Millisecond)
				if err := emit(-1); err != nil { // the first attempt's element matches
					return err
				}
				return emit(1)
			}))
		require.NoError(t, err)
		assert.Equal(t, []int{-1, 1}, itemValues(drain(items)), "the last attempt delivers what matched")
		assert.Equal(t, timelimiter.Metrics{NumberOfSuccessfulCalls: 2}, tl.Metrics())
		assert.Equal(t, 2, cb.Metrics().NumberOfSuccessfulCalls)
	})
}
