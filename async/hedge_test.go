package async_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/ratelimiter"
)

// attempts is a call whose n-th invocation (from 0) behaves as plan[n]; it records when each
// invocation started and how it ended.
type attempts struct {
	mu        sync.Mutex
	start     time.Time
	plan      []step
	startedAt []time.Duration
	cancelled []int
}

type step struct {
	d   time.Duration
	v   string
	err error
}

func newAttempts(plan ...step) *attempts { return &attempts{start: time.Now(), plan: plan} }

func (a *attempts) call(ctx context.Context) (string, error) {
	a.mu.Lock()
	n := len(a.startedAt)
	a.startedAt = append(a.startedAt, time.Since(a.start))
	s := a.plan[n]
	a.mu.Unlock()
	v, err := after(s.d, s.v, s.err)(ctx)
	if ctx.Err() != nil && err == ctx.Err() {
		a.mu.Lock()
		a.cancelled = append(a.cancelled, n)
		a.mu.Unlock()
	}
	return v, err
}

const ms = time.Millisecond

func TestHedgeFastPrimaryStartsNoHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAttempts(step{d: 10 * ms, v: "primary"})
		v, out, err := async.Hedge(context.Background(), nil, a.call, 50*ms, 2)
		require.NoError(t, err)
		assert.Equal(t, "primary", v)
		assert.Equal(t, fallback.Outcome{}, out)
		assert.Equal(t, []time.Duration{0}, a.startedAt)
		assert.Equal(t, 10*ms, time.Since(a.start))
	})
}

// The primary is slow: a hedge starts after the delay, answers first, and the primary is
// cancelled; Hedge returns when the hedge answers.
func TestHedgeSlowPrimaryIsOvertakenAndCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb := bigBreaker(t)
		a := newAttempts(step{d: 200 * ms, v: "primary"}, step{d: 20 * ms, v: "hedge"})
		v, _, err := async.Hedge(context.Background(), levee.Compose[string]().WithCircuitBreaker(cb), a.call, 50*ms, 2)
		require.NoError(t, err)
		assert.Equal(t, "hedge", v)
		assert.Equal(t, 70*ms, time.Since(a.start))
		assert.Equal(t, []time.Duration{0, 50 * ms}, a.startedAt, "the second hedge was not needed")
		assert.Equal(t, []int{0}, a.cancelled)
		assert.Equal(t, [3]int{1, 0, 0}, breakerCounts(cb), "the cancelled primary is not recorded")
	})
}

func TestHedgeStartsAtMostMaxHedges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAttempts(step{d: 500 * ms, v: "0"}, step{d: 500 * ms, v: "1"}, step{d: 500 * ms, v: "2"})
		v, _, err := async.Hedge(context.Background(), nil, a.call, 100*ms, 2)
		require.NoError(t, err)
		assert.Equal(t, "0", v, "nobody overtook the primary")
		assert.Equal(t, []time.Duration{0, 100 * ms, 200 * ms}, a.startedAt)
		assert.Equal(t, 500*ms, time.Since(a.start))
		assert.ElementsMatch(t, []int{1, 2}, a.cancelled)
	})
}

// A failed attempt starts the next at once rather than after the delay, and resets the clock
// of the following one.
func TestHedgeFailureStartsTheNextAttemptAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAttempts(step{d: 10 * ms, err: errBoom}, step{d: 300 * ms, v: "1"}, step{d: 30 * ms, v: "2"})
		v, _, err := async.Hedge(context.Background(), nil, a.call, 100*ms, 2)
		require.NoError(t, err)
		assert.Equal(t, "2", v)
		assert.Equal(t, []time.Duration{0, 10 * ms, 110 * ms}, a.startedAt)
		assert.Equal(t, 140*ms, time.Since(a.start))
	})
}

func TestHedgeZeroDelayStartsEveryAttemptAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAttempts(step{d: 30 * ms, v: "0"}, step{d: 10 * ms, v: "1"}, step{d: 20 * ms, v: "2"})
		v, _, err := async.Hedge(context.Background(), nil, a.call, 0, 2)
		require.NoError(t, err)
		assert.Equal(t, "1", v)
		assert.Equal(t, []time.Duration{0, 0, 0}, a.startedAt)
		assert.ElementsMatch(t, []int{0, 2}, a.cancelled)
	})
}

func TestHedgeWithoutHedgesIsOneExecution(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAttempts(step{d: 300 * ms, err: errBoom})
		_, _, err := async.Hedge(context.Background(), nil, a.call, 10*ms, 0)
		assert.Same(t, errBoom, err)
		assert.Equal(t, []time.Duration{0}, a.startedAt)
	})
}

// An attempt refused by the open breaker does not start another at once, and with nothing else
// running Hedge gives up at once instead of waiting for the delay.
func TestHedgeRefusedByAnOpenBreakerGivesUpAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb := newBreaker(t, circuitbreaker.Config{InitialState: circuitbreaker.Open})
		var invoked atomic.Int64
		start := time.Now()
		_, _, err := async.Hedge(context.Background(), levee.Compose[int]().WithCircuitBreaker(cb),
			func(context.Context) (int, error) { invoked.Add(1); return 1, nil }, 50*ms, 3)
		assert.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
		assert.Zero(t, time.Since(start))
		assert.Zero(t, invoked.Load())
		assert.Equal(t, 1, cb.Metrics().NumberOfNotPermittedCalls, "one attempt, one refusal")
	})
}

// Hedges go through the bulkhead: with one permit, the hedge is refused while the primary holds
// it, and the primary's answer is returned.
func TestHedgesCountAgainstTheBulkhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh := newBulkhead(t, 1)
		var mu sync.Mutex
		var events []bulkhead.EventType
		bh.Subscribe(func(e bulkhead.Event) {
			mu.Lock()
			events = append(events, e.Type)
			mu.Unlock()
		})
		a := newAttempts(step{d: 200 * ms, v: "primary"}, step{d: 10 * ms, v: "hedge"})
		v, _, err := async.Hedge(context.Background(), levee.Compose[string]().WithBulkhead(bh), a.call, 50*ms, 2)
		require.NoError(t, err)
		assert.Equal(t, "primary", v)
		assert.Equal(t, []time.Duration{0}, a.startedAt, "no hedge reached the call")
		assert.Equal(t, 200*ms, time.Since(a.start))
		assert.Equal(t, []bulkhead.EventType{
			bulkhead.EventCallPermitted,
			bulkhead.EventCallRejected, // the hedge at 50ms
			bulkhead.EventCallRejected, // the hedge at 100ms: a refusal starts no attempt early
			bulkhead.EventCallFinished,
		}, events)
		assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
	})
}

func TestHedgesCountAgainstTheRateLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newRateLimiter(t, 2, time.Hour)
		var mu sync.Mutex
		var events []ratelimiter.EventType
		rl.Subscribe(func(e ratelimiter.Event) {
			mu.Lock()
			events = append(events, e.Type)
			mu.Unlock()
		})
		a := newAttempts(step{d: 200 * ms, v: "0"}, step{d: 200 * ms, v: "1"}, step{d: 10 * ms, v: "2"})
		v, _, err := async.Hedge(context.Background(), levee.Compose[string]().WithRateLimiter(rl), a.call, 50*ms, 2)
		require.NoError(t, err)
		assert.Equal(t, "0", v, "the third attempt was refused a permission")
		assert.Equal(t, []time.Duration{0, 50 * ms}, a.startedAt)
		assert.Equal(t, 0, rl.Metrics().AvailablePermissions)
		assert.Equal(t, []ratelimiter.EventType{
			ratelimiter.EventSuccessfulAcquire, ratelimiter.EventSuccessfulAcquire, ratelimiter.EventFailedAcquire,
		}, events)
	})
}

func TestHedgeAllFailedJoinsTheFailuresInAttemptOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		err0, err1 := errors.New("attempt 0"), errors.New("attempt 1")
		a := newAttempts(step{d: 100 * ms, err: err0}, step{d: 10 * ms, err: err1})
		_, _, err := async.Hedge(context.Background(), nil, a.call, 50*ms, 1)
		assert.Equal(t, "attempt 0\nattempt 1", err.Error())
		assert.ErrorIs(t, err, err0)
		assert.ErrorIs(t, err, err1)
	})
}

// The fallback's answer to a failed attempt counts as a failure for hedging (the next attempt
// starts at once) and is returned only when no attempt succeeds live.
func TestHedgeFallbackAnswerIsTheLastResort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := levee.Compose[string]().WithFallback(answering(t, "stale"))
		a := newAttempts(step{d: 10 * ms, err: errBoom}, step{d: 10 * ms, v: "live"})
		v, out, err := async.Hedge(context.Background(), p, a.call, 100*ms, 1)
		require.NoError(t, err)
		assert.Equal(t, "live", v)
		assert.False(t, out.Fallback)
		assert.Equal(t, []time.Duration{0, 10 * ms}, a.startedAt)

		b := newAttempts(step{d: 10 * ms, err: errBoom}, step{d: 10 * ms, err: errBuild})
		v, out, err = async.Hedge(context.Background(), p, b.call, 100*ms, 1)
		require.NoError(t, err)
		assert.Equal(t, "stale", v)
		assert.Equal(t, fallback.Outcome{Fallback: true, Cause: errBoom}, out, "the earliest attempt's answer")
	})
}

func TestHedgeParentCancellationCancelsEveryAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 120*ms)
		defer cancel()
		a := newAttempts(step{d: time.Hour}, step{d: time.Hour}, step{d: time.Hour})
		_, _, err := async.Hedge(ctx, nil, a.call, 50*ms, 5)
		assert.Equal(t, context.DeadlineExceeded, err)
		assert.Equal(t, []time.Duration{0, 50 * ms, 100 * ms}, a.startedAt)
		assert.ElementsMatch(t, []int{0, 1, 2}, a.cancelled)
	})
}

func TestHedgeInvalidArguments(t *testing.T) {
	for _, tc := range []struct {
		name      string
		call      levee.Call[int]
		delay     time.Duration
		maxHedges int
		want      string
	}{
		{"nil call", nil, ms, 1, levee.ErrNilCall.Error()},
		{"negative delay", value(1), -ms, 1, "async: Hedge delay must be >= 0, got -1ms"},
		{"negative maxHedges", value(1), ms, -1, "async: Hedge maxHedges must be >= 0, got -1"},
		{"unbounded maxHedges at once", value(1), 0, math.MaxInt,
			fmt.Sprintf("async: Hedge maxHedges must be at most MaxHedgesAtOnce (1000) with a delay of 0, which starts every attempt at once, got %d", math.MaxInt)},
		{"1001 at once", value(1), 0, async.MaxHedgesAtOnce + 1,
			"async: Hedge maxHedges must be at most MaxHedgesAtOnce (1000) with a delay of 0, which starts every attempt at once, got 1001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := async.Hedge(context.Background(), nil, tc.call, tc.delay, tc.maxHedges)
			assert.EqualError(t, err, tc.want)
		})
	}
}

func TestHedgeNilContext(t *testing.T) {
	v, _, err := async.Hedge(nil, nil, value(3), ms, 1) //nolint:staticcheck // nil ctx is allowed
	require.NoError(t, err)
	assert.Equal(t, 3, v)
}

// A huge maxHedges (hedge until the context ends) must not size anything by it: math.MaxInt
// overflowed maxHedges+1 and panicked in make, and 1<<40 asked for terabytes up front.
func TestHedgeHugeMaxHedges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, n := range []int{math.MaxInt, 1 << 40} {
			v, _, err := async.Hedge(context.Background(), nil, value(7), time.Second, n)
			require.NoError(t, err, n)
			assert.Equal(t, 7, v)

			// Hedging every 10ms until the deadline starts one attempt per delay, no more.
			ctx, cancel := context.WithTimeout(context.Background(), 95*time.Millisecond)
			b := newBlocker(0, nil)
			_, _, err = async.Hedge(ctx, nil, b.call, 10*time.Millisecond, n)
			cancel()
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.EqualValues(t, 10, b.startedN.Load())
			assert.EqualValues(t, 10, b.returned.Load())
		}
	})
}
