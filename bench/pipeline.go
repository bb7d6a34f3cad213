package bench

import (
	"context"
	"time"

	"github.com/failsafe-go/failsafe-go"
	fsbulkhead "github.com/failsafe-go/failsafe-go/bulkhead"
	fscircuitbreaker "github.com/failsafe-go/failsafe-go/circuitbreaker"
	fsfallback "github.com/failsafe-go/failsafe-go/fallback"
	fsratelimiter "github.com/failsafe-go/failsafe-go/ratelimiter"
	"github.com/failsafe-go/failsafe-go/retrypolicy"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
)

// FallbackResult is what the pipelines' fallback answers.
const FallbackResult = -1

// Pipeline is one dependency's patterns: Resilience4j's default pipeline without a time
// limiter, Fallback(Retry(CircuitBreaker(RateLimiter(Bulkhead(call))))), in the settings the
// single-pattern benchmarks use (a count window of 100, 1,000 permits per microsecond, 25
// concurrent calls, 3 attempts 1ms apart, a constant fallback).
type Pipeline struct {
	Levee    *levee.Pipeline[int]
	Patterns levee.Patterns
	Failsafe failsafe.Executor[int]
}

// NewPipeline builds the default pipeline in levee and its equivalent failsafe-go composition,
// failsafe.With(fallback, retry, breaker, limiter, bulkhead), which nests the same way.
func NewPipeline() (*Pipeline, error) {
	rt, err := retry.New("bench", retry.Config{MaxAttempts: RetryAttempts, WaitDuration: RetryWait})
	if err != nil {
		return nil, err
	}
	cb, err := leveeBreaker(CountWindow, BreakerSuccess)
	if err != nil {
		return nil, err
	}
	rl, err := ratelimiter.New("bench", ratelimiter.Config{
		LimitForPeriod: 1000, LimitRefreshPeriod: time.Microsecond, TimeoutDuration: ratelimiter.NoWait,
	})
	if err != nil {
		return nil, err
	}
	bh, err := bulkhead.New("bench", bulkhead.Config{MaxConcurrentCalls: BulkheadLimit})
	if err != nil {
		return nil, err
	}
	fb, err := fallback.New("bench", fallback.OnAny(fallback.Value[int](FallbackResult)))
	if err != nil {
		return nil, err
	}
	ps := levee.Patterns{Retry: rt, CircuitBreaker: cb, RateLimiter: rl, Bulkhead: bh}

	fs := failsafe.With[int](
		fsfallback.NewWithResult[int](FallbackResult),
		retrypolicy.NewBuilder[int]().WithMaxAttempts(RetryAttempts).WithDelay(RetryWait).Build(),
		fscircuitbreaker.NewBuilder[int]().
			WithFailureThresholdRatio(breakerCalls*breakerRate/100, breakerCalls).
			WithDelay(breakerOpenWait).
			Build(),
		fsratelimiter.NewBursty[int](1000, time.Microsecond),
		fsbulkhead.New[int](BulkheadLimit),
	)
	return &Pipeline{Levee: levee.DefaultPipeline(ps, fb), Patterns: ps, Failsafe: fs}, nil
}

// PipelineCases returns work run through levee's default pipeline (Pipeline.Execute), the
// equivalent failsafe-go composition (executor Get) and directly.
func PipelineCases(p *Pipeline, work Work) []Case {
	call, plain := work.Call, work.Plain
	return []Case{
		{Impl: "levee", Do: func(ctx context.Context) error {
			_, err := p.Levee.Execute(ctx, call)
			return err
		}},
		{Impl: "failsafe", Do: func(context.Context) error {
			_, err := p.Failsafe.Get(plain)
			return err
		}},
		{Impl: "direct", Do: func(ctx context.Context) error {
			_, err := call(ctx)
			return err
		}},
	}
}
