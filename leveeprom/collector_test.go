package leveeprom_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeprom"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
)

func succeed(context.Context) (int, error) {
	time.Sleep(20 * time.Millisecond)
	return 1, nil
}

func TestInstanceAddedAndRemovedAfterConstruction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		reg := registry.New()
		c := leveeprom.NewCollector(reg)
		defer c.Close()
		assert.Equal(t, 0, testutil.CollectAndCount(c))
		assert.Equal(t, 0, c.Attached())

		cb := gatewayBreaker(t, "payment")
		require.NoError(t, reg.AddCircuitBreaker(cb))
		assert.Equal(t, 1, c.Attached())
		for range 3 {
			_, err := circuitbreaker.Execute(ctx, cb, succeed)
			require.NoError(t, err)
		}
		successful := map[string]string{"name": "payment", "kind": "successful"}
		assert.Equal(t, 3.0, value(t, c, leveeprom.CircuitBreakerCalls, successful))
		assert.Equal(t, 19, testutil.CollectAndCount(c))

		rt, err := retry.New("payment", retry.Config{})
		require.NoError(t, err)
		require.NoError(t, reg.AddRetry(rt))
		assert.Equal(t, 23, testutil.CollectAndCount(c))
		assert.Equal(t, 1, c.Attached(), "only breakers are subscribed to")

		// A replacement starts counting afresh, and the old breaker is detached.
		cb2 := gatewayBreaker(t, "payment")
		old, replaced, err := reg.ReplaceCircuitBreaker(cb2)
		require.NoError(t, err)
		require.True(t, replaced)
		require.Same(t, cb, old)
		_, err = circuitbreaker.Execute(ctx, cb, succeed)
		require.NoError(t, err)
		assert.Equal(t, 0.0, value(t, c, leveeprom.CircuitBreakerCalls, successful))
		_, err = circuitbreaker.Execute(ctx, cb2, succeed)
		require.NoError(t, err)
		assert.Equal(t, 1.0, value(t, c, leveeprom.CircuitBreakerCalls, successful))
		assert.Equal(t, 1, c.Attached())

		_, ok := reg.RemoveCircuitBreaker("payment")
		require.True(t, ok)
		assert.Equal(t, 0, c.Attached())
		assert.Equal(t, 4, testutil.CollectAndCount(c), "the retry's four series remain")
		_, ok = reg.RemoveRetry("payment")
		require.True(t, ok)
		assert.Equal(t, 0, testutil.CollectAndCount(c))
	})
}

func TestCloseDetachesEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		reg := registry.New()
		cb := gatewayBreaker(t, "payment")
		require.NoError(t, reg.AddCircuitBreaker(cb))
		c := leveeprom.NewCollector(reg)
		assert.Equal(t, 1, c.Attached())

		calls := 0
		unsubscribe := cb.Subscribe(func(circuitbreaker.Event) { calls++ })
		defer unsubscribe()

		c.Close()
		c.Close() // idempotent
		assert.Equal(t, 0, c.Attached())
		assert.Equal(t, 0, testutil.CollectAndCount(c), "a closed collector exports nothing")

		// Neither later breakers nor later calls reach it.
		require.NoError(t, reg.AddCircuitBreaker(gatewayBreaker(t, "stock")))
		assert.Equal(t, 0, c.Attached())
		_, err := circuitbreaker.Execute(ctx, cb, succeed)
		require.NoError(t, err)
		assert.Equal(t, 1, calls, "the breaker's other subscribers are untouched")
	})
}

func TestUnregisterThenClose(t *testing.T) {
	reg := registry.New()
	require.NoError(t, reg.AddCircuitBreaker(gatewayBreaker(t, "payment")))
	c := leveeprom.NewCollector(reg)
	preg := prometheus.NewPedanticRegistry()
	require.NoError(t, preg.Register(c))

	err := preg.Register(c)
	var already prometheus.AlreadyRegisteredError
	require.ErrorAs(t, err, &already, "a second registration is refused")
	assert.Same(t, c, already.ExistingCollector)

	assert.True(t, preg.Unregister(c))
	c.Close()
	assert.Equal(t, 0, c.Attached())
	mfs, err := preg.Gather()
	require.NoError(t, err)
	assert.Empty(t, mfs)
}

func TestTagKeys(t *testing.T) {
	reg := registry.New()
	require.NoError(t, reg.AddCircuitBreaker(gatewayBreaker(t, "payment")))
	require.NoError(t, reg.AddCircuitBreaker(gatewayBreaker(t, "stock")))
	require.NoError(t, reg.SetTags(registry.CircuitBreaker, "payment",
		map[string]string{"team": "checkout", "zone": "eu", "owner": "ignored"}))
	require.NoError(t, reg.SetTags(registry.CircuitBreaker, "stock", map[string]string{"zone": "us"}))
	c := leveeprom.NewCollector(reg, leveeprom.WithTagKeys("team"), leveeprom.WithTagKeys("zone"))
	defer c.Close()

	expected := `
# HELP resilience4j_circuitbreaker_failure_rate The failure rate of the circuit breaker
# TYPE resilience4j_circuitbreaker_failure_rate gauge
resilience4j_circuitbreaker_failure_rate{name="payment",team="checkout",zone="eu"} -1
resilience4j_circuitbreaker_failure_rate{name="stock",team="",zone="us"} -1
`
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(expected), leveeprom.CircuitBreakerFailureRate))

	// Tags changed later are read at the next scrape.
	require.NoError(t, reg.SetTags(registry.CircuitBreaker, "stock", nil))
	expected = strings.Replace(expected, `zone="us"`, `zone=""`, 1)
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(expected), leveeprom.CircuitBreakerFailureRate))
}

func TestInvalidTagKeysFailRegistration(t *testing.T) {
	for key, want := range map[string]string{
		"kind":   `leveeprom: tag key must be a label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __, not name, kind or state), got "kind"`,
		"name":   `leveeprom: tag key must be a label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __, not name, kind or state), got "name"`,
		"state":  `leveeprom: tag key must be a label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __, not name, kind or state), got "state"`,
		"a-b":    `leveeprom: tag key must be a label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __, not name, kind or state), got "a-b"`,
		"__meta": `leveeprom: tag key must be a label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __, not name, kind or state), got "__meta"`,
		"":       `leveeprom: tag key must be a label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __, not name, kind or state), got ""`,
		"team":   `leveeprom: tag key must be given once, got "team" twice`,
	} {
		t.Run(key, func(t *testing.T) {
			reg := registry.New()
			require.NoError(t, reg.AddCircuitBreaker(gatewayBreaker(t, "payment")))
			keys := []string{key}
			if key == "team" {
				keys = []string{"team", "zone", "team"}
			}
			c := leveeprom.NewCollector(reg, leveeprom.WithTagKeys(keys...))
			defer c.Close()
			assert.Equal(t, 0, c.Attached(), "an invalid collector subscribes to nothing")

			err := prometheus.NewRegistry().Register(c)
			require.Error(t, err)
			assert.Equal(t, `descriptor Desc{fqName: "", help: "", unit: "", constLabels: {}, variableLabels: {}} is invalid: `+want, err.Error())

			// Collected anyway (by a registry that skips Describe), it reports the error.
			_, err = testutil.CollectAndLint(c)
			require.Error(t, err)
			assert.Contains(t, err.Error(), want)
		})
	}
}

func TestNilOptionsAreSkipped(t *testing.T) {
	c := leveeprom.NewCollector(registry.New(), nil)
	defer c.Close()
	assert.Equal(t, 0, testutil.CollectAndCount(c))
	require.NoError(t, prometheus.NewPedanticRegistry().Register(c))
}

// A nil registry is refused where a Collector can refuse: its registration fails, naming the
// problem, and a registry that skips Describe reports it at collection.
func TestNilRegistryFailsRegistration(t *testing.T) {
	c := leveeprom.NewCollector(nil, nil)
	defer c.Close()
	err := prometheus.NewPedanticRegistry().Register(c)
	require.Error(t, err)
	assert.Equal(t, `descriptor Desc{fqName: "", help: "", unit: "", constLabels: {}, variableLabels: {}} is invalid: `+
		"leveeprom: NewCollector needs a *registry.Registry, got nil", err.Error())
	_, err = testutil.CollectAndLint(c)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "leveeprom: NewCollector needs a *registry.Registry, got nil")
}

func TestInvalidUTF8NameFailsTheScrapeNotTheProcess(t *testing.T) {
	reg := registry.New()
	require.NoError(t, reg.AddCircuitBreaker(gatewayBreaker(t, "pay\xffment")))
	c := leveeprom.NewCollector(reg)
	defer c.Close()
	preg := prometheus.NewPedanticRegistry()
	require.NoError(t, preg.Register(c))
	_, err := preg.Gather()
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "19 error(s) occurred:"), err.Error())
	assert.Contains(t, err.Error(), `label value "pay\xffment" is not valid UTF-8`)
}

// Breakers come and go and are called from several goroutines while Prometheus scrapes; run
// with -race. Every call of the surviving breaker is counted exactly once.
func TestHammerWhileScraping(t *testing.T) {
	reg := registry.New()
	stable, err := circuitbreaker.New("stable", circuitbreaker.Config{})
	require.NoError(t, err)
	require.NoError(t, reg.AddCircuitBreaker(stable))
	c := leveeprom.NewCollector(reg)
	defer c.Close()
	preg := prometheus.NewPedanticRegistry()
	require.NoError(t, preg.Register(c))

	const callers, calls, churn = 4, 500, 200
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range callers {
		wg.Go(func() {
			for i := range calls {
				_, _ = circuitbreaker.Execute(context.Background(), stable, func(context.Context) (int, error) {
					if i%2 == 0 {
						return 0, errors.New("boom")
					}
					return i, nil
				})
			}
		})
	}
	wg.Go(func() {
		for i := range churn {
			cb, err := circuitbreaker.New("churn", circuitbreaker.Config{})
			if err != nil {
				panic(err)
			}
			if i%2 == 0 {
				_ = reg.AddCircuitBreaker(cb)
			} else {
				_, _, _ = reg.ReplaceCircuitBreaker(cb)
			}
			_, _ = circuitbreaker.Execute(context.Background(), cb, func(context.Context) (int, error) { return 1, nil })
			if i%3 == 0 {
				reg.RemoveCircuitBreaker("churn")
			}
		}
	})
	scraped := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-done:
				scraped <- n
				return
			default:
			}
			if _, err := preg.Gather(); err != nil {
				panic(err)
			}
			n++
		}
	}()
	wg.Wait()
	close(done)
	assert.Positive(t, <-scraped)

	ok := value(t, c, leveeprom.CircuitBreakerCalls, map[string]string{"name": "stable", "kind": "successful"})
	failed := value(t, c, leveeprom.CircuitBreakerCalls, map[string]string{"name": "stable", "kind": "failed"})
	notPermitted := value(t, c, leveeprom.CircuitBreakerNotPermittedCalls, map[string]string{"name": "stable"})
	assert.Equal(t, float64(callers*calls), ok+failed+notPermitted)
	wantAttached := 1
	if _, ok := reg.FindCircuitBreaker("churn"); ok {
		wantAttached = 2
	}
	assert.Equal(t, wantAttached, c.Attached())
}
