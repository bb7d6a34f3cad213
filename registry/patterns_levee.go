package registry

import (
	"reflect"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/throttle"
)

// isNil reports whether v is nil or an interface holding a nil pointer, which the Add
// methods refuse as they refuse a nil instance.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// AddAdaptiveLimiter registers v under its name. Adding the instance already registered under that name
// is a no-op; another instance of the same name is refused with ErrDuplicate (use
// ReplaceAdaptiveLimiter). A nil v is refused with an error.
func (r *Registry) AddAdaptiveLimiter(v *adaptive.Limiter) error {
	return add(r, &r.als, AdaptiveLimiter, v, v == nil)
}

// ReplaceAdaptiveLimiter registers v under its name in place of any instance of that name, which it
// returns with true, as Resilience4j's Registry.replace. A nil v is refused with an error.
func (r *Registry) ReplaceAdaptiveLimiter(v *adaptive.Limiter) (replaced *adaptive.Limiter, ok bool, err error) {
	return replace(r, &r.als, AdaptiveLimiter, v, v == nil)
}

// RemoveAdaptiveLimiter unregisters the adaptive limiter named name, with its tags, and returns it with true;
// nil and false when there is none.
func (r *Registry) RemoveAdaptiveLimiter(name string) (*adaptive.Limiter, bool) {
	return remove(r, &r.als, AdaptiveLimiter, name)
}

// FindAdaptiveLimiter returns the adaptive limiter named name, as Resilience4j's Registry.find.
func (r *Registry) FindAdaptiveLimiter(name string) (*adaptive.Limiter, bool) {
	return find(r, &r.als, name)
}

// AdaptiveLimiters returns every registered adaptive limiter, sorted by name: a new slice each call.
func (r *Registry) AdaptiveLimiters() []*adaptive.Limiter {
	return list(r, &r.als)
}

// AddPartitionedLimiter registers v under its name. Adding the instance already registered under that name
// is a no-op; another instance of the same name is refused with ErrDuplicate (use
// ReplacePartitionedLimiter). A nil v is refused with an error.
func (r *Registry) AddPartitionedLimiter(v *adaptive.PartitionedLimiter) error {
	return add(r, &r.pls, PartitionedLimiter, v, v == nil)
}

// ReplacePartitionedLimiter registers v under its name in place of any instance of that name, which it
// returns with true, as Resilience4j's Registry.replace. A nil v is refused with an error.
func (r *Registry) ReplacePartitionedLimiter(v *adaptive.PartitionedLimiter) (replaced *adaptive.PartitionedLimiter, ok bool, err error) {
	return replace(r, &r.pls, PartitionedLimiter, v, v == nil)
}

// RemovePartitionedLimiter unregisters the partitioned adaptive limiter (NewPartitioned or NewKeyed) named name, with its tags, and returns it with true;
// nil and false when there is none.
func (r *Registry) RemovePartitionedLimiter(name string) (*adaptive.PartitionedLimiter, bool) {
	return remove(r, &r.pls, PartitionedLimiter, name)
}

// FindPartitionedLimiter returns the partitioned adaptive limiter (NewPartitioned or NewKeyed) named name, as Resilience4j's Registry.find.
func (r *Registry) FindPartitionedLimiter(name string) (*adaptive.PartitionedLimiter, bool) {
	return find(r, &r.pls, name)
}

// PartitionedLimiters returns every registered partitioned adaptive limiter (NewPartitioned or NewKeyed), sorted by name: a new slice each call.
func (r *Registry) PartitionedLimiters() []*adaptive.PartitionedLimiter {
	return list(r, &r.pls)
}

// AddPrioritizer registers v under its name. Adding the instance already registered under that name
// is a no-op; another instance of the same name is refused with ErrDuplicate (use
// ReplacePrioritizer). A nil v is refused with an error.
func (r *Registry) AddPrioritizer(v *adaptive.Prioritizer) error {
	return add(r, &r.prs, Prioritizer, v, v == nil)
}

// ReplacePrioritizer registers v under its name in place of any instance of that name, which it
// returns with true, as Resilience4j's Registry.replace. A nil v is refused with an error.
func (r *Registry) ReplacePrioritizer(v *adaptive.Prioritizer) (replaced *adaptive.Prioritizer, ok bool, err error) {
	return replace(r, &r.prs, Prioritizer, v, v == nil)
}

// RemovePrioritizer unregisters the prioritizer named name, with its tags, and returns it with true;
// nil and false when there is none.
func (r *Registry) RemovePrioritizer(name string) (*adaptive.Prioritizer, bool) {
	return remove(r, &r.prs, Prioritizer, name)
}

// FindPrioritizer returns the prioritizer named name, as Resilience4j's Registry.find.
func (r *Registry) FindPrioritizer(name string) (*adaptive.Prioritizer, bool) {
	return find(r, &r.prs, name)
}

// Prioritizers returns every registered prioritizer, sorted by name: a new slice each call.
func (r *Registry) Prioritizers() []*adaptive.Prioritizer {
	return list(r, &r.prs)
}

// AddThrottler registers v under its name. Adding the instance already registered under that name
// is a no-op; another instance of the same name is refused with ErrDuplicate (use
// ReplaceThrottler). A nil v is refused with an error.
func (r *Registry) AddThrottler(v *throttle.Throttler) error {
	return add(r, &r.ths, Throttler, v, v == nil)
}

// ReplaceThrottler registers v under its name in place of any instance of that name, which it
// returns with true, as Resilience4j's Registry.replace. A nil v is refused with an error.
func (r *Registry) ReplaceThrottler(v *throttle.Throttler) (replaced *throttle.Throttler, ok bool, err error) {
	return replace(r, &r.ths, Throttler, v, v == nil)
}

// RemoveThrottler unregisters the throttler named name, with its tags, and returns it with true;
// nil and false when there is none.
func (r *Registry) RemoveThrottler(name string) (*throttle.Throttler, bool) {
	return remove(r, &r.ths, Throttler, name)
}

// FindThrottler returns the throttler named name, as Resilience4j's Registry.find.
func (r *Registry) FindThrottler(name string) (*throttle.Throttler, bool) {
	return find(r, &r.ths, name)
}

// Throttlers returns every registered throttler, sorted by name: a new slice each call.
func (r *Registry) Throttlers() []*throttle.Throttler {
	return list(r, &r.ths)
}

// AddKeyed registers v under its name. Adding the instance already registered under that name
// is a no-op; another instance of the same name is refused with ErrDuplicate (use
// ReplaceKeyed). A nil v is refused with an error.
func (r *Registry) AddKeyed(v *KeyedFamily) error {
	return add(r, &r.kfs, Keyed, v, v == nil)
}

// ReplaceKeyed registers v under its name in place of any instance of that name, which it
// returns with true, as Resilience4j's Registry.replace. A nil v is refused with an error.
func (r *Registry) ReplaceKeyed(v *KeyedFamily) (replaced *KeyedFamily, ok bool, err error) {
	return replace(r, &r.kfs, Keyed, v, v == nil)
}

// RemoveKeyed unregisters the keyed family named name, with its tags, and returns it with true;
// nil and false when there is none.
func (r *Registry) RemoveKeyed(name string) (*KeyedFamily, bool) {
	return remove(r, &r.kfs, Keyed, name)
}

// FindKeyed returns the keyed family named name, as Resilience4j's Registry.find.
func (r *Registry) FindKeyed(name string) (*KeyedFamily, bool) {
	return find(r, &r.kfs, name)
}

// KeyedFamilies returns every registered keyed family, sorted by name: a new slice each call.
func (r *Registry) KeyedFamilies() []*KeyedFamily {
	return list(r, &r.kfs)
}

// AddSharedRateLimiter registers v under its name. Adding the instance already registered under that name
// is a no-op; another instance of the same name is refused with ErrDuplicate (use
// ReplaceSharedRateLimiter). A nil v is refused with an error.
func (r *Registry) AddSharedRateLimiter(v StoreLimiter) error {
	return add(r, &r.srls, SharedRateLimiter, v, isNil(v))
}

// ReplaceSharedRateLimiter registers v under its name in place of any instance of that name, which it
// returns with true, as Resilience4j's Registry.replace. A nil v is refused with an error.
func (r *Registry) ReplaceSharedRateLimiter(v StoreLimiter) (replaced StoreLimiter, ok bool, err error) {
	return replace(r, &r.srls, SharedRateLimiter, v, isNil(v))
}

// RemoveSharedRateLimiter unregisters the shared rate limiter named name, with its tags, and returns it with true;
// nil and false when there is none.
func (r *Registry) RemoveSharedRateLimiter(name string) (StoreLimiter, bool) {
	return remove(r, &r.srls, SharedRateLimiter, name)
}

// FindSharedRateLimiter returns the shared rate limiter named name, as Resilience4j's Registry.find.
func (r *Registry) FindSharedRateLimiter(name string) (StoreLimiter, bool) {
	return find(r, &r.srls, name)
}

// SharedRateLimiters returns every registered shared rate limiter, sorted by name: a new slice each call.
func (r *Registry) SharedRateLimiters() []StoreLimiter {
	return list(r, &r.srls)
}

// AddSharedCircuitBreaker registers v under its name. Adding the instance already registered under that name
// is a no-op; another instance of the same name is refused with ErrDuplicate (use
// ReplaceSharedCircuitBreaker). A nil v is refused with an error.
func (r *Registry) AddSharedCircuitBreaker(v StoreBreaker) error {
	return add(r, &r.scbs, SharedCircuitBreaker, v, isNil(v))
}

// ReplaceSharedCircuitBreaker registers v under its name in place of any instance of that name, which it
// returns with true, as Resilience4j's Registry.replace. A nil v is refused with an error.
func (r *Registry) ReplaceSharedCircuitBreaker(v StoreBreaker) (replaced StoreBreaker, ok bool, err error) {
	return replace(r, &r.scbs, SharedCircuitBreaker, v, isNil(v))
}

// RemoveSharedCircuitBreaker unregisters the shared circuit breaker named name, with its tags, and returns it with true;
// nil and false when there is none.
func (r *Registry) RemoveSharedCircuitBreaker(name string) (StoreBreaker, bool) {
	return remove(r, &r.scbs, SharedCircuitBreaker, name)
}

// FindSharedCircuitBreaker returns the shared circuit breaker named name, as Resilience4j's Registry.find.
func (r *Registry) FindSharedCircuitBreaker(name string) (StoreBreaker, bool) {
	return find(r, &r.scbs, name)
}

// SharedCircuitBreakers returns every registered shared circuit breaker, sorted by name: a new slice each call.
func (r *Registry) SharedCircuitBreakers() []StoreBreaker {
	return list(r, &r.scbs)
}
