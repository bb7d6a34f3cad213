package levee_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
)

type callMarker struct{}

// recorder is a CallObserver that writes each event as a line, with the instant since start,
// and checks that the context it is given is the call's.
type recorder struct {
	t     *testing.T
	start time.Time
	mu    sync.Mutex
	lines []string
}

func (r *recorder) OnCallEvent(ctx context.Context, e levee.CallEvent) {
	assert.Equal(r.t, "call-1", ctx.Value(callMarker{}), "the call's own context")
	var line string
	switch e.Kind {
	case levee.CallAttempt:
		line = fmt.Sprintf("attempt %s/%s #%d err=%v", e.Pattern, e.Name, e.Attempt, e.Err)
	case levee.CallWait:
		line = fmt.Sprintf("wait %s/%s %v before #%d", e.Pattern, e.Name, e.Wait, e.Attempt)
	case levee.CallRejection:
		line = fmt.Sprintf("rejection %s/%s err=%v", e.Pattern, e.Name, e.Err)
	case levee.CallFallback:
		line = fmt.Sprintf("fallback %s/%s err=%v", e.Pattern, e.Name, e.Err)
	case levee.CallTransition:
		line = fmt.Sprintf("transition %s/%s %s->%s", e.Pattern, e.Name, e.From, e.To)
	}
	r.mu.Lock()
	r.lines = append(r.lines, fmt.Sprintf("%v %s", time.Since(r.start), line))
	r.mu.Unlock()
}

func TestCallObserverSeesEveryEventOfItsCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb := newBreaker(t, 2)
		rt := newRetry(t, 3, retry.Config{WaitDuration: 10 * time.Millisecond})
		p := levee.DefaultPipeline(levee.Patterns{Retry: rt, CircuitBreaker: cb}, newFallback(t, "stale"))
		b := &backend{}
		b.failing.Store(true)
		rec := &recorder{t: t, start: time.Now()}
		ctx := levee.WithCallObserver(context.WithValue(context.Background(), callMarker{}, "call-1"), rec)
		assert.Same(t, rec, levee.CallObserverFrom(ctx))

		v, err := p.Execute(ctx, b.call)
		require.NoError(t, err)
		assert.Equal(t, "stale", v)
		notPermitted := "circuitbreaker: CircuitBreaker 'cb' is OPEN and does not permit further calls"
		assert.Equal(t, []string{
			"0s attempt retry/retry #1 err=backend down",
			"0s wait retry/retry 10ms before #2",
			"10ms transition circuitbreaker/cb CLOSED->OPEN",
			"10ms attempt retry/retry #2 err=backend down",
			"10ms wait retry/retry 10ms before #3",
			"20ms rejection circuitbreaker/cb err=" + notPermitted,
			"20ms attempt retry/retry #3 err=" + notPermitted,
			"20ms fallback fallback/fb err=" + notPermitted,
		}, rec.lines)

		// Without an observer the same call reports nothing anywhere.
		_, err = p.Execute(context.Background(), b.call)
		require.NoError(t, err)
		assert.Len(t, rec.lines, 8)
	})
}

func TestCallObserverSeesBulkheadAndRateLimiterRejections(t *testing.T) {
	bh := levee.Must(bulkhead.New("bh", bulkhead.Config{MaxConcurrentCalls: 1}))
	require.NoError(t, bh.Acquire(context.Background()))
	defer bh.Release()
	rl := levee.Must(ratelimiter.New("rl", ratelimiter.Config{LimitForPeriod: 1, LimitRefreshPeriod: time.Hour, TimeoutDuration: ratelimiter.NoWait}))
	rec := &recorder{t: t}
	ctx := levee.WithCallObserver(context.WithValue(context.Background(), callMarker{}, "call-1"), rec)
	b := &backend{}

	_, err := levee.Compose[string]().WithBulkhead(bh).Execute(ctx, b.call)
	assert.ErrorIs(t, err, bulkhead.ErrBulkheadFull)
	limited := levee.Compose[string]().WithRateLimiter(rl)
	_, err = limited.Execute(ctx, b.call)
	require.NoError(t, err)
	_, err = limited.Execute(ctx, b.call)
	assert.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)
	require.Len(t, rec.lines, 2)
	assert.Contains(t, rec.lines[0], "rejection bulkhead/bh err=")
	assert.Contains(t, rec.lines[1], "rejection ratelimiter/rl err=")
	assert.Equal(t, int64(1), b.calls.Load())
}

func TestCallObserverTransitionOnProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb := levee.Must(circuitbreaker.New("cb", circuitbreaker.Config{PermittedNumberOfCallsInHalfOpenState: 1}))
		require.NoError(t, cb.TransitionToOpenState())
		require.NoError(t, cb.TransitionToHalfOpenState())
		rec := &recorder{t: t, start: time.Now()}
		ctx := levee.WithCallObserver(context.WithValue(context.Background(), callMarker{}, "call-1"), rec)
		_, err := levee.Compose[string]().WithCircuitBreaker(cb).Execute(ctx, (&backend{}).call)
		require.NoError(t, err)
		assert.Equal(t, []string{"0s transition circuitbreaker/cb HALF_OPEN->CLOSED"}, rec.lines)
	})
}

type nopObserver struct{}

func (nopObserver) OnCallEvent(context.Context, levee.CallEvent) {}

// An observer in the context adds no allocation to a successful call, and no observer costs
// nothing at all (TestSuccessPathAllocatesNothing).
func TestCallObserverSuccessPathAllocatesNothing(t *testing.T) {
	p := levee.DefaultPipeline(levee.Patterns{Retry: newRetry(t, 3, retry.Config{}), CircuitBreaker: newBreaker(t, 100)}, newFallback(t, "stale"))
	b := &backend{}
	call := b.call
	ctx := levee.WithCallObserver(context.Background(), nopObserver{})
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = p.Execute(ctx, call) }))
	assert.Equal(t, context.Background(), levee.WithCallObserver(context.Background(), nil))
	assert.Nil(t, levee.CallObserverFrom(context.Background()))
}
