package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee/internal/event"
	"github.com/levee-go/levee/internal/safe"
)

// DefaultInjectionRate is the injection rate a zero Config.InjectionRate means: one call in a
// thousand, as Polly's ChaosStrategyOptions.InjectionRate.
const DefaultInjectionRate = 0.001

// ErrNilStrategy is returned, never panicked, when a nil strategy is asked to guard a call.
var ErrNilStrategy = errors.New("chaos: nil strategy")

// Config holds what every strategy shares: how often it injects and whether it is on. The zero
// value of each field means Polly's default.
type Config struct {
	// InjectionRate is the probability that a call gets the injection, in [0, 1]; 0 means
	// DefaultInjectionRate (0.001). A call is injected when a draw in [0, 1) from Source is
	// below it, so 1 injects into every call. As Polly's InjectionRate; to inject into no
	// call, Disable the strategy.
	InjectionRate float64

	// Source is where the draws come from. Set it to a seeded source (rand.NewPCG(1, 2)) for
	// injections that are the same on every run with the same order of calls; it is used under
	// a mutex, so it need not be safe for concurrent use. nil means math/rand/v2's top-level
	// generator (randomly seeded, no lock). A panic in it fails the call with a
	// *levee.PanicError. As Polly's Randomizer.
	Source rand.Source

	// EnabledFunc, when set, is asked on every call while the strategy is switched on (see
	// Enable); the call is injected only if it reports true. It receives the call's context,
	// e.g. to inject only into requests that carry a test header. As Polly's
	// EnabledGenerator. A panic in it fails the call with a *levee.PanicError.
	EnabledFunc func(ctx context.Context) bool

	// Disabled makes the strategy start switched off; Enable turns it on. As Polly's
	// Enabled = false.
	Disabled bool
}

func (c *Config) validate() error {
	if !(c.InjectionRate >= 0 && c.InjectionRate <= 1) {
		return fmt.Errorf("chaos: InjectionRate must be in [0, 1], got %v", c.InjectionRate)
	}
	if c.InjectionRate == 0 {
		c.InjectionRate = DefaultInjectionRate
	}
	return nil
}

// Injector decides, for each call, whether a strategy injects, and holds what every strategy
// shares: its name, its switch, its counters and its subscribers. Fault, Latency, Outcome and
// Behaviour embed it, so its methods are theirs; called through a nil strategy they panic, as
// a promoted method of any nil struct pointer does (Execute and Decorator accept a nil one).
type Injector struct {
	name      string
	kind      EventType
	rate      float64
	enabledFn func(ctx context.Context) bool
	on        atomic.Bool

	mu  sync.Mutex
	rng *rand.Rand // nil: the top-level generator

	injected, passed atomic.Int64
	events           event.Publisher[Event]
}

func (in *Injector) init(name string, kind EventType, c Config) {
	in.name = name
	in.kind = kind
	in.rate = c.InjectionRate
	in.enabledFn = c.EnabledFunc
	in.on.Store(!c.Disabled)
	if c.Source != nil {
		in.rng = rand.New(c.Source)
	}
}

// Name returns the name given to New....
func (in *Injector) Name() string { return in.name }

// Enable switches the strategy on: calls are drawn for injection again. Safe for concurrent
// use with calls.
func (in *Injector) Enable() { in.on.Store(true) }

// Disable switches the strategy off: every call passes straight through, at the cost of one
// atomic load, drawing nothing and counting nothing. Safe for concurrent use with calls.
func (in *Injector) Disable() { in.on.Store(false) }

// Enabled reports whether the strategy is switched on (EnabledFunc is not asked).
func (in *Injector) Enabled() bool { return in.on.Load() }

// Metrics counts the calls the strategy saw while switched on.
type Metrics struct {
	// NumberOfInjectedCalls counts the calls that got the injection.
	NumberOfInjectedCalls int64
	// NumberOfPassedCalls counts the calls drawn or refused by EnabledFunc that did not, and
	// those whose generator (LatencyGenerator, FaultGenerator) gave nothing to inject.
	NumberOfPassedCalls int64
}

// Metrics returns the strategy's counters since New. Calls made while the strategy was
// switched off are counted nowhere.
func (in *Injector) Metrics() Metrics {
	return Metrics{NumberOfInjectedCalls: in.injected.Load(), NumberOfPassedCalls: in.passed.Load()}
}

// Subscribe registers fn to receive an Event for every injection and returns the function that
// removes it; calling that more than once is harmless. fn runs synchronously on the calling
// goroutine, before the injection takes effect (before the delay, before the fault is
// returned); a panic in fn is recovered. With no subscriber, events are not even built. A nil
// fn registers nothing.
func (in *Injector) Subscribe(fn func(Event)) (unsubscribe func()) {
	return in.events.Subscribe(fn)
}

// draw reports whether this call is picked for injection (the switch is known to be on).
func (in *Injector) draw(ctx context.Context) bool {
	if in.enabledFn != nil && !in.enabledFn(ctx) {
		return false
	}
	var u float64
	if in.rng != nil {
		u = in.drawLocked()
	} else {
		u = rand.Float64()
	}
	return u < in.rate
}

// drawLocked draws from the Source under in.mu, released even when the Source panics (the
// panic fails the call; the next calls draw again).
func (in *Injector) drawLocked() float64 {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.rng.Float64()
}

func (in *Injector) pass() { in.passed.Add(1) }

func (in *Injector) inject(latency time.Duration, err error) {
	in.injected.Add(1)
	if in.events.Active() {
		in.events.Publish(Event{Name: in.name, Type: in.kind, Time: time.Now(), Latency: latency, Err: err})
	}
}

// Strategy is a Fault, a Latency or a Behaviour: a strategy that does not depend on the call's
// result type, so that one serves calls of every type through Execute and Decorator. Outcome
// depends on it and has methods of its own instead.
type Strategy interface {
	injector() *Injector
	// before runs the injection of a call picked for it, and returns the error the call fails
	// with instead of running (nil: run the call).
	before(ctx context.Context) error
}

// Execute runs call guarded by s: while s is switched off, or when the draw does not pick the
// call, call runs as it is; otherwise s injects (a Fault fails the call, a Latency delays it, a
// Behaviour runs first). A panic in call, in s's generator or behaviour, or in EnabledFunc
// becomes a *levee.PanicError. A nil call returns levee.ErrNilCall, a nil s ErrNilStrategy;
// a nil ctx means context.Background(). While s is switched off, Execute allocates nothing.
func Execute[T any](ctx context.Context, s Strategy, call func(context.Context) (T, error)) (T, error) {
	var in *Injector
	if s != nil {
		in = s.injector()
	}
	if call == nil || in == nil {
		var zero T
		if call == nil {
			return zero, safe.ErrNilCall
		}
		return zero, ErrNilStrategy
	}
	ctx = safe.Ctx(ctx)
	if !in.on.Load() {
		return safe.Call(ctx, call)
	}
	return safe.Call(ctx, func(ctx context.Context) (T, error) {
		if err := s.before(ctx); err != nil {
			var zero T
			return zero, err
		}
		return call(ctx)
	})
}
