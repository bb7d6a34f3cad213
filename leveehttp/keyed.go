package leveehttp

import (
	"errors"
	"fmt"
	"iter"
	"net/http"
	"runtime/debug"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/keyed"
)

// KeyedConfig configures a KeyedTransport. The zero value of every field means its default.
type KeyedConfig struct {
	// Config is the Transport configuration every key's pipeline is used with.
	Config
	// Keyed bounds the keys held: at most MaxKeys, each evicted after IdleTimeout unused, the
	// least recently used first (package keyed; a key whose circuit breaker is OPEN,
	// HALF_OPEN or FORCED_OPEN, or whose bulkhead has requests in flight or waiting, is never
	// evicted). [zero: keyed's defaults, 10 000 keys, 10 minutes]
	Keyed keyed.Config
	// Key returns the key of a request: the requests of one key share one set of patterns.
	// It must be quick and must not keep the request; a panic of it fails the request with a
	// *levee.PanicError. [nil: AuthorityKey, the request's host and port]
	Key func(*http.Request) string
	// Fallback, when not nil, answers the failures of every key's pipeline, placed as
	// levee.DefaultPipeline places it. [nil: none]
	Fallback *fallback.Fallback[*http.Response]
}

// AuthorityKey returns req.URL.Host, the authority the request is sent to (host and port as
// the URL spells them): KeyedConfig.Key's default, as .NET's SelectPipelineByAuthority
// selects a pipeline per scheme, host and port.
func AuthorityKey(req *http.Request) string { return req.URL.Host }

// KeyedTransport is an http.RoundTripper that keeps one set of patterns — circuit breaker,
// bulkhead, rate limiter, retry, time limiter — per key of the request, by default per host
// (AuthorityKey), and sends each request as a Transport with the pipeline of its key: one
// client serving many hosts keeps one breaker per host, so a breaker open for one host
// refuses nothing to the others, as .NET's resilience handler with SelectPipelineByAuthority
// does. Each key's patterns are built, on the key's first request, by the build function
// given to NewKeyedTransport, typically from one template:
//
//	configs := levee.Configs{Retry: &rc, CircuitBreaker: &cbc}
//	t, err := leveehttp.NewKeyedTransport(nil, func(host string) (levee.Patterns, error) {
//		return levee.NewPatterns(host, configs)
//	}, leveehttp.KeyedConfig{Keyed: keyed.Config{MaxKeys: 100}})
//
// and put in levee.DefaultPipeline's order with KeyedConfig.Fallback. Memory is bounded as
// package keyed bounds it: at most MaxKeys keys, each evicted when unused for IdleTimeout,
// except that a key whose breaker is protecting its host (OPEN, HALF_OPEN, FORCED_OPEN) is
// never evicted, nor is one whose bulkhead has requests in flight or waiting (a new bulkhead
// would let more requests to the host through) or whose limiter has callers waiting (see
// keyed.Pipelines); when MaxKeys keys are held and all protect, a request of a new key is
// refused with an *keyed.AllKeysProtectedError (a levee rejection), its body closed, and so is
// a request whose key's build failed, with build's error. Everything else — what an attempt
// returns, what RoundTrip returns — is Transport's. A request of a key already held costs
// the Key function and one lookup (no lock, no allocation) over a Transport's. The set of
// pipelines is a keyed.Pipelines.
type KeyedTransport struct {
	next http.RoundTripper
	key  func(*http.Request) string
	keys *keyed.Pipelines[string, *Transport]
}

// NewKeyedTransport returns a KeyedTransport sending requests with next (nil:
// http.DefaultTransport) through the patterns build returns for each key. It refuses a nil
// build and an invalid cfg with an error naming the field, e.g.
// "leveehttp: MaxRetryAfter must be >= 0, got -1s" or
// "keyed: MaxKeys must be in [1, 1073741824], got -1".
//
// Build each key's retry with RetryConfig and its breaker with CircuitBreakerConfig, as for
// NewTransport. build may be called again for a key after the key was evicted, and must give
// every key instances of its own (sharing one breaker between keys shares its state).
func NewKeyedTransport(next http.RoundTripper, build func(key string) (levee.Patterns, error), cfg KeyedConfig) (*KeyedTransport, error) {
	if build == nil {
		return nil, fmt.Errorf("leveehttp: build must be a non-nil function, got nil")
	}
	if _, err := NewTransport(next, nil, cfg.Config); err != nil {
		return nil, err // the config's error, before any key exists
	}
	if next == nil {
		next = http.DefaultTransport
	}
	kt := &KeyedTransport{next: next, key: cfg.Key}
	if kt.key == nil {
		kt.key = AuthorityKey
	}
	keys, err := keyed.NewPipelines(cfg.Keyed, build, func(_ string, ps levee.Patterns) (*Transport, error) {
		return NewTransport(next, levee.DefaultPipeline(ps, cfg.Fallback), cfg.Config)
	})
	if err != nil {
		return nil, err
	}
	kt.keys = keys
	return kt, nil
}

// RoundTrip sends req through the pipeline of its key, creating the key's patterns on its
// first request, as described on KeyedTransport and Transport.
//
// A request with a nil URL fails with "http: nil Request.URL", as net/http's Transport fails
// it, and a Key function that panics fails its request with a *levee.PanicError: in both
// cases, as whenever RoundTrip fails before a Transport takes the request, the request's body
// is closed and nothing is sent.
func (kt *KeyedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req == nil {
		return nil, ErrNilRequest
	}
	var t *Transport
	var err error
	if kt == nil || kt.keys == nil {
		err = ErrNilTransport
	} else if req.URL == nil {
		err = errNilURL
	} else if key, kerr := kt.keyOf(req); kerr != nil {
		err = kerr
	} else {
		t, err = kt.keys.Get(key)
	}
	if err != nil {
		if req.Body != nil {
			req.Body.Close() // a RoundTripper closes the body, even when it sends nothing
		}
		return nil, err
	}
	return t.RoundTrip(req)
}

// errNilURL is net/http's error for a request without a URL.
var errNilURL = errors.New("http: nil Request.URL")

// ErrNilRequest is the error of Transport.RoundTrip and KeyedTransport.RoundTrip given a nil
// *http.Request, where net/http's Transport would panic: nothing is sent.
var ErrNilRequest = errors.New("leveehttp: nil *http.Request")

// ErrNilTransport is the error of RoundTrip on a nil or zero Transport or KeyedTransport, one
// not made by NewTransport or NewKeyedTransport: the request's body is closed and nothing is
// sent.
var ErrNilTransport = errors.New("leveehttp: nil or zero Transport (create one with leveehttp.NewTransport or NewKeyedTransport)")

// keyOf returns the key of req, a panic of the Key function coming back as a
// *levee.PanicError.
func (kt *KeyedTransport) keyOf(req *http.Request) (key string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &levee.PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return kt.key(req), nil
}

// Patterns returns the patterns of key, creating them with build if key has none yet (its
// first request would), as keyed.Keyed's Get.
func (kt *KeyedTransport) Patterns(key string) (levee.Patterns, error) {
	if kt == nil || kt.keys == nil {
		return levee.Patterns{}, ErrNilTransport
	}
	return kt.keys.Patterns(key)
}

// All returns the keys held and their patterns, most recently used first, as keyed.Keyed's
// All: for a table or a metrics exporter. It creates nothing and makes no key more recently
// used.
func (kt *KeyedTransport) All() iter.Seq2[string, levee.Patterns] {
	if kt == nil {
		return func(func(string, levee.Patterns) bool) {}
	}
	return kt.keys.All()
}

// Metrics returns the counts of the keys: held, hits, misses, creations and evictions by
// cause (keyed.Metrics), never per key.
func (kt *KeyedTransport) Metrics() keyed.Metrics {
	if kt == nil {
		return keyed.Metrics{}
	}
	return kt.keys.Metrics()
}

// CloseIdleConnections closes the idle connections of the next RoundTripper, if it has such a
// method, as http.Client.CloseIdleConnections expects of its Transport.
func (kt *KeyedTransport) CloseIdleConnections() {
	if kt == nil {
		return
	}
	if c, ok := kt.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
