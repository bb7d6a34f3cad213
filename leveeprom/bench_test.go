package leveeprom_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeprom"
	"github.com/levee-go/levee/registry"
)

func ok(context.Context) (int, error) { return 1, nil }

// BenchmarkExecuteSuccess measures a breaker's successful Execute with no collector attached
// (the breaker builds no event), with a subscriber that does nothing (the price of the event
// itself), and with a collector attached (the event, two atomic additions and the maximum's
// atomic loads).
func BenchmarkExecuteSuccess(b *testing.B) {
	for _, attached := range []string{"none", "noop-subscriber", "collector"} {
		b.Run(attached, func(b *testing.B) {
			reg := registry.New()
			cb, err := circuitbreaker.New("payment", circuitbreaker.Config{})
			require.NoError(b, err)
			require.NoError(b, reg.AddCircuitBreaker(cb))
			switch attached {
			case "noop-subscriber":
				defer cb.Subscribe(func(circuitbreaker.Event) {})()
			case "collector":
				c := leveeprom.NewCollector(reg)
				defer c.Close()
				require.Equal(b, 1, c.Attached())
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := circuitbreaker.Execute(ctx, cb, ok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestExecuteSuccessAllocatesNothing is the benchmark's claim as a test: a successful call
// allocates nothing, with or without a collector attached.
func TestExecuteSuccessAllocatesNothing(t *testing.T) {
	for _, attached := range []bool{false, true} {
		reg := registry.New()
		cb, err := circuitbreaker.New("payment", circuitbreaker.Config{})
		require.NoError(t, err)
		require.NoError(t, reg.AddCircuitBreaker(cb))
		if attached {
			c := leveeprom.NewCollector(reg)
			defer c.Close()
		}
		ctx := context.Background()
		allocs := testing.AllocsPerRun(100, func() { _, _ = circuitbreaker.Execute(ctx, cb, ok) })
		require.Equal(t, 0.0, allocs, "attached=%v", attached)
	}
}
