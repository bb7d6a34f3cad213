package leveetest

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Behaviour is what one invocation of a Stub does. call is the invocation's number, counted
// from 1, within the Behaviour: First and Sequence renumber the invocations they hand on, so a
// composed Behaviour sees its own first invocation as 1. A Behaviour is called concurrently
// when the stub is; those of this package are safe for it.
type Behaviour[T any] func(ctx context.Context, call int64) (T, error)

// OK returns a Behaviour that answers v and a nil error at once.
func OK[T any](v T) Behaviour[T] {
	return func(context.Context, int64) (T, error) { return v, nil }
}

// Fail returns a Behaviour that fails at once with err and T's zero value.
func Fail[T any](err error) Behaviour[T] {
	return func(context.Context, int64) (T, error) {
		var zero T
		return zero, err
	}
}

// Slow returns a Behaviour that waits d, then does what then does. A dependency that honours
// its context: when ctx is done during the wait it returns at once with T's zero value and
// ctx.Err(). A d <= 0 does not wait. Inside a testing/synctest bubble, the wait is on the
// bubble's fake clock.
func Slow[T any](d time.Duration, then Behaviour[T]) Behaviour[T] {
	return func(ctx context.Context, call int64) (T, error) {
		if d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				var zero T
				return zero, ctx.Err()
			}
		}
		return then(ctx, call)
	}
}

// Hang returns a Behaviour that never answers: it returns T's zero value and ctx.Err() once
// ctx is done, and blocks forever on a context that never is.
func Hang[T any]() Behaviour[T] {
	return func(ctx context.Context, _ int64) (T, error) {
		<-ctx.Done()
		var zero T
		return zero, ctx.Err()
	}
}

// IgnoreCtx returns a Behaviour that sleeps d whatever happens to ctx, then does what then
// does: a dependency that does not honour its context, which a time limiter abandons and a
// bulkhead keeps counting until it returns.
func IgnoreCtx[T any](d time.Duration, then Behaviour[T]) Behaviour[T] {
	return func(ctx context.Context, call int64) (T, error) {
		time.Sleep(d)
		return then(ctx, call)
	}
}

// Panic returns a Behaviour that panics with v, which levee turns into a *levee.PanicError.
func Panic[T any](v any) Behaviour[T] {
	return func(context.Context, int64) (T, error) { panic(v) }
}

// Flaky returns a Behaviour that does what fail does with probability rate, and what ok does
// otherwise, drawing from a generator of math/rand/v2 seeded with seed (PCG, seeded with
// (seed, seed)): the same seed and the same order of invocations give the same outcomes. A
// rate <= 0 never fails and a rate >= 1 always does. Each of fail and ok sees its own
// invocations numbered from 1.
func Flaky[T any](rate float64, seed uint64, fail, ok Behaviour[T]) Behaviour[T] {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, seed))
	var nFail, nOK int64
	return func(ctx context.Context, _ int64) (T, error) {
		mu.Lock()
		failing := rng.Float64() < rate
		var n int64
		if failing {
			nFail++
			n = nFail
		} else {
			nOK++
			n = nOK
		}
		mu.Unlock()
		if failing {
			return fail(ctx, n)
		}
		return ok(ctx, n)
	}
}

// First returns a Behaviour whose first n invocations do what b does, and every later one
// what then does, numbered from 1 again: First(3, Fail[int](err), OK(42)) fails three times,
// then answers 42. First nests: First(2, b1, First(1, b2, b3)).
func First[T any](n int64, b, then Behaviour[T]) Behaviour[T] {
	return func(ctx context.Context, call int64) (T, error) {
		if call <= n {
			return b(ctx, call)
		}
		return then(ctx, call-n)
	}
}

// Sequence returns a Behaviour whose k-th invocation does what bs[k-1] does, and whose
// invocations after the last element all do what that last element does. Every element but
// the last sees its invocation as number 1; the last sees its own invocations numbered from 1.
// With no element, it answers T's zero value and a nil error.
func Sequence[T any](bs ...Behaviour[T]) Behaviour[T] {
	bs = append([]Behaviour[T](nil), bs...)
	return func(ctx context.Context, call int64) (T, error) {
		if len(bs) == 0 {
			var zero T
			return zero, nil
		}
		last := int64(len(bs))
		if call < last {
			return bs[call-1](ctx, 1)
		}
		return bs[last-1](ctx, call-last+1)
	}
}

// Stub is a dependency for tests: each invocation of Call does what its Behaviour says, and
// the stub counts what happened. It is safe for concurrent use; create it with NewStub. The
// zero Stub answers T's zero value and a nil error.
type Stub[T any] struct {
	behaviour   atomic.Pointer[Behaviour[T]]
	invocations atomic.Int64
	running     atomic.Int64
	maxRunning  atomic.Int64
	cancelled   atomic.Int64
	panics      atomic.Int64
}

// NewStub returns a Stub whose invocations do what b does. A nil b answers T's zero value.
func NewStub[T any](b Behaviour[T]) *Stub[T] {
	s := &Stub[T]{}
	s.SetBehaviour(b)
	return s
}

// SetBehaviour replaces what the following invocations do (the dependency recovers, or goes
// down), and numbers their invocations from 1 again. Invocations already running are not
// affected. A nil b answers T's zero value.
func (s *Stub[T]) SetBehaviour(b Behaviour[T]) {
	if b == nil {
		b = func(context.Context, int64) (T, error) {
			var zero T
			return zero, nil
		}
	}
	counted := b
	var n atomic.Int64
	wrapped := Behaviour[T](func(ctx context.Context, _ int64) (T, error) {
		return counted(ctx, n.Add(1))
	})
	s.behaviour.Store(&wrapped)
}

// Call is one invocation of the dependency: it counts it, runs the Behaviour and returns what
// it returns. Its method value, stub.Call, has the shape levee's patterns and pipelines take
// (levee.Call[T]). A panic of the Behaviour propagates after being counted, as a real
// dependency's would; levee turns it into a *levee.PanicError.
func (s *Stub[T]) Call(ctx context.Context) (v T, err error) {
	s.invocations.Add(1)
	n := s.running.Add(1)
	for {
		m := s.maxRunning.Load()
		if n <= m || s.maxRunning.CompareAndSwap(m, n) {
			break
		}
	}
	panicked := true
	defer func() {
		s.running.Add(-1)
		if ctx != nil && ctx.Err() != nil {
			s.cancelled.Add(1)
		}
		if panicked {
			s.panics.Add(1)
		}
	}()
	b := s.behaviour.Load()
	if b == nil {
		panicked = false
		return v, nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	v, err = (*b)(ctx, 0)
	panicked = false
	return v, err
}

// Invocations returns the number of invocations of Call so far, those running included.
func (s *Stub[T]) Invocations() int64 { return s.invocations.Load() }

// Running returns the number of invocations of Call running now.
func (s *Stub[T]) Running() int64 { return s.running.Load() }

// MaxConcurrent returns the largest number of invocations of Call that ever ran at once.
func (s *Stub[T]) MaxConcurrent() int64 { return s.maxRunning.Load() }

// Cancelled returns the number of invocations that returned (or panicked) while their context
// was done: cancelled by the caller, by a time limiter's deadline or by a stream that stopped.
func (s *Stub[T]) Cancelled() int64 { return s.cancelled.Load() }

// Panics returns the number of invocations that panicked.
func (s *Stub[T]) Panics() int64 { return s.panics.Load() }
