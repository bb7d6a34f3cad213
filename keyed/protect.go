package keyed

import (
	"strconv"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/internal/safe"
)

// Protecting is implemented by instances that can be protecting their key at the moment, so
// that evicting them would drop that protection: a Keyed never evicts such an instance, for
// idleness or for capacity, while Protecting reports true. Keyed knows three kinds without
// it: a *circuitbreaker.CircuitBreaker protects while OPEN, HALF_OPEN or FORCED_OPEN
// (evicting it would let the next call through to a failing dependency, with a fresh CLOSED
// breaker), an *adaptive.Limiter while callers wait in its queue (evicting it would forget
// the limit and the waiters' order), and a *bulkhead.Bulkhead while it has calls in flight or
// callers waiting (its Metrics: AvailableConcurrentCalls below MaxAllowedConcurrentCalls, or
// NumberOfWaitingCalls above 0), since a new bulkhead for the key would admit
// MaxConcurrentCalls more calls beside those of the evicted one. Protecting is called under
// k's lock: it must be quick and must not call k. One that panics counts as protecting.
type Protecting interface {
	Protecting() bool
}

// protected reports whether v must not be evicted now.
func protected(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case *circuitbreaker.CircuitBreaker:
		if x == nil {
			return false
		}
		switch x.State() {
		case circuitbreaker.Open, circuitbreaker.HalfOpen, circuitbreaker.ForcedOpen:
			return true
		}
		return false
	case *adaptive.Limiter:
		return x != nil && x.Metrics().Queued > 0
	case *bulkhead.Bulkhead:
		if x == nil {
			return false
		}
		m := x.Metrics()
		return m.AvailableConcurrentCalls < m.MaxAllowedConcurrentCalls || m.NumberOfWaitingCalls > 0
	case Protecting:
		// User code, run under k's lock: a panic must neither unwind through Get with the
		// lock held nor drop a protection, so it counts as protecting.
		return safe.Predicate(Protecting.Protecting, x, true)
	}
	return false
}

// ErrAllKeysProtected is the sentinel a Get matches with errors.Is when it would create a key
// while MaxKeys keys are held and every one of them is protecting its key (see Protecting):
// the new key is refused rather than evicting a protection or letting memory grow. It is a
// levee rejection (levee.IsRejection): the call never reached the dependency.
var ErrAllKeysProtected error = &rejection{"keyed: every key is protected, no new key can be created"}

// AllKeysProtectedError is the error of such a Get. MaxKeys is the configured bound. It
// matches ErrAllKeysProtected.
type AllKeysProtectedError struct {
	MaxKeys int
}

// Error returns "keyed: all <MaxKeys> keys are protected (an OPEN or HALF_OPEN breaker, a
// limiter with waiters): no new key can be created". The parenthesis names the commonest
// protections; a bulkhead with calls in flight or waiting, or a Protecting instance, is one
// as well.
func (e *AllKeysProtectedError) Error() string {
	return "keyed: all " + strconv.Itoa(e.MaxKeys) +
		" keys are protected (an OPEN or HALF_OPEN breaker, a limiter with waiters): no new key can be created"
}

// Is reports whether target is ErrAllKeysProtected.
func (e *AllKeysProtectedError) Is(target error) bool { return target == ErrAllKeysProtected }

// LeveeRejection marks the error as a levee rejection.
func (e *AllKeysProtectedError) LeveeRejection() bool { return true }

type rejection struct{ msg string }

func (r *rejection) Error() string        { return r.msg }
func (r *rejection) LeveeRejection() bool { return true }

// fullOfProtectedLocked reports whether MaxKeys or more ready keys are held and every one is
// protected. It looks at the least recently used key first and stops at the first key that
// can go, which is the common case's first step.
func (k *Keyed[K, V]) fullOfProtectedLocked() bool {
	if len(k.entries) < k.cfg.MaxKeys {
		return false
	}
	oldest := k.oldestLocked()
	if oldest == nil || !protected(any(oldest.v)) {
		return false
	}
	for _, e := range k.lru {
		if e != oldest && !protected(any(e.v)) {
			return false
		}
	}
	return len(k.lru) >= k.cfg.MaxKeys
}
