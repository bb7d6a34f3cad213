package leveegrpc

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime/debug"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/keyed"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
)

// KeyedConfig configures a KeyedClient. The zero value of every field means its default.
type KeyedConfig struct {
	// Keyed bounds the keys held: at most MaxKeys, each evicted after IdleTimeout unused, the
	// least recently used first (package keyed; a key whose circuit breaker is OPEN,
	// HALF_OPEN or FORCED_OPEN, or whose bulkhead has calls in flight or waiting, is never
	// evicted). [zero: keyed's defaults, 10 000 keys, 10 minutes]
	Keyed keyed.Config
	// Key returns the key of a call: the calls of one key share one set of patterns. It must
	// be quick; a panic of it fails the call with INTERNAL, the *levee.PanicError kept in the
	// chain, and the server is not called. [nil: TargetKey, the connection's target]
	Key func(method string, cc *grpc.ClientConn) string
}

// TargetKey returns cc.Target(), the target the connection was created for: KeyedConfig.Key's
// default, one set of patterns per service address.
func TargetKey(_ string, cc *grpc.ClientConn) string { return cc.Target() }

// MethodKey returns the full method name ("/package.Service/Method"): one set of patterns per
// method of a connection's service. For one per target and method, give a Key of your own
// that joins the two (it allocates the joined string on each call).
func MethodKey(method string, _ *grpc.ClientConn) string { return method }

// KeyedClient keeps one set of patterns — circuit breaker, bulkhead, rate limiter, retry,
// time limiter — per key of a call, by default per target (TargetKey) or per method
// (MethodKey), and guards each call with the interceptors of its key: a breaker open for one
// target or method refuses nothing to the others, as leveehttp.KeyedTransport does per host.
// Each key's patterns are built, on the key's first call, by the build function given to
// NewKeyedClient, typically from one template through levee.NewPatterns. Memory is bounded
// as package keyed bounds it (KeyedConfig.Keyed); a key whose breaker protects its dependency
// (OPEN, HALF_OPEN, FORCED_OPEN), or whose bulkhead has calls in flight or waiting, is never
// evicted.
//
// UnaryClientInterceptor runs a call through levee.DefaultPipeline of its key's patterns, as
// the package's UnaryClientInterceptor does; StreamClientInterceptor through
// StreamClientInterceptor with the key's patterns but its breaker, which records each
// stream's final status instead (a key's TimeLimiter must then be nil, see
// StreamClientInterceptor). A call whose key cannot be created fails with UNAVAILABLE when
// every held key protects its dependency (*keyed.AllKeysProtectedError, a levee rejection;
// the server is not called) and with INTERNAL when build or the Key function failed (a
// panic of either is a *levee.PanicError), the error kept in the chain.
type KeyedClient struct {
	key  func(string, *grpc.ClientConn) string
	keys *keyed.Pipelines[string, *keyedInterceptors]
}

// keyedInterceptors is the interceptors that use one key's patterns.
type keyedInterceptors struct {
	unary  grpc.UnaryClientInterceptor
	stream grpc.StreamClientInterceptor
}

// NewKeyedClient returns a KeyedClient building the patterns of each key with build. It
// refuses a nil build and an invalid cfg.Keyed with an error naming the field, e.g.
// "keyed: MaxKeys must be in [1, 1073741824], got -1". build may be called again for a key
// after the key was evicted, and must give every key instances of its own.
func NewKeyedClient(build func(key string) (levee.Patterns, error), cfg KeyedConfig) (*KeyedClient, error) {
	if build == nil {
		return nil, fmt.Errorf("leveegrpc: build must be a non-nil function, got nil")
	}
	kc := &KeyedClient{key: cfg.Key}
	if kc.key == nil {
		kc.key = TargetKey
	}
	keys, err := keyed.NewPipelines(cfg.Keyed, build, func(_ string, ps levee.Patterns) (*keyedInterceptors, error) {
		streamPatterns := ps
		streamPatterns.CircuitBreaker = nil
		return &keyedInterceptors{
			unary:  UnaryClientInterceptor(levee.DefaultPipeline[struct{}](ps, nil)),
			stream: StreamClientInterceptor(levee.DefaultPipeline[grpc.ClientStream](streamPatterns, nil), ps.CircuitBreaker),
		}, nil
	})
	if err != nil {
		return nil, err
	}
	kc.keys = keys
	return kc, nil
}

// get returns the interceptors of the call's key, or the error the caller receives.
func (kc *KeyedClient) get(method string, cc *grpc.ClientConn) (*keyedInterceptors, error) {
	key, err := kc.keyOf(method, cc)
	if err != nil {
		return nil, withStatus(codes.Internal, err)
	}
	ki, err := kc.keys.Get(key)
	switch {
	case err == nil:
		return ki, nil
	case errors.Is(err, keyed.ErrAllKeysProtected):
		return nil, withStatus(codes.Unavailable, err)
	default:
		return nil, withStatus(codes.Internal, err)
	}
}

// keyOf returns the key of a call, a panic of the Key function coming back as a
// *levee.PanicError.
func (kc *KeyedClient) keyOf(method string, cc *grpc.ClientConn) (key string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &levee.PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return kc.key(method, cc), nil
}

// UnaryClientInterceptor returns the interceptor guarding each unary call with its key's
// patterns.
func (kc *KeyedClient) UnaryClientInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		ki, err := kc.get(method, cc)
		if err != nil {
			return err
		}
		return ki.unary(ctx, method, req, reply, cc, invoker, opts...)
	}
}

// StreamClientInterceptor returns the interceptor guarding each stream with its key's
// patterns.
func (kc *KeyedClient) StreamClientInterceptor() grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		ki, err := kc.get(method, cc)
		if err != nil {
			return nil, err
		}
		return ki.stream(ctx, desc, cc, method, streamer, opts...)
	}
}

// Patterns returns the patterns of key, creating them with build if key has none yet, as
// keyed.Keyed's Get.
func (kc *KeyedClient) Patterns(key string) (levee.Patterns, error) { return kc.keys.Patterns(key) }

// All returns the keys held and their patterns, most recently used first, as keyed.Keyed's
// All. It creates nothing and makes no key more recently used.
func (kc *KeyedClient) All() iter.Seq2[string, levee.Patterns] { return kc.keys.All() }

// Metrics returns the counts of the keys (keyed.Metrics), never per key.
func (kc *KeyedClient) Metrics() keyed.Metrics { return kc.keys.Metrics() }
