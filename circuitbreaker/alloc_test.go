package circuitbreaker_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cb "github.com/levee-go/levee/circuitbreaker"
)

func TestSuccessPathDoesNotAllocate(t *testing.T) {
	for _, typ := range []cb.SlidingWindowType{cb.CountBased, cb.TimeBased} {
		t.Run(typ.String(), func(t *testing.T) {
			b := mustNew(t, cb.Config{SlidingWindowType: typ, SlidingWindowSize: 10})
			ctx := context.Background()
			allocs := testing.AllocsPerRun(1000, func() {
				y := 42 // captured by a closure that must stay on the stack: Execute does not retain call
				v, err := cb.Execute(ctx, b, func(context.Context) (int, error) { return y, nil })
				if v != 42 || err != nil {
					panic("unexpected result")
				}
			})
			assert.Equal(t, 0.0, allocs, "Execute")

			allocs = testing.AllocsPerRun(1000, func() {
				p, err := b.Acquire()
				if err != nil {
					panic("refused")
				}
				p.OnSuccess()
			})
			assert.Equal(t, 0.0, allocs, "Acquire + OnSuccess")

			allocs = testing.AllocsPerRun(1000, func() {
				p, _ := b.Acquire()
				p.OnResult(nil, nil)
			})
			assert.Equal(t, 0.0, allocs, "Acquire + OnResult")

			allocs = testing.AllocsPerRun(1000, func() {
				p, _ := b.Acquire()
				p.Release()
			})
			assert.Equal(t, 0.0, allocs, "Acquire + Release")
			assert.Equal(t, cb.Closed, b.State())
		})
	}
}

func BenchmarkExecute(b *testing.B) {
	br, err := cb.New("bench", cb.Config{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	call := func(context.Context) (int, error) { return 1, nil }
	b.ReportAllocs()
	for b.Loop() {
		_, _ = cb.Execute(ctx, br, call)
	}
}

func BenchmarkExecuteParallel(b *testing.B) {
	br, err := cb.New("bench", cb.Config{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	call := func(context.Context) (int, error) { return 1, nil }
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = cb.Execute(ctx, br, call)
		}
	})
}

// TestRejectionDoesNotAllocate: a refusal returns an error the breaker built at New, one per
// refusing state, that still names the breaker and the state and matches ErrCallNotPermitted
// and *CallNotPermittedError.
func TestRejectionDoesNotAllocate(t *testing.T) {
	ctx := context.Background()
	call := func(context.Context) (int, error) { return 1, nil }
	check := func(t *testing.T, b *cb.CircuitBreaker, state cb.State) {
		t.Helper()
		allocs := testing.AllocsPerRun(1000, func() {
			if _, err := cb.Execute(ctx, b, call); err == nil {
				panic("permitted")
			}
		})
		assert.Equal(t, 0.0, allocs, "Execute refused")
		allocs = testing.AllocsPerRun(1000, func() {
			if _, err := b.Acquire(); err == nil {
				panic("permitted")
			}
		})
		assert.Equal(t, 0.0, allocs, "Acquire refused")

		_, err := b.Acquire()
		assert.Equal(t, "circuitbreaker: CircuitBreaker 'payment' is "+state.String()+" and does not permit further calls", err.Error())
		assert.ErrorIs(t, err, cb.ErrCallNotPermitted)
		var cnp *cb.CallNotPermittedError
		require.ErrorAs(t, err, &cnp)
		assert.Equal(t, cb.CallNotPermittedError{Name: "payment", State: state}, *cnp)
	}
	t.Run("OPEN", func(t *testing.T) {
		b, err := cb.New("payment", cb.Config{InitialState: cb.Open})
		require.NoError(t, err)
		check(t, b, cb.Open)
	})
	t.Run("HALF_OPEN", func(t *testing.T) {
		b, err := cb.New("payment", cb.Config{InitialState: cb.HalfOpen, PermittedNumberOfCallsInHalfOpenState: 1})
		require.NoError(t, err)
		_, err = b.Acquire()
		require.NoError(t, err)
		check(t, b, cb.HalfOpen)
	})
	t.Run("FORCED_OPEN", func(t *testing.T) {
		b, err := cb.New("payment", cb.Config{InitialState: cb.ForcedOpen})
		require.NoError(t, err)
		check(t, b, cb.ForcedOpen)
	})
}

func BenchmarkExecuteRejected(b *testing.B) {
	br, err := cb.New("bench", cb.Config{InitialState: cb.Open})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	call := func(context.Context) (int, error) { return 1, nil }
	b.ReportAllocs()
	for b.Loop() {
		_, _ = cb.Execute(ctx, br, call)
	}
}

func BenchmarkExecuteRejectedParallel(b *testing.B) {
	br, err := cb.New("bench", cb.Config{InitialState: cb.Open})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	call := func(context.Context) (int, error) { return 1, nil }
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = cb.Execute(ctx, br, call)
		}
	})
}
