package compose_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/compose"
	"github.com/levee-go/levee/internal/safe"
	"github.com/levee-go/levee/retry"
)

var errDown = errors.New("down")

func price(_ context.Context, sku int) (string, error) {
	if sku < 0 {
		return "", errDown
	}
	return "sku " + strconv.Itoa(sku), nil
}

// A *levee.Pipeline converts to its chain: the same patterns guard what Apply runs.
func TestPipelineConvertsToItsChain(t *testing.T) {
	cb, err := circuitbreaker.New("cb", circuitbreaker.Config{SlidingWindowSize: 10, MinimumNumberOfCalls: 10})
	require.NoError(t, err)
	rt, err := retry.New("rt", retry.Config{MaxAttempts: 2, WaitDuration: retry.NoWait})
	require.NoError(t, err)
	fb, err := fallback.New("fb", fallback.OnAny(fallback.Value("stale")))
	require.NoError(t, err)
	p := levee.Compose[string]().WithCircuitBreaker(cb).WithRetry(rt).WithFallback(fb)

	c := (*compose.Chain[string])(p)
	require.NotNil(t, c)
	v, out, err := compose.ApplyOutcome(context.Background(), c, price, -1)
	require.NoError(t, err)
	assert.Equal(t, "stale", v)
	assert.True(t, out.Fallback)
	assert.ErrorIs(t, out.Cause, errDown)
	assert.Equal(t, 2, cb.Metrics().NumberOfFailedCalls, "Retry(CircuitBreaker): one outcome per attempt")

	v, err = compose.Apply(context.Background(), c, price, 7)
	require.NoError(t, err)
	assert.Equal(t, "sku 7", v)
	assert.Equal(t, 1, cb.Metrics().NumberOfSuccessfulCalls)
}

// A nil pipeline has a nil chain, which guards nothing but still turns a panic into an error.
func TestNilChainGuardsNothing(t *testing.T) {
	var p *levee.Pipeline[string]
	c := (*compose.Chain[string])(p)
	assert.Nil(t, c)
	v, out, err := compose.ApplyOutcome(context.Background(), c, price, 3)
	require.NoError(t, err)
	assert.Equal(t, "sku 3", v)
	assert.Equal(t, fallback.Outcome{}, out)
	_, err = compose.Apply(context.Background(), c, func(context.Context, int) (string, error) { panic("boom") }, 3)
	var pe *safe.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "boom", pe.Value)
}

func TestNilFunctionIsRefused(t *testing.T) {
	c := compose.New[string]()
	_, err := compose.Apply[int](context.Background(), &c, nil, 1)
	assert.ErrorIs(t, err, safe.ErrNilCall)
	_, out, err := compose.ApplyOutcome[int](context.Background(), &c, nil, 1)
	assert.ErrorIs(t, err, safe.ErrNilCall)
	assert.Equal(t, fallback.Outcome{}, out)
	_, err = c.Execute(context.Background(), nil)
	assert.ErrorIs(t, err, safe.ErrNilCall)
}

// With the argument passed apart from the function, guarding an element allocates nothing:
// what stream, operators and async rely on.
func TestApplyAllocatesNothing(t *testing.T) {
	cb, err := circuitbreaker.New("cb", circuitbreaker.Config{SlidingWindowSize: 100})
	require.NoError(t, err)
	rt, err := retry.New("rt", retry.Config{MaxAttempts: 3, WaitDuration: time.Millisecond})
	require.NoError(t, err)
	fb, err := fallback.New("fb", fallback.OnAny(fallback.Value("stale")))
	require.NoError(t, err)
	c := (*compose.Chain[string])(levee.DefaultPipeline(levee.Patterns{Retry: rt, CircuitBreaker: cb}, fb))
	ctx := context.Background()
	calls := 0
	quote := func(_ context.Context, sku int) (string, error) {
		calls++
		if sku < 0 {
			return "", errDown
		}
		return "in stock", nil
	}
	sku := 1000 // above 255: boxing such an int would allocate
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = compose.Apply(ctx, c, quote, sku) }))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _, _ = compose.ApplyOutcome(ctx, c, quote, sku) }))
	assert.Equal(t, 2002, calls, "AllocsPerRun runs once more to warm up")
	assert.Equal(t, 0, cb.Metrics().NumberOfFailedCalls)
}

// With becomes a new chain and leaves the one it extends unchanged.
func TestWithLeavesTheReceiverUnchanged(t *testing.T) {
	fb, err := fallback.New("fb", fallback.OnAny(fallback.Value("stale")))
	require.NoError(t, err)
	base := compose.New[string]()
	withFallback := base.With(compose.Fallback(fb))
	_, err = compose.Apply(context.Background(), &base, price, -1)
	assert.ErrorIs(t, err, errDown)
	v, err := compose.Apply(context.Background(), &withFallback, price, -1)
	require.NoError(t, err)
	assert.Equal(t, "stale", v)
}
