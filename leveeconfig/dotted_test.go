package leveeconfig_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveeconfig"
	"github.com/levee-go/levee/registry"
)

func TestDottedTopLevelKey(t *testing.T) {
	c, err := load(t, `resilience4j.circuitbreaker:
  instances:
    payment:
      slidingWindowSize: 5
      minimumNumberOfCalls: 5
`)
	require.NoError(t, err)
	assert.Equal(t, []string{"payment"}, c.Names(registry.CircuitBreaker))
	assert.Equal(t, 5, c.CircuitBreakers.Instances["payment"].SlidingWindowSize)
	assert.Empty(t, c.Warnings)
}

func TestFullyDottedKeys(t *testing.T) {
	c, err := load(t, `resilience4j.circuitbreaker.instances.payment.slidingWindowSize: 5
resilience4j.circuitbreaker.instances.payment.minimum-number-of-calls: 3
resilience4j.retry.instances.[pay.v2].maxAttempts: 4
resilience4j.circuitbreaker.tags.app.team: checkout
`)
	require.NoError(t, err)
	assert.Equal(t, 5, c.CircuitBreakers.Instances["payment"].SlidingWindowSize)
	assert.Equal(t, 3, c.CircuitBreakers.Instances["payment"].MinimumNumberOfCalls)
	assert.Equal(t, 4, c.Retries.Instances["pay.v2"].MaxAttempts)
	assert.Equal(t, map[string]string{"app.team": "checkout"}, c.CircuitBreakers.Tags)
	set := c.Settings(registry.CircuitBreaker, "payment")
	assert.Contains(t, set, leveeconfig.Setting{Key: "slidingWindowSize", Value: "5", Source: leveeconfig.Source{File: "app.yml", Line: 1}})
	assert.Contains(t, set, leveeconfig.Setting{Key: "minimumNumberOfCalls", Value: "3", Source: leveeconfig.Source{File: "app.yml", Line: 2}})
}

func TestDottedKeysMergeWithNestedOnes(t *testing.T) {
	c, err := load(t, `resilience4j:
  circuitbreaker:
    configs:
      default:
        slidingWindowSize: 8
    instances:
      payment:
        minimumNumberOfCalls: 2
resilience4j.circuitbreaker.instances.payment.slidingWindowSize: 5
resilience4j.circuitbreaker.instances.stock:
  waitDurationInOpenState: 3s
resilience4j.retry:
  instances.payment.maxAttempts: 6
`)
	require.NoError(t, err)
	assert.Equal(t, []string{"payment", "stock"}, c.Names(registry.CircuitBreaker))
	pay := c.CircuitBreakers.Instances["payment"]
	assert.Equal(t, 5, pay.SlidingWindowSize)
	assert.Equal(t, 2, pay.MinimumNumberOfCalls)
	stock := c.CircuitBreakers.Instances["stock"]
	assert.Equal(t, 8, stock.SlidingWindowSize)
	assert.Equal(t, "3s", stock.WaitDurationInOpenState.String())
	assert.Equal(t, 6, c.Retries.Instances["payment"].MaxAttempts)
}

func TestDottedKeyGivenTwiceNamesBothLines(t *testing.T) {
	_, err := load(t, `resilience4j:
  circuitbreaker:
    instances:
      payment:
        slidingWindowSize: 10
resilience4j.circuitbreaker.instances.payment.sliding-window-size: 5
resilience4j.retry.instances.x: 3
`)
	assert.EqualError(t, err, `app.yml:6: resilience4j.circuitbreaker.instances.payment.sliding-window-size: set twice (first on line 5)
app.yml:7: resilience4j.retry.instances.x: must be a mapping of keys, got the value "3"`)

	_, err = load(t, `resilience4j.retry.instances.payment.maxAttempts: 2
resilience4j.retry.instances.payment: 3
resilience4j..retry: {}
`)
	assert.EqualError(t, err, `app.yml:2: resilience4j.retry.instances.payment: set twice (first on line 1)
app.yml:3: resilience4j..retry: an empty segment in a dotted key`)
}

// An alias that would repeat a large tree many times below an entry's keys is not expanded:
// the parser reads no key there, and reports the value as it did before.
func TestDottedExpansionStopsBelowTheKeys(t *testing.T) {
	_, err := load(t, `a: &a {x: 1, y: 2}
b: &b {a1: *a, a2: *a, a3: *a}
c: &c {b1: *b, b2: *b, b3: *b}
resilience4j.retry.instances.x.maxAttempts: *c
`)
	assert.EqualError(t, err, `app.yml:4: resilience4j.retry.instances.x.maxAttempts: must be a single value, got a mapping`)
}
