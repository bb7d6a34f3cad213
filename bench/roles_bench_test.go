package bench

import (
	"context"
	"testing"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/throttle"
)

// BenchmarkRoles: a successful call through a one-layer pipeline holding each pattern that
// joins by its role, beside the same pattern added with Pipeline.With and its own Decorator,
// and levee's breaker in its concrete layer: what the role's interface costs, and what it saves
// over a decorator.
func BenchmarkRoles(b *testing.B) {
	cb, err := leveeBreaker(CountWindow, BreakerSuccess)
	if err != nil {
		b.Fatal(err)
	}
	th, err := throttle.New("bench", throttle.Config{})
	if err != nil {
		b.Fatal(err)
	}
	al, err := adaptive.New("bench", adaptive.Config{InitialLimit: 1000, MaxLimit: 1000})
	if err != nil {
		b.Fatal(err)
	}
	run := func(p *levee.Pipeline[int]) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := p.Execute(ctx, Succeed.Call)
			return err
		}
	}
	runCases(b, []Case{
		{Impl: "breaker-concrete", Do: run(levee.DefaultPipeline[int](levee.Patterns{CircuitBreaker: cb}, nil))},
		{Impl: "throttle-admission", Do: run(levee.DefaultPipeline[int](levee.Patterns{Admission: th}, nil))},
		{Impl: "throttle-decorator", Do: run(levee.Compose[int]().With(throttle.Decorator[int](th)))},
		{Impl: "adaptive-concurrency", Do: run(levee.DefaultPipeline[int](levee.Patterns{ConcurrencyLimiter: al}, nil))},
		{Impl: "adaptive-decorator", Do: run(levee.Compose[int]().With(adaptive.Decorator[int](al)))},
	}, false)
}
