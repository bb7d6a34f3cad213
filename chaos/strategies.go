package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/levee-go/levee/internal/safe"
)

// DefaultLatency is the delay a LatencyConfig with neither Latency nor LatencyGenerator
// injects: 30 seconds, as Polly's ChaosLatencyStrategyOptions.Latency.
const DefaultLatency = 30 * time.Second

// FaultConfig configures a Fault: Config, and the fault, given as Fault or FaultGenerator
// (exactly one).
type FaultConfig struct {
	Config
	// Fault is the error an injected call fails with, returned as it is (errors.Is finds it).
	// As Polly's Fault.
	Fault error
	// FaultGenerator returns the error for an injected call, from its context; a nil error
	// injects nothing into that call (counted as passed). As Polly's FaultGenerator.
	FaultGenerator func(ctx context.Context) error
}

// Fault makes a call fail with an error without running it, as Polly's fault strategy. Create
// it with NewFault; it is safe for concurrent use and serves calls of every result type.
type Fault struct {
	Injector
	fault error
	gen   func(ctx context.Context) error
}

// NewFault returns a Fault named name. It refuses an InjectionRate outside [0, 1] and a
// config that sets neither or both of Fault and FaultGenerator:
//
//	chaos: InjectionRate must be in [0, 1], got 1.5
//	chaos: set Fault or FaultGenerator, not both
func NewFault(name string, cfg FaultConfig) (*Fault, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	switch {
	case cfg.Fault != nil && cfg.FaultGenerator != nil:
		return nil, fmt.Errorf("chaos: set Fault or FaultGenerator, not both")
	case cfg.Fault == nil && cfg.FaultGenerator == nil:
		return nil, fmt.Errorf("chaos: Fault must be a non-nil error or FaultGenerator a non-nil function, got neither")
	}
	f := &Fault{fault: cfg.Fault, gen: cfg.FaultGenerator}
	f.init(name, EventFaultInjected, cfg.Config)
	return f, nil
}

func (f *Fault) injector() *Injector {
	if f == nil {
		return nil
	}
	return &f.Injector
}

func (f *Fault) before(ctx context.Context) error {
	if !f.draw(ctx) {
		f.pass()
		return nil
	}
	err := f.fault
	if f.gen != nil {
		if err = f.gen(ctx); err == nil {
			f.pass()
			return nil
		}
	}
	f.inject(0, err)
	return err
}

// LatencyConfig configures a Latency: Config, and the delay, given as Latency or
// LatencyGenerator (at most one; neither means DefaultLatency, 30s).
type LatencyConfig struct {
	Config
	// Latency is how long an injected call is delayed before it runs, at least 0; 0 means
	// DefaultLatency unless LatencyGenerator is set. As Polly's Latency.
	Latency time.Duration
	// LatencyGenerator returns the delay for an injected call, from its context; a delay <= 0
	// injects nothing into that call (counted as passed). As Polly's LatencyGenerator.
	LatencyGenerator func(ctx context.Context) time.Duration
}

// Latency delays a call before it runs, as Polly's latency strategy. The delay honours the
// call's context: when it is done during the delay, the call does not run and fails with the
// context's error (the caller's own cancellation, which levee's patterns neither record nor
// retry; a time limiter's deadline is a timeout). Inside a testing/synctest bubble the delay is
// on the bubble's clock. Create it with NewLatency; it is safe for concurrent use and serves
// calls of every result type.
type Latency struct {
	Injector
	latency time.Duration
	gen     func(ctx context.Context) time.Duration
}

// NewLatency returns a Latency named name. It refuses an InjectionRate outside [0, 1], a
// negative Latency and a config that sets both Latency and LatencyGenerator:
//
//	chaos: Latency must be >= 0, got -1s
//	chaos: set Latency or LatencyGenerator, not both
func NewLatency(name string, cfg LatencyConfig) (*Latency, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	switch {
	case cfg.Latency < 0:
		return nil, fmt.Errorf("chaos: Latency must be >= 0, got %v", cfg.Latency)
	case cfg.Latency != 0 && cfg.LatencyGenerator != nil:
		return nil, fmt.Errorf("chaos: set Latency or LatencyGenerator, not both")
	case cfg.Latency == 0 && cfg.LatencyGenerator == nil:
		cfg.Latency = DefaultLatency
	}
	l := &Latency{latency: cfg.Latency, gen: cfg.LatencyGenerator}
	l.init(name, EventLatencyInjected, cfg.Config)
	return l, nil
}

func (l *Latency) injector() *Injector {
	if l == nil {
		return nil
	}
	return &l.Injector
}

func (l *Latency) before(ctx context.Context) error {
	if !l.draw(ctx) {
		l.pass()
		return nil
	}
	d := l.latency
	if l.gen != nil {
		if d = l.gen(ctx); d <= 0 {
			l.pass()
			return nil
		}
	}
	l.inject(d, nil)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// BehaviourConfig configures a Behaviour.
type BehaviourConfig struct {
	Config
	// Behaviour runs before an injected call, with its context: a non-nil error fails the
	// call with it, and the call does not run; nil lets the call run. Required. As Polly's
	// BehaviorGenerator.
	Behaviour func(ctx context.Context) error
}

// Behaviour runs a function of yours before a call, as Polly's behavior strategy: to kill a
// connection, restart a replica or fill a disk while the call is on its way. Create it with
// NewBehaviour; it is safe for concurrent use (as Behaviour must be) and serves calls of every
// result type.
type Behaviour struct {
	Injector
	fn func(ctx context.Context) error
}

// NewBehaviour returns a Behaviour named name. It refuses an InjectionRate outside [0, 1] and
// a nil Behaviour:
//
//	chaos: Behaviour must be a non-nil function, got nil
func NewBehaviour(name string, cfg BehaviourConfig) (*Behaviour, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Behaviour == nil {
		return nil, fmt.Errorf("chaos: Behaviour must be a non-nil function, got nil")
	}
	b := &Behaviour{fn: cfg.Behaviour}
	b.init(name, EventBehaviourInjected, cfg.Config)
	return b, nil
}

func (b *Behaviour) injector() *Injector {
	if b == nil {
		return nil
	}
	return &b.Injector
}

func (b *Behaviour) before(ctx context.Context) error {
	if !b.draw(ctx) {
		b.pass()
		return nil
	}
	b.inject(0, nil)
	return b.fn(ctx)
}

// Decorator returns s as a layer for levee.Pipeline.With, in any position: each run of the
// layer is one Execute(ctx, s, next). A nil s returns a nil levee.Decorator, which With skips.
//
//	p := levee.Compose[Order]().With(chaos.Decorator[Order](fault)).WithCircuitBreaker(cb)
func Decorator[T any](s Strategy) func(ctx context.Context, next func(context.Context) (T, error)) (T, error) {
	if s == nil || s.injector() == nil {
		return nil
	}
	return func(ctx context.Context, next func(context.Context) (T, error)) (T, error) {
		return Execute(ctx, s, next)
	}
}

// OutcomeConfig configures an Outcome.
type OutcomeConfig[T any] struct {
	Config
	// Outcome returns what an injected call answers instead of running: a value, an error, or
	// both. Required. As Polly's OutcomeGenerator.
	Outcome func(ctx context.Context) (T, error)
}

// Outcome answers a call with a result of your choosing without running it, as Polly's
// outcome strategy: a value the breaker's RecordResultPredicate sees as a failure, an error
// the retry retries, an empty answer. Unlike the other strategies it depends on the call's
// result type. Create it with NewOutcome; it is safe for concurrent use (as Outcome must be).
type Outcome[T any] struct {
	Injector
	fn func(ctx context.Context) (T, error)
}

// NewOutcome returns an Outcome named name. It refuses an InjectionRate outside [0, 1] and a
// nil Outcome:
//
//	chaos: Outcome must be a non-nil function, got nil
func NewOutcome[T any](name string, cfg OutcomeConfig[T]) (*Outcome[T], error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Outcome == nil {
		return nil, fmt.Errorf("chaos: Outcome must be a non-nil function, got nil")
	}
	o := &Outcome[T]{fn: cfg.Outcome}
	o.init(name, EventOutcomeInjected, cfg.Config)
	return o, nil
}

// Execute runs call guarded by o, as the package's Execute runs one guarded by a Strategy: an
// injected call answers what OutcomeConfig.Outcome returns and does not run. A panic in call,
// Outcome or EnabledFunc becomes a *levee.PanicError; a nil call returns levee.ErrNilCall and
// a nil o ErrNilStrategy. While o is switched off, Execute allocates nothing.
func (o *Outcome[T]) Execute(ctx context.Context, call func(context.Context) (T, error)) (T, error) {
	if call == nil || o == nil {
		var zero T
		if call == nil {
			return zero, safe.ErrNilCall
		}
		return zero, ErrNilStrategy
	}
	ctx = safe.Ctx(ctx)
	if !o.on.Load() {
		return safe.Call(ctx, call)
	}
	return safe.Call(ctx, func(ctx context.Context) (T, error) {
		if !o.draw(ctx) {
			o.pass()
			return call(ctx)
		}
		v, err := o.fn(ctx)
		o.inject(0, err)
		return v, err
	})
}

// Decorator returns o as a layer for levee.Pipeline.With, in any position: each run of the
// layer is one o.Execute(ctx, next). A nil o returns a nil levee.Decorator, which With skips.
func (o *Outcome[T]) Decorator() func(ctx context.Context, next func(context.Context) (T, error)) (T, error) {
	if o == nil {
		return nil
	}
	return func(ctx context.Context, next func(context.Context) (T, error)) (T, error) {
		return o.Execute(ctx, next)
	}
}
