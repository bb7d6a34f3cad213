package leveeotel_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeotel"
	"github.com/levee-go/levee/registry"
)

// Calls, registry changes, tag changes, collections and other Metrics coming and going, all at
// once (run with -race): the figures of the breaker that stays registered are exact at the end.
func TestHammer(t *testing.T) {
	h := newHarness(t)
	stable, err := circuitbreaker.New("stable", circuitbreaker.Config{SlidingWindowSize: 10, MinimumNumberOfCalls: 10})
	require.NoError(t, err)
	require.NoError(t, h.reg.AddCircuitBreaker(stable))

	const workers, calls = 4, 300
	var recorded, refused atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				_, err := circuitbreaker.Execute(context.Background(), stable, func(context.Context) (int, error) {
					if (i+w)%3 != 0 {
						return 0, errGateway
					}
					return i, nil
				})
				if errors.Is(err, circuitbreaker.ErrCallNotPermitted) {
					refused.Add(1)
				} else {
					recorded.Add(1)
				}
				if i%50 == 0 {
					_ = stable.TransitionToClosedState()
				}
			}
		}()
	}
	background := func(f func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
					f(i)
				}
			}
		}()
	}
	background(func(i int) { // breakers come and go, with calls
		name := fmt.Sprintf("churn-%d", i%3)
		cb, err := circuitbreaker.New(name, circuitbreaker.Config{})
		if err != nil {
			panic(err)
		}
		if i%2 == 0 {
			_, _, _ = h.reg.ReplaceCircuitBreaker(cb)
		} else {
			_ = h.reg.AddCircuitBreaker(cb)
		}
		_, _ = circuitbreaker.Execute(context.Background(), cb, func(context.Context) (int, error) { return 0, errGateway })
		if i%5 == 0 {
			h.reg.RemoveCircuitBreaker(name)
		}
	})
	background(func(i int) { // tags change
		_ = h.reg.SetTags(registry.CircuitBreaker, "stable", map[string]string{"round": fmt.Sprint(i % 4)})
	})
	background(func(int) { h.collect(t) })
	background(func(int) { // another Metrics attaches and detaches
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		m, err := leveeotel.New(h.reg, leveeotel.WithMeterProvider(mp))
		if err != nil {
			panic(err)
		}
		h2 := &harness{reg: h.reg, reader: reader, m: m}
		h2.collect(t)
		if err := m.Close(); err != nil {
			panic(err)
		}
		_ = mp.Shutdown(context.Background())
	})

	// Collect while the workers run, until they are done.
	for recorded.Load()+refused.Load() < workers*calls {
		h.collect(t)
	}
	close(stop)
	wg.Wait()

	got := h.collect(t)
	assert.Equal(t, float64(recorded.Load()), names(t, got, callsMetric)["stable"])
	assert.Equal(t, float64(refused.Load()), names(t, got, refuseMetric)["stable"])
	assert.Positive(t, refused.Load(), "the breaker opened at least once")
}
