package keyed

import (
	"fmt"
	"iter"

	"github.com/levee-go/levee"
)

// Pipelines keeps a family of pipelines, one per key: for each key, the levee.Patterns that a
// build function returns and what a use function makes of them once — an http.RoundTripper, a
// pair of gRPC interceptors, a levee.Pipeline — so that one client serving many hosts, targets
// or tenants keeps one breaker and one limiter per key. A key's patterns are built on its
// first Get and kept as a Keyed keeps its instances (at most MaxKeys, each evicted after
// IdleTimeout unused, the least recently used first), except that a key whose patterns
// protect their dependency is never evicted: its CircuitBreaker OPEN, HALF_OPEN or
// FORCED_OPEN, its Bulkhead with calls in flight or callers waiting (a new bulkhead would
// admit MaxConcurrentCalls more calls to the key beside them), or its Limiter, Admission or
// ConcurrencyLimiter an adaptive limiter with callers waiting or an instance whose
// Protecting reports true. leveehttp.KeyedTransport and
// leveegrpc.KeyedClient are built on it. It is safe for concurrent use; create it with
// NewPipelines.
type Pipelines[K comparable, T any] struct {
	keys *Keyed[K, *pipeline[T]]
}

// pipeline is one key's patterns and what use made of them.
type pipeline[T any] struct {
	ps  levee.Patterns
	use T
}

// Protecting reports whether one of the key's patterns protects its dependency (see
// Pipelines).
func (p *pipeline[T]) Protecting() bool {
	ps := &p.ps
	return protected(any(ps.CircuitBreaker)) || protected(any(ps.Bulkhead)) ||
		protected(any(ps.Limiter)) || protected(any(ps.Admission)) ||
		protected(any(ps.ConcurrencyLimiter))
}

// NewPipelines returns the Pipelines that builds the patterns of each key with build and then
// passes them to use, once per creation of the key. It refuses an invalid cfg, a nil build
// and a nil use with an error naming it, e.g. "keyed: MaxKeys must be in [1, 1073741824], got
// -1". build may be called again for a key after the key was evicted, and must give every key
// instances of its own (sharing one breaker between keys shares its state); an error of build
// or use refuses that Get (and is not kept: the next Get of the key tries again).
func NewPipelines[K comparable, T any](cfg Config, build func(key K) (levee.Patterns, error), use func(key K, ps levee.Patterns) (T, error)) (*Pipelines[K, T], error) {
	if build == nil {
		return nil, fmt.Errorf("keyed: build must be a non-nil function, got nil")
	}
	if use == nil {
		return nil, fmt.Errorf("keyed: use must be a non-nil function, got nil")
	}
	keys, err := New(cfg, func(key K) (*pipeline[T], error) {
		ps, err := build(key)
		if err != nil {
			return nil, err
		}
		u, err := use(key, ps)
		if err != nil {
			return nil, err
		}
		return &pipeline[T]{ps: ps, use: u}, nil
	})
	if err != nil {
		return nil, err
	}
	return &Pipelines[K, T]{keys: keys}, nil
}

// Get returns what use made of key's patterns, building them first if key has none, as
// Keyed.Get: a key already held costs one lock-free lookup and allocates nothing. A key that
// cannot be created returns the zero T and the error: an *AllKeysProtectedError (a levee
// rejection) when MaxKeys keys are held and all protect, else build's or use's error.
func (p *Pipelines[K, T]) Get(key K) (T, error) {
	kp, err := p.held().Get(key)
	if err != nil {
		var zero T
		return zero, err
	}
	return kp.use, nil
}

// Patterns returns the patterns of key, building them if key has none yet (its first Get
// would), as Get.
func (p *Pipelines[K, T]) Patterns(key K) (levee.Patterns, error) {
	kp, err := p.held().Get(key)
	if err != nil {
		return levee.Patterns{}, err
	}
	return kp.ps, nil
}

// All returns the keys held and their patterns, most recently used first, as Keyed.All: for a
// table or a metrics exporter. It creates nothing and makes no key more recently used.
func (p *Pipelines[K, T]) All() iter.Seq2[K, levee.Patterns] {
	all := p.held().All()
	return func(yield func(K, levee.Patterns) bool) {
		for k, kp := range all {
			if !yield(k, kp.ps) {
				return
			}
		}
	}
}

// Metrics returns the counts of the keys: held, hits, misses, creations and evictions by
// cause (see Metrics), never per key.
func (p *Pipelines[K, T]) Metrics() Metrics { return p.held().Metrics() }

// Config returns the configuration given to NewPipelines with its defaults filled in.
func (p *Pipelines[K, T]) Config() Config { return p.held().Config() }

// held returns the Keyed of p, nil for a nil Pipelines: a nil or zero Pipelines answers as a
// nil Keyed does (Get and Patterns return ErrNilKeyed).
func (p *Pipelines[K, T]) held() *Keyed[K, *pipeline[T]] {
	if p == nil {
		return nil
	}
	return p.keys
}
