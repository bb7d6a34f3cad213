package keyed

import (
	"context"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/internal/safe"
)

// KeyFunc picks the key of a call from its context, for the Keyed instances that join a
// pipeline: a tenant, a host, a partition the caller put in the context. A KeyFunc that
// panics (a nil one included) refuses the call with a *levee.PanicError, as a panicking
// create does.
type KeyFunc[K comparable] func(ctx context.Context) K

// getByContext returns the instance of the key key(ctx) names, a panic of key coming back as
// a *levee.PanicError.
func getByContext[K comparable, V any](k *Keyed[K, V], key KeyFunc[K], ctx context.Context) (V, error) {
	kv, err := callKey(key, ctx)
	if err != nil {
		var zero V
		return zero, err
	}
	return k.Get(kv)
}

func callKey[K comparable](key KeyFunc[K], ctx context.Context) (kv K, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = safe.NewPanicError(r)
		}
	}()
	return key(ctx), nil
}

// Limiters returns k as one levee.PermissionLimiter: each AcquirePermission takes its
// permissions from the instance of the key key(ctx) names (created on its first call), so that
// each key is limited on its own. A key refused by Get (an *AllKeysProtectedError, a *KeyError,
// a create error) refuses the call with that error. The result is no levee.RetryAdvisor even when V
// is one: RetryAfter has no context to name a key.
func Limiters[K comparable, V levee.PermissionLimiter](k *Keyed[K, V], key KeyFunc[K]) levee.PermissionLimiter {
	return &keyedLimiter[K, V]{k: k, key: key}
}

type keyedLimiter[K comparable, V levee.PermissionLimiter] struct {
	k   *Keyed[K, V]
	key KeyFunc[K]
}

func (l *keyedLimiter[K, V]) AcquirePermission(ctx context.Context, n int) error {
	v, err := getByContext(l.k, l.key, ctx)
	if err != nil {
		return err
	}
	return v.AcquirePermission(ctx, n)
}

// Admitters returns k as one levee.Admitter: each Admit asks the instance of the key key(ctx)
// names (created on its first call), in a breaker's or a bulkhead's place as the field or
// method it is given to says: keyed throttles or adaptive limits, one per tenant or host. A key
// refused by Get refuses the call with Get's error.
func Admitters[K comparable, V levee.Admitter](k *Keyed[K, V], key KeyFunc[K]) levee.Admitter {
	return &keyedAdmitter[K, V]{k: k, key: key}
}

type keyedAdmitter[K comparable, V levee.Admitter] struct {
	k   *Keyed[K, V]
	key KeyFunc[K]
}

func (a *keyedAdmitter[K, V]) Admit(ctx context.Context) (levee.Permit, error) {
	v, err := getByContext(a.k, a.key, ctx)
	if err != nil {
		return nil, err
	}
	return v.Admit(ctx)
}

// CircuitBreakers returns k, a breaker per key, as one levee.Admitter in a breaker's place
// (levee.Patterns.Admission, Pipeline.WithAdmission): each call is one call of the breaker of
// the key key(ctx) names, which is created on its first call and, while OPEN or HALF_OPEN,
// never evicted. A refusal is that breaker's *circuitbreaker.CallNotPermittedError, a key
// refused by Get Get's error. The breaker's permit is boxed, which allocates once per call.
func CircuitBreakers[K comparable](k *Keyed[K, *circuitbreaker.CircuitBreaker], key KeyFunc[K]) levee.Admitter {
	return &keyedBreakers[K]{k: k, key: key}
}

type keyedBreakers[K comparable] struct {
	k   *Keyed[K, *circuitbreaker.CircuitBreaker]
	key KeyFunc[K]
}

func (b *keyedBreakers[K]) Admit(ctx context.Context) (levee.Permit, error) {
	cb, err := getByContext(b.k, b.key, ctx)
	if err != nil {
		return nil, err
	}
	p, err := cb.Acquire()
	if err != nil {
		return nil, err
	}
	return p, nil
}
