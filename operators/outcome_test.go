package operators_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/operators"
	"github.com/levee-go/levee/timelimiter"
)

// A consumer that takes the single value and cancels ends the subscription from outside: the
// breaker and the time limiter record the same outcome, a success once an item came and
// nothing before. The time limiter recorded nothing while the breaker recorded a success.
func TestBreakerAndTimeLimiterAgreeWhenTheConsumerCancels(t *testing.T) {
	for _, tc := range []struct {
		name   string
		items  []any
		events []string
	}{
		{"after the single value", []any{7}, []string{"SUCCESS 300ms"}},
		{"before any value", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tl := newTimeLimiter(t, time.Second)
				cb := newBreaker(t, circuitbreaker.Config{SlidingWindowSize: 100, MinimumNumberOfCalls: 100})
				var tlEvents, cbEvents []string
				tl.Subscribe(func(e timelimiter.Event) { tlEvents = append(tlEvents, e.Type.String()+" "+e.Duration.String()) })
				cb.Subscribe(func(e circuitbreaker.Event) {
					if e.Type == circuitbreaker.EventSuccess || e.Type == circuitbreaker.EventError {
						cbEvents = append(cbEvents, e.Type.String()+" "+e.Duration.String())
					}
				})
				p := newProbe(tc.items...)
				p.hang = true // the single value, and the stream stays open
				obs, err := operators.Guard(levee.Patterns{CircuitBreaker: cb, TimeLimiter: tl}, nil, p.Source(nil))
				require.NoError(t, err)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				ch := obs.Observe(rxgo.WithContext(ctx))
				var got []string
				for range tc.items {
					got = append(got, show(<-ch))
				}
				time.Sleep(300 * time.Millisecond)
				cancel()
				for it := range ch {
					got = append(got, show(it))
				}
				synctest.Wait()
				assert.Len(t, got, len(tc.items))
				assert.Equal(t, tc.events, tlEvents)
				assert.Equal(t, tc.events, cbEvents)
				assert.Equal(t, timelimiter.Metrics{NumberOfSuccessfulCalls: int64(len(tc.items))}, tl.Metrics())
				assert.Equal(t, len(tc.items), cb.Metrics().NumberOfSuccessfulCalls)
			})
		})
	}
}
