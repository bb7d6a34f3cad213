package fallback

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/levee-go/levee/internal/safe"
)

// Value returns a handler function that answers every error it is given with v: the default
// kind of fallback, for an optional feature whose neutral value is correct (an empty list of
// recommendations). Every answer is the same v, so a v that holds a slice, a map or a pointer is
// shared by all callers and must not be modified by them.
//
//	fallback.OnAny(fallback.Value([]string{}))
func Value[T any](v T) func(ctx context.Context, err error) (T, error) {
	return func(context.Context, error) (T, error) { return v, nil }
}

// FailFast returns a handler function that answers no value but the error wrap(cause): the
// fail-fast kind of fallback, for when no honest answer exists and a clear, mappable error (a
// PriceUnavailableError that a server turns into 503) is better than a wrong one. wrap should
// keep cause in its error's chain; the Fallback's *Error keeps it in any case. When wrap returns
// nil the cause itself is returned, so a fail-fast handler never answers with a zero value. A
// nil wrap returns a nil function, which New refuses. The Fallback counts each such answer as a
// failed fallback (NumberOfFailedFallbacks, EventFailed), since the caller gets an error.
func FailFast[T any](wrap func(cause error) error) func(ctx context.Context, err error) (T, error) {
	if wrap == nil {
		return nil
	}
	return func(_ context.Context, cause error) (T, error) {
		var zero T
		if err := wrap(cause); err != nil {
			return zero, err
		}
		return zero, cause
	}
}

// ErrNoLastKnown is the error of a LastKnown handler that has nothing to serve.
var ErrNoLastKnown = errors.New("fallback: no last known value")

// LastKnown holds the last value a call succeeded with for each key, to serve it when a later
// call fails: the cached-value kind of fallback (the last known price of a book, marked stale).
// Put on success, then let the handler from Serve read it. The zero value is ready to use; it
// is safe for concurrent use. It keeps one entry per key until Delete, so it suits a bounded set
// of keys; a large or unbounded one needs a cache with eviction behind a handler of your own.
//
// A handler receives only the context and the error, so the key of the call travels in the
// context: WithKey puts it there, for this LastKnown only. Where the context of each call is not
// yours to set — per element in package stream, for instance — use Get in an element-aware
// fallback (stream.WithFallback) instead of Serve; in package async, ItemContext is where to
// call WithKey for each call.
type LastKnown[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
}

// lastKnownKey is the context key of one LastKnown: two stores never read each other's keys.
type lastKnownKey[K comparable, V any] struct{ store *LastKnown[K, V] }

// Put records v as the last known value for k.
func (c *LastKnown[K, V]) Put(k K, v V) {
	c.mu.Lock()
	if c.m == nil {
		c.m = make(map[K]V)
	}
	c.m[k] = v
	c.mu.Unlock()
}

// Get returns the last known value for k and whether there is one.
func (c *LastKnown[K, V]) Get(k K) (V, bool) {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	return v, ok
}

// Delete forgets the value for k.
func (c *LastKnown[K, V]) Delete(k K) {
	c.mu.Lock()
	delete(c.m, k)
	c.mu.Unlock()
}

// Len returns the number of keys with a value.
func (c *LastKnown[K, V]) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

// WithKey returns a context carrying k as the key of the call, for the handler from Serve and
// for Key. It costs what context.WithValue costs (an allocation or two per call). A nil ctx is
// treated as context.Background().
func (c *LastKnown[K, V]) WithKey(ctx context.Context, k K) context.Context {
	return context.WithValue(safe.Ctx(ctx), lastKnownKey[K, V]{c}, k)
}

// Key returns the key WithKey put in ctx for this LastKnown, and whether there is one.
func (c *LastKnown[K, V]) Key(ctx context.Context) (K, bool) {
	k, ok := safe.Ctx(ctx).Value(lastKnownKey[K, V]{c}).(K)
	return k, ok
}

// Serve returns a handler function that answers with the last known value for the key of the
// call (see WithKey), passed through mark so the answer says it is stale (nil mark: served as
// stored). With no key in the context, or no value for it, the handler fails with an error
// matching ErrNoLastKnown, which the Fallback returns in an *Error keeping the cause; to fail
// with an error of your own instead, write the handler with Key and Get.
//
//	fallback.OnAny(prices.Serve(func(m Money) Money { m.Stale = true; return m }))
func (c *LastKnown[K, V]) Serve(mark func(V) V) func(ctx context.Context, err error) (V, error) {
	if c == nil {
		return nil // refused by New as a nil handler function
	}
	return func(ctx context.Context, _ error) (V, error) {
		var zero V
		k, ok := c.Key(ctx)
		if !ok {
			return zero, fmt.Errorf("%w: the context holds no key (use WithKey)", ErrNoLastKnown)
		}
		v, ok := c.Get(k)
		if !ok {
			return zero, fmt.Errorf("%w for %v", ErrNoLastKnown, k)
		}
		if mark != nil {
			v = mark(v)
		}
		return v, nil
	}
}
