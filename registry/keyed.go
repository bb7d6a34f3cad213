package registry

import (
	"fmt"
	"slices"
	"strings"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/keyed"
)

// MaxPerKeySeries is the largest keyed.Config.MaxKeys of a family NewKeyedFamily accepts
// with KeyedFamilyConfig.PerKeySeries: a metric series per key is only safe while the keys
// are few.
const MaxPerKeySeries = 100

// KeyedFamilyConfig configures a KeyedFamily.
type KeyedFamilyConfig struct {
	// PerKeySeries makes the family list its keys (KeyedFamily.Keys), so that the observers
	// show each key's instance (for circuit breakers, its state per key) besides the
	// family's aggregates. A series per key is a label per key: it is refused unless the
	// family's MaxKeys is at most MaxPerKeySeries, which bounds the series. An evicted key's
	// series leave with it, at the next scrape. Default false: aggregates only.
	PerKeySeries bool
}

// KeyedFamily is a keyed.Keyed as a registry holds it: a name and read-only views of the
// set's figures, the type parameters of keyed.Keyed erased. The observers export a family's
// figures for the whole set of keys (keys held, evictions by cause, breakers per state),
// never one series per key unless PerKeySeries asks for it, so that the series stay bounded
// however many keys come and go. Make one with NewKeyedFamily.
type KeyedFamily struct {
	name    string
	config  keyed.Config
	metrics func() keyed.Metrics
	states  func() map[circuitbreaker.State]int
	keys    func() []KeyedInstance
}

// KeyedInstance is one key of a family and its instance, as KeyedFamily.Keys lists them.
type KeyedInstance struct {
	// Key is the key as fmt.Sprint writes it.
	Key string
	// Instance is the key's instance: a *circuitbreaker.CircuitBreaker, an *adaptive.Limiter,
	// or whatever the family holds.
	Instance any
}

// NewKeyedFamily returns k under the name name, for AddKeyed. It refuses an empty name, a
// nil k, and PerKeySeries with k's MaxKeys above MaxPerKeySeries, with an error naming the
// field.
func NewKeyedFamily[K comparable, V any](name string, k *keyed.Keyed[K, V], cfg KeyedFamilyConfig) (*KeyedFamily, error) {
	if name == "" {
		return nil, fmt.Errorf("registry: NewKeyedFamily needs a name, got \"\"")
	}
	if k == nil {
		return nil, fmt.Errorf("registry: NewKeyedFamily needs a *keyed.Keyed, got nil")
	}
	f := &KeyedFamily{name: name, config: k.Config(), metrics: k.Metrics}
	if cfg.PerKeySeries {
		if f.config.MaxKeys > MaxPerKeySeries {
			return nil, fmt.Errorf("registry: KeyedFamilyConfig.PerKeySeries needs MaxKeys in [1, %d], got %d",
				MaxPerKeySeries, f.config.MaxKeys)
		}
		f.keys = func() []KeyedInstance {
			var out []KeyedInstance
			for key, v := range k.All() {
				out = append(out, KeyedInstance{Key: fmt.Sprint(key), Instance: v})
			}
			slices.SortFunc(out, func(a, b KeyedInstance) int { return strings.Compare(a.Key, b.Key) })
			return out
		}
	}
	if cbs, ok := any(k).(*keyed.Keyed[K, *circuitbreaker.CircuitBreaker]); ok {
		f.states = func() map[circuitbreaker.State]int { return keyed.CircuitBreakerStates(cbs) }
	}
	return f, nil
}

// Name returns the family's name.
func (f *KeyedFamily) Name() string { return f.name }

// Config returns the configuration of the family's keyed.Keyed.
func (f *KeyedFamily) Config() keyed.Config { return f.config }

// Metrics returns the figures of the whole set (keyed.Keyed.Metrics, which evicts idle keys
// first).
func (f *KeyedFamily) Metrics() keyed.Metrics { return f.metrics() }

// CircuitBreakerStates returns how many of the family's breakers are in each state, every
// state present, and true, for a family of *circuitbreaker.CircuitBreaker; nil and false for
// a family of another type.
func (f *KeyedFamily) CircuitBreakerStates() (map[circuitbreaker.State]int, bool) {
	if f.states == nil {
		return nil, false
	}
	return f.states(), true
}

// Keys returns the keys held and their instances, sorted by key, when the family was made
// with PerKeySeries; nil otherwise. A new slice each call.
func (f *KeyedFamily) Keys() []KeyedInstance {
	if f.keys == nil {
		return nil
	}
	return f.keys()
}

// PerKeySeries reports whether the family was made with PerKeySeries.
func (f *KeyedFamily) PerKeySeries() bool { return f.keys != nil }
