package leveegrpc_test

import (
	"context"
	"errors"
	"testing"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/keyed"
	"github.com/levee-go/levee/leveegrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// breakerPerKey builds a breaker per key that opens after two failures of two calls.
func breakerPerKey(built *[]string) func(string) (levee.Patterns, error) {
	cfg := leveegrpc.CircuitBreakerConfig(circuitbreaker.Config{SlidingWindowSize: 2, MinimumNumberOfCalls: 2})
	return func(key string) (levee.Patterns, error) {
		*built = append(*built, key)
		return levee.NewPatterns(key, levee.Configs{CircuitBreaker: &cfg})
	}
}

func keyedOptions(kc *leveegrpc.KeyedClient) []grpc.DialOption {
	return []grpc.DialOption{grpc.WithUnaryInterceptor(kc.UnaryClientInterceptor()), grpc.WithStreamInterceptor(kc.StreamClientInterceptor())}
}

func unavailable(context.Context, int) error { return status.Error(codes.Unavailable, "down") }

func TestKeyedClientOpenBreakerRefusesOnlyItsTarget(t *testing.T) {
	var built []string
	kc, err := leveegrpc.NewKeyedClient(breakerPerKey(&built), leveegrpc.KeyedConfig{})
	require.NoError(t, err)
	badSvc, goodSvc := &service{unary: unavailable}, &service{}
	bad := serve(t, badSvc, nil, keyedOptions(kc)...)
	good := serve(t, goodSvc, nil, keyedOptions(kc)...)
	ctx := ctxT(t)

	for range 2 {
		_, err := bad.UnaryCall(ctx, &testpb.SimpleRequest{})
		assert.Equal(t, codes.Unavailable, status.Code(err))
	}
	_, err = bad.UnaryCall(ctx, &testpb.SimpleRequest{})
	assert.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
	for range 3 {
		_, err := good.UnaryCall(ctx, &testpb.SimpleRequest{})
		require.NoError(t, err)
	}
	stream, err := good.StreamingOutputCall(ctx, three)
	require.NoError(t, err)
	bodies, err := recvAll(stream)
	assert.Equal(t, []byte{0, 1, 2}, bodies)
	assert.Equal(t, "EOF", err.Error())

	assert.Equal(t, int64(2), badSvc.calls.Load())
	assert.Equal(t, int64(4), goodSvc.calls.Load())
	require.Len(t, built, 2)
	states := map[string]circuitbreaker.State{}
	for k, ps := range kc.All() {
		states[k] = ps.CircuitBreaker.State()
	}
	assert.Equal(t, map[string]circuitbreaker.State{built[0]: circuitbreaker.Open, built[1]: circuitbreaker.Closed}, states)
	assert.Equal(t, keyed.Metrics{Keys: 2, Hits: 5, Misses: 2, Created: 2}, kc.Metrics())
}

func TestKeyedClientPerMethod(t *testing.T) {
	var built []string
	kc, err := leveegrpc.NewKeyedClient(breakerPerKey(&built), leveegrpc.KeyedConfig{Key: leveegrpc.MethodKey, Keyed: keyed.Config{MaxKeys: 1}})
	require.NoError(t, err)
	client := serve(t, &service{unary: unavailable}, nil, keyedOptions(kc)...)
	ctx := ctxT(t)

	for range 2 {
		_, err := client.UnaryCall(ctx, &testpb.SimpleRequest{})
		assert.Equal(t, codes.Unavailable, status.Code(err))
	}
	// The unary method's breaker is open and MaxKeys is 1: the stream's key cannot be created.
	_, err = client.StreamingOutputCall(ctx, three)
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.ErrorIs(t, err, keyed.ErrAllKeysProtected)
	assert.True(t, levee.IsRejection(err))
	assert.Equal(t, []string{"/grpc.testing.TestService/UnaryCall"}, built)

	ps, err := kc.Patterns("/grpc.testing.TestService/UnaryCall")
	require.NoError(t, err)
	assert.Equal(t, circuitbreaker.Open, ps.CircuitBreaker.State())
}

func TestKeyedClientBuildErrorIsInternal(t *testing.T) {
	kc, err := leveegrpc.NewKeyedClient(func(string) (levee.Patterns, error) {
		return levee.Patterns{}, errors.New("no config")
	}, leveegrpc.KeyedConfig{})
	require.NoError(t, err)
	svc := &service{}
	client := serve(t, svc, nil, keyedOptions(kc)...)
	_, err = client.UnaryCall(ctxT(t), &testpb.SimpleRequest{})
	assert.Equal(t, codes.Internal, status.Code(err))
	assert.EqualError(t, err, "no config")
	assert.Equal(t, int64(0), svc.calls.Load())
}

func TestNewKeyedClientRefusesInvalidConfig(t *testing.T) {
	_, err := leveegrpc.NewKeyedClient(nil, leveegrpc.KeyedConfig{})
	assert.EqualError(t, err, "leveegrpc: build must be a non-nil function, got nil")
	_, err = leveegrpc.NewKeyedClient(func(string) (levee.Patterns, error) { return levee.Patterns{}, nil }, leveegrpc.KeyedConfig{Keyed: keyed.Config{MaxKeys: -1}})
	assert.EqualError(t, err, "keyed: MaxKeys must be in [1, 1073741824], got -1")
}

// A Key function that panics fails the call with INTERNAL, the *levee.PanicError in the
// chain; the server is not called and no key is built.
func TestKeyedClientKeyPanicIsInternal(t *testing.T) {
	built := 0
	kc, err := leveegrpc.NewKeyedClient(func(string) (levee.Patterns, error) { built++; return levee.Patterns{}, nil },
		leveegrpc.KeyedConfig{Key: func(string, *grpc.ClientConn) string { panic("key bug") }})
	require.NoError(t, err)
	svc := &service{}
	client := serve(t, svc, nil, keyedOptions(kc)...)
	ctx := ctxT(t)
	assertPanic := func(err error) {
		t.Helper()
		assert.Equal(t, codes.Internal, status.Code(err))
		assert.EqualError(t, err, "levee: panic: key bug")
		var pe *levee.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "key bug", pe.Value)
	}
	_, err = client.UnaryCall(ctx, &testpb.SimpleRequest{})
	assertPanic(err)
	_, err = client.StreamingOutputCall(ctx, three)
	assertPanic(err)
	assertPanic(kc.UnaryClientInterceptor()(ctx, "/s/m", nil, nil, nil,
		func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
			t.Error("invoked")
			return nil
		}))
	assert.Equal(t, int64(0), svc.calls.Load())
	assert.Zero(t, built)
	assert.Equal(t, keyed.Metrics{}, kc.Metrics())
}
