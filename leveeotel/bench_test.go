package leveeotel_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/registry"
)

// The cost of a successful call through a breaker with a Metrics attached (one event, one
// histogram record), with and without tags on the breaker.
func BenchmarkExecuteAttached(b *testing.B) {
	for _, tagged := range []bool{false, true} {
		name := "untagged"
		if tagged {
			name = "tagged"
		}
		b.Run(name, func(b *testing.B) {
			h := newHarness(b)
			cb, err := circuitbreaker.New("gateway", circuitbreaker.Config{})
			require.NoError(b, err)
			require.NoError(b, h.reg.AddCircuitBreaker(cb))
			if tagged {
				require.NoError(b, h.reg.SetTags(registry.CircuitBreaker, "gateway", map[string]string{"team": "checkout"}))
			}
			call := func(context.Context) (int, error) { return 1, nil }
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				_, _ = circuitbreaker.Execute(ctx, cb, call)
			}
			require.NoError(b, h.m.Close())
		})
	}
}
