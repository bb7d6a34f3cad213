package bench

import (
	"context"

	fsadaptive "github.com/failsafe-go/failsafe-go/adaptivelimiter"
	fspriority "github.com/failsafe-go/failsafe-go/priority"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/priority"
)

// PrioritizerCases returns one admitted call through a prioritizer in front of an adaptive
// limiter: levee's Prioritizer.Acquire on an adaptive.Limiter, ended with OnSuccess, and
// failsafe-go's PriorityLimiter (adaptivelimiter.BuildPrioritized with its NewPrioritizer)
// AcquirePermit, ended with Record; and, as baselines, each limiter alone. Each call carries
// the priority High in its context, made once per case; limits of 1,000 (failsafe-go's
// maximum and initial limit, levee's initial and maximum) admit every call at once, so the
// figure is the cost of an admission.
func PrioritizerCases() ([]Case, error) {
	l, err := adaptive.New("bench", adaptive.Config{InitialLimit: 1000, MaxLimit: 1000, MaxQueued: 1000})
	if err != nil {
		return nil, err
	}
	alone, err := adaptive.New("bench", adaptive.Config{InitialLimit: 1000, MaxLimit: 1000, MaxQueued: 1000})
	if err != nil {
		return nil, err
	}
	p, err := adaptive.NewPrioritizer("bench", adaptive.PrioritizerConfig{})
	if err != nil {
		return nil, err
	}
	p.Register(l)
	lvCtx := priority.WithPriority(context.Background(), priority.High)

	fsLimiter := fsadaptive.NewBuilder[any]().WithLimits(1, 1000, 1000).BuildPrioritized(fsadaptive.NewPrioritizer())
	fsAlone := fsadaptive.NewBuilder[any]().WithLimits(1, 1000, 1000).Build()
	fsCtx := fspriority.ContextWithPriority(context.Background(), fspriority.High)

	return []Case{
		{Impl: "levee", Do: func(context.Context) error {
			permit, err := p.Acquire(lvCtx, l)
			if err != nil {
				return err
			}
			permit.OnSuccess()
			return nil
		}},
		{Impl: "failsafe", Do: func(context.Context) error {
			permit, err := fsLimiter.AcquirePermit(fsCtx)
			if err != nil {
				return err
			}
			permit.Record()
			return nil
		}},
		{Impl: "levee-limiter", Do: func(context.Context) error {
			permit, err := alone.Acquire(lvCtx)
			if err != nil {
				return err
			}
			permit.OnSuccess()
			return nil
		}},
		{Impl: "failsafe-limiter", Do: func(context.Context) error {
			permit, err := fsAlone.AcquirePermit(fsCtx)
			if err != nil {
				return err
			}
			permit.Record()
			return nil
		}},
	}, nil
}
