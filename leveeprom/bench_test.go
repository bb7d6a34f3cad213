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
// (the breaker builds no event) and with one attached (an event and two atomic additions per
// call).
func BenchmarkExecuteSuccess(b *testing.B) {
	for _, attached := range []bool{false, true} {
		name := "none"
		if attached {
			name = "collector"
		}
		b.Run(name, func(b *testing.B) {
			reg := registry.New()
			cb, err := circuitbreaker.New("payment", circuitbreaker.Config{})
			require.NoError(b, err)
			require.NoError(b, reg.AddCircuitBreaker(cb))
			if attached {
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
