package leveeconfig_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveeconfig"
	"github.com/levee-go/levee/registry"
)

// compositionFile is the scenario "composition order": 3 attempts without wait, a breaker
// window of 6 calls, and the aspect orders given.
func compositionFile(orders string) string {
	return `resilience4j:
  circuitbreaker:
` + orders + `    instances:
      gateway:
        slidingWindowSize: 6
        minimumNumberOfCalls: 6
  retry:
    instances:
      gateway:
        maxAttempts: 3
        waitDuration: 0
`
}

// sixBrokenRequests runs 6 requests through the pipeline of "gateway" against a broken
// gateway and returns the calls the gateway received, the failures the breaker recorded, the
// calls it refused and its state.
func sixBrokenRequests(t *testing.T, c *leveeconfig.Config) (received, failed, blocked int, state string) {
	t.Helper()
	reg, err := c.Registry()
	require.NoError(t, err)
	p, err := leveeconfig.Pipeline[string](c, reg, "gateway", nil)
	require.NoError(t, err)
	gw := &fakeGateway{broken: true}
	for range 6 {
		_, err := p.Execute(context.Background(), func(ctx context.Context) (string, error) { return gw.charge(ctx, "DH001") })
		require.Error(t, err)
	}
	cb, _ := reg.FindCircuitBreaker("gateway")
	m := cb.Metrics()
	return gw.received(), m.NumberOfFailedCalls, int(m.NumberOfNotPermittedCalls), m.State.String()
}

func TestDefaultOrderRetryOutsideTheBreaker(t *testing.T) {
	c, err := load(t, compositionFile(""))
	require.NoError(t, err)
	assert.Equal(t, "Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(call)))))", leveeconfig.DescribeOrder(c.Order))
	received, failed, blocked, state := sixBrokenRequests(t, c)
	assert.Equal(t, []any{6, 6, 4, "OPEN"}, []any{received, failed, blocked, state})
	assert.Empty(t, c.Warnings)
}

func TestAspectOrdersPutTheBreakerOutside(t *testing.T) {
	c, err := load(t, `resilience4j:
  circuitbreaker:
    circuitBreakerAspectOrder: 1
    instances:
      gateway:
        slidingWindowSize: 6
        minimumNumberOfCalls: 6
  retry:
    retryAspectOrder: 2
    instances:
      gateway:
        maxAttempts: 3
        waitDuration: 0
  ratelimiter:
    rateLimiterAspectOrder: 3
  timelimiter:
    timeLimiterAspectOrder: 4
  bulkhead:
    bulkheadAspectOrder: 5
`)
	require.NoError(t, err)
	assert.Equal(t, "CircuitBreaker(Retry(RateLimiter(TimeLimiter(Bulkhead(call)))))", leveeconfig.DescribeOrder(c.Order))
	assert.Empty(t, c.Warnings, "every order set: no warning")
	received, failed, blocked, state := sixBrokenRequests(t, c)
	assert.Equal(t, []any{18, 6, 0, "OPEN"}, []any{received, failed, blocked, state})
}

func TestSomeAspectOrdersOnlyIsAWarningNamingTheOrder(t *testing.T) {
	c, err := load(t, compositionFile("    circuitBreakerAspectOrder: 1\n"))
	require.NoError(t, err)
	assert.Equal(t, []registry.Pattern{registry.CircuitBreaker, registry.Retry, registry.RateLimiter,
		registry.TimeLimiter, registry.Bulkhead}, c.Order)
	require.Len(t, c.Warnings, 1)
	assert.Equal(t, "app.yml:3: only circuitBreakerAspectOrder of the 5 aspect orders set; the others keep Spring's defaults "+
		"(retryAspectOrder: 2147483643 (Integer.MAX_VALUE-4), bulkheadAspectOrder: 2147483647 (Integer.MAX_VALUE), "+
		"rateLimiterAspectOrder: 2147483645 (Integer.MAX_VALUE-2), timeLimiterAspectOrder: 2147483646 (Integer.MAX_VALUE-1)), "+
		"so the order is CircuitBreaker(Retry(RateLimiter(TimeLimiter(Bulkhead(call)))))",
		c.Warnings[0].String())
	received, _, _, _ := sixBrokenRequests(t, c)
	assert.Equal(t, 18, received)
}

// Equal aspect orders are refused, naming both keys: Spring's order between them is arbitrary.
func TestEqualAspectOrdersAreRefused(t *testing.T) {
	_, err := load(t, `resilience4j:
  circuitbreaker:
    circuitBreakerAspectOrder: 2147483643
`)
	assert.EqualError(t, err, "app.yml:3: retryAspectOrder (default) and circuitBreakerAspectOrder (app.yml:3) are both 2147483643: "+
		"Spring orders equal aspect orders arbitrarily, give them different values")
	_, err = load(t, `resilience4j:
  retry:
    retryAspectOrder: 1
  circuitbreaker:
    circuitBreakerAspectOrder: 1
  ratelimiter:
    rateLimiterAspectOrder: 3
  timelimiter:
    timeLimiterAspectOrder: 4
  bulkhead:
    bulkheadAspectOrder: 5
`)
	assert.EqualError(t, err, "app.yml:5: retryAspectOrder (app.yml:3) and circuitBreakerAspectOrder (app.yml:5) are both 1: "+
		"Spring orders equal aspect orders arbitrarily, give them different values")
}

func TestAspectOrderMustBeAnInteger(t *testing.T) {
	_, err := load(t, "resilience4j:\n  retry:\n    retryAspectOrder: first\n")
	assert.EqualError(t, err, `app.yml:3: resilience4j.retry.retryAspectOrder: "first" is not an integer in [-2147483648, 2147483647]`)
}

func TestPipelineOfAnUndeclaredName(t *testing.T) {
	c, err := load(t, compositionFile(""))
	require.NoError(t, err)
	reg, err := c.Registry()
	require.NoError(t, err)
	_, err = leveeconfig.Pipeline[string](c, reg, "stock", nil)
	assert.EqualError(t, err, `leveeconfig: pipeline "stock": app.yml declares no retry, circuitbreaker, ratelimiter, timelimiter or bulkhead instance of that name`)
}

func TestPipelineWithFallbackOutermost(t *testing.T) {
	c, err := load(t, compositionFile(""))
	require.NoError(t, err)
	reg, err := c.Registry()
	require.NoError(t, err)
	p, err := leveeconfig.Pipeline(c, reg, "gateway", pending(t))
	require.NoError(t, err)
	gw := &fakeGateway{broken: true}
	ctx := context.WithValue(context.Background(), orderKey{}, "DH1")
	got, err := p.Execute(ctx, func(ctx context.Context) (string, error) { return gw.charge(ctx, "DH1") })
	require.NoError(t, err)
	assert.Equal(t, "PENDING:DH1 (GatewayException)", got)
	assert.Equal(t, 3, gw.received(), "the fallback answers once the retry has given up")
}
