package leveeconfig_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/leveeconfig"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
)

// paymentErrors is the table of the scenario's Java exceptions.
var paymentErrors = map[string]error{
	"demo.r4j.GatewayException":      payment.ErrGateway,
	"demo.r4j.InvalidOrderException": payment.ErrInvalidOrder,
}

// fakeGateway answers as the scenario's gateway, in process: orders starting with BAD are
// refused with 422, a broken gateway answers 503. It counts the calls it receives.
type fakeGateway struct {
	mu     sync.Mutex
	calls  int
	broken bool
}

func (g *fakeGateway) charge(_ context.Context, order string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls++
	switch {
	case strings.HasPrefix(order, "BAD"):
		return "", &payment.InvalidOrderError{Order: order, Status: 422}
	case g.broken:
		return "", &payment.GatewayError{Status: 503}
	}
	return "PAID:" + order, nil
}

func (g *fakeGateway) received() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls
}

type orderKey struct{}

// pending is the scenario's fallback: an invalid order goes back as it is, anything else is
// "PENDING:<order> (<error kind>)".
func pending(t *testing.T) *fallback.Fallback[string] {
	f, err := fallback.New("payment",
		fallback.OnError(payment.ErrInvalidOrder, fallback.FailFast[string](func(cause error) error { return cause })),
		fallback.OnAny(func(ctx context.Context, err error) (string, error) {
			kind := "GatewayException"
			if errors.Is(err, circuitbreaker.ErrCallNotPermitted) {
				kind = "CallNotPermittedException"
			}
			return fmt.Sprintf("PENDING:%s (%s)", ctx.Value(orderKey{}), kind), nil
		}),
	)
	require.NoError(t, err)
	return f
}

func breakerLine(cb *circuitbreaker.CircuitBreaker) string {
	m := cb.Metrics()
	return fmt.Sprintf("%s | failureRate %.1f%% | failed %d | notPermitted %d",
		m.State, m.FailureRate, m.NumberOfFailedCalls, m.NumberOfNotPermittedCalls)
}

func TestApplicationYmlLoadsAsIs(t *testing.T) {
	cfg, err := leveeconfig.Load("testdata/application.yml", leveeconfig.Options{Errors: paymentErrors, Environ: []string{}})
	require.NoError(t, err)

	assert.Equal(t, []string{"payment"}, cfg.Names(registry.CircuitBreaker))
	assert.Equal(t, []string{"payment"}, cfg.Names(registry.Retry))
	assert.Equal(t, []string{"payment"}, cfg.Names(registry.Bulkhead))
	assert.Empty(t, cfg.Names(registry.RateLimiter))

	cb := cfg.CircuitBreakers.Instances["payment"]
	assert.Equal(t, circuitbreaker.Config{
		SlidingWindowType:                     circuitbreaker.CountBased,
		SlidingWindowSize:                     10,
		MinimumNumberOfCalls:                  5,
		FailureRateThreshold:                  50,
		WaitDurationInOpenState:               3 * time.Second,
		PermittedNumberOfCallsInHalfOpenState: 2,
		IgnoreErrors:                          []error{payment.ErrInvalidOrder},
	}, cb)

	rt := cfg.Retries.Instances["payment"]
	assert.Equal(t, 3, rt.MaxAttempts)
	assert.Equal(t, time.Duration(0), rt.WaitDuration)
	require.NotNil(t, rt.IntervalFunction)
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond},
		[]time.Duration{rt.IntervalFunction(1), rt.IntervalFunction(2), rt.IntervalFunction(3)})
	assert.Equal(t, []error{payment.ErrGateway}, rt.RetryErrors)
	assert.Equal(t, []error{payment.ErrInvalidOrder}, rt.IgnoreErrors)
	assert.Empty(t, rt.RetryRejections, "CallNotPermittedException ignored: rejections are not retried")

	assert.Equal(t, bulkhead.Config{MaxConcurrentCalls: 3}, cfg.Bulkheads.Instances["payment"])

	assert.Equal(t, []registry.Pattern{registry.Retry, registry.CircuitBreaker, registry.RateLimiter,
		registry.TimeLimiter, registry.Bulkhead}, cfg.Order)
	assert.Empty(t, cfg.Warnings, "registerHealthIndicator is honoured through StatusOptions")
}

// TestApplicationYmlScenarioAToD runs the scenario's steps A to D through instances built
// from testdata/application.yml alone.
func TestApplicationYmlScenarioAToD(t *testing.T) {
	cfg, err := leveeconfig.Load("testdata/application.yml", leveeconfig.Options{Errors: paymentErrors, Environ: []string{}})
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		reg, err := cfg.Registry()
		require.NoError(t, err)
		pay, err := leveeconfig.Pipeline(cfg, reg, "payment", pending(t))
		require.NoError(t, err)
		cb, ok := reg.FindCircuitBreaker("payment")
		require.True(t, ok)
		gw := &fakeGateway{}
		call := func(order string) (string, error) {
			ctx := context.WithValue(context.Background(), orderKey{}, order)
			return pay.Execute(ctx, func(ctx context.Context) (string, error) { return gw.charge(ctx, order) })
		}

		// A. healthy gateway
		got, err := call("DH001")
		require.NoError(t, err)
		assert.Equal(t, "PAID:DH001", got)

		// B. an invalid order: no retry, not counted by the breaker
		before := gw.received()
		_, err = call("BAD1")
		var invalid *payment.InvalidOrderError
		require.ErrorAs(t, err, &invalid)
		assert.Equal(t, "invalid order BAD1 (HTTP 422)", invalid.Error())
		assert.Equal(t, 1, gw.received()-before)
		assert.Equal(t, 1, cb.Metrics().NumberOfBufferedCalls)

		// C. a broken gateway, 8 requests
		gw.broken = true
		var calls []int
		var answers []string
		start := time.Now()
		var firstTook time.Duration
		for i := 1; i <= 8; i++ {
			before := gw.received()
			got, err := call(fmt.Sprintf("DH%03d", i))
			require.NoError(t, err)
			if i == 1 {
				firstTook = time.Since(start)
			}
			calls = append(calls, gw.received()-before)
			answers = append(answers, got)
		}
		assert.Equal(t, []int{3, 1, 0, 0, 0, 0, 0, 0}, calls)
		assert.Equal(t, []string{
			"PENDING:DH001 (GatewayException)",
			"PENDING:DH002 (CallNotPermittedException)",
			"PENDING:DH003 (CallNotPermittedException)",
			"PENDING:DH004 (CallNotPermittedException)",
			"PENDING:DH005 (CallNotPermittedException)",
			"PENDING:DH006 (CallNotPermittedException)",
			"PENDING:DH007 (CallNotPermittedException)",
			"PENDING:DH008 (CallNotPermittedException)",
		}, answers)
		assert.Equal(t, 300*time.Millisecond, firstTook, "waits of 100ms then 200ms: exponential backoff ×2")
		assert.Equal(t, "OPEN | failureRate 80.0% | failed 4 | notPermitted 7", breakerLine(cb))

		// D. wait 3.2 s, then the gateway recovers
		time.Sleep(3200 * time.Millisecond)
		gw.broken = false
		var lines []string
		for i := 1; i <= 3; i++ {
			got, err := call(fmt.Sprintf("OK%d", i))
			require.NoError(t, err)
			lines = append(lines, got+" "+breakerLine(cb))
		}
		assert.Equal(t, []string{
			"PAID:OK1 HALF_OPEN | failureRate -1.0% | failed 0 | notPermitted 0",
			"PAID:OK2 CLOSED | failureRate -1.0% | failed 0 | notPermitted 0",
			"PAID:OK3 CLOSED | failureRate -1.0% | failed 0 | notPermitted 0",
		}, lines)
	})
}

// The retry built from the file does not retry a call the breaker refused: the second
// request of step C made one gateway call and one refused attempt, then stopped.
func TestApplicationYmlRetryStopsAtTheOpenBreaker(t *testing.T) {
	cfg, err := leveeconfig.Load("testdata/application.yml", leveeconfig.Options{Errors: paymentErrors, Environ: []string{}})
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		reg, err := cfg.Registry()
		require.NoError(t, err)
		rt, err := reg.Retry("payment")
		require.NoError(t, err)
		cb, err := reg.CircuitBreaker("payment")
		require.NoError(t, err)
		require.NoError(t, cb.TransitionToOpenState())
		attempts := 0
		_, err = retry.Execute(context.Background(), rt, func(ctx context.Context) (string, error) {
			attempts++
			return circuitbreaker.Execute(ctx, cb, func(context.Context) (string, error) { return "", nil })
		})
		require.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
		assert.Equal(t, 1, attempts)
	})
}
