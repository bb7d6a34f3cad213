package leveegrpc_test

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveegrpc"
	"github.com/levee-go/levee/retry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

var streamDesc = &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}

// panickingStreamer is a grpc.Streamer that panics with v.
func panickingStreamer(v any) grpc.Streamer {
	return func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
		panic(v)
	}
}

// halfOpen returns a HALF_OPEN breaker that permits one call.
func halfOpen(t *testing.T) *circuitbreaker.CircuitBreaker {
	cb := levee.Must(circuitbreaker.New("svc", leveegrpc.CircuitBreakerConfig(circuitbreaker.Config{PermittedNumberOfCallsInHalfOpenState: 1})))
	require.NoError(t, cb.TransitionToOpenState())
	require.NoError(t, cb.TransitionToHalfOpenState())
	return cb
}

// breakerCounts returns the state of cb's Metrics and its counts of buffered, failed and
// successful calls.
func breakerCounts(cb *circuitbreaker.CircuitBreaker) [4]int {
	m := cb.Metrics()
	return [4]int{int(m.State), m.NumberOfBufferedCalls, m.NumberOfFailedCalls, m.NumberOfSuccessfulCalls}
}

func counts(s circuitbreaker.State, buffered, failed, succeeded int) [4]int {
	return [4]int{int(s), buffered, failed, succeeded}
}

// A streamer that panics under a pipeline ends the breaker's permit as a failure: a HALF_OPEN
// breaker permitting one call opens, rather than refusing every call for good, and the
// caller receives INTERNAL carrying the *levee.PanicError.
func TestStreamClientPanicInPipelineRecordsAFailure(t *testing.T) {
	boom := errors.New("boom")
	t.Run("half open", func(t *testing.T) {
		cb := halfOpen(t)
		ic := leveegrpc.StreamClientInterceptor(levee.DefaultPipeline[grpc.ClientStream](levee.Patterns{}, nil), cb)
		cs, err := ic(t.Context(), streamDesc, nil, "/s/m", panickingStreamer(boom))
		assert.Nil(t, cs)
		assert.Equal(t, codes.Internal, status.Code(err))
		var perr *levee.PanicError
		require.ErrorAs(t, err, &perr)
		assert.Equal(t, boom, perr.Value)
		assert.Equal(t, circuitbreaker.Open, cb.State(), "the half-open call failed")
		assert.Equal(t, counts(circuitbreaker.Open, 1, 1, 0), breakerCounts(cb))
	})
	t.Run("closed, with a bulkhead", func(t *testing.T) {
		cb := levee.Must(circuitbreaker.New("svc", leveegrpc.CircuitBreakerConfig(circuitbreaker.Config{})))
		bh := levee.Must(bulkhead.New("svc", bulkhead.Config{MaxConcurrentCalls: 1}))
		ic := leveegrpc.StreamClientInterceptor(levee.DefaultPipeline[grpc.ClientStream](levee.Patterns{Bulkhead: bh}, nil), cb)
		for range 2 {
			_, err := ic(t.Context(), streamDesc, nil, "/s/m", panickingStreamer(boom))
			assert.Equal(t, codes.Internal, status.Code(err))
		}
		assert.Equal(t, counts(circuitbreaker.Closed, 2, 2, 0), breakerCounts(cb))
		assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
	})
}

// Without a pipeline the streamer's panic reaches the caller, as without the interceptor,
// after the permit has been recorded as a failure.
func TestStreamClientPanicWithoutPipelineRecordsAFailure(t *testing.T) {
	cb := halfOpen(t)
	ic := leveegrpc.StreamClientInterceptor(nil, cb)
	assert.PanicsWithValue(t, "streamer", func() {
		_, _ = ic(t.Context(), streamDesc, nil, "/s/m", panickingStreamer("streamer"))
	})
	assert.Equal(t, circuitbreaker.Open, cb.State())

	cb = levee.Must(circuitbreaker.New("svc", leveegrpc.CircuitBreakerConfig(circuitbreaker.Config{})))
	ic = leveegrpc.StreamClientInterceptor(nil, cb)
	assert.PanicsWithValue(t, "streamer", func() {
		_, _ = ic(t.Context(), streamDesc, nil, "/s/m", panickingStreamer("streamer"))
	})
	assert.Equal(t, counts(circuitbreaker.Closed, 1, 1, 0), breakerCounts(cb))
}

// A streamer that never returns (runtime.Goexit) tells nothing about the server: its permit
// is given back unrecorded.
func TestStreamClientGoexitReleasesThePermit(t *testing.T) {
	cb := halfOpen(t)
	ic := leveegrpc.StreamClientInterceptor(nil, cb)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = ic(context.Background(), streamDesc, nil, "/s/m", func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
			runtime.Goexit()
			return nil, nil
		})
	}()
	<-done
	assert.Equal(t, counts(circuitbreaker.HalfOpen, 0, 0, 0), breakerCounts(cb))
	p, err := cb.Acquire()
	require.NoError(t, err, "the permit was given back")
	p.Release()
}

// fakeStream is a client stream whose methods run the functions set, and otherwise succeed
// with nothing.
type fakeStream struct {
	grpc.ClientStream
	ctx    context.Context
	header func() (metadata.MD, error)
	send   func(any) error
	recv   func(any) error
}

func (s *fakeStream) Context() context.Context { return s.ctx }
func (s *fakeStream) CloseSend() error         { return nil }
func (s *fakeStream) Trailer() metadata.MD     { return nil }
func (s *fakeStream) Header() (metadata.MD, error) {
	if s.header == nil {
		return metadata.MD{}, nil
	}
	return s.header()
}

func (s *fakeStream) SendMsg(m any) error {
	if s.send == nil {
		return nil
	}
	return s.send(m)
}

func (s *fakeStream) RecvMsg(m any) error {
	if s.recv == nil {
		return nil
	}
	return s.recv(m)
}

func streamerOf(streams ...*fakeStream) grpc.Streamer {
	n := 0
	return func(ctx context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, _ string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
		s := streams[n]
		n++
		s.ctx = ctx
		return s, nil
	}
}

// A panic of an established stream before it commits (its Header) ends its permit as a
// failure; the caller reads INTERNAL from RecvMsg.
func TestStreamClientPanicBeforeCommitRecordsAFailure(t *testing.T) {
	cb := levee.Must(circuitbreaker.New("svc", leveegrpc.CircuitBreakerConfig(circuitbreaker.Config{})))
	ic := leveegrpc.StreamClientInterceptor(levee.Compose[grpc.ClientStream](), cb)
	cs, err := ic(t.Context(), streamDesc, nil, "/s/m", streamerOf(&fakeStream{header: func() (metadata.MD, error) { panic("header") }}))
	require.NoError(t, err)
	err = cs.RecvMsg(&testpb.StreamingOutputCallResponse{})
	assert.Equal(t, codes.Internal, status.Code(err))
	var perr *levee.PanicError
	require.ErrorAs(t, err, &perr)
	assert.Equal(t, "header", perr.Value)
	assert.Equal(t, counts(circuitbreaker.Closed, 1, 1, 0), breakerCounts(cb))
}

// A stream that panics replaying the messages sent to the attempt before it ends its permit
// as a failure and leaves the stream usable: the caller reads INTERNAL instead of waiting
// for ever.
func TestStreamClientPanicReplayingRecordsAFailure(t *testing.T) {
	cb := levee.Must(circuitbreaker.New("svc", leveegrpc.CircuitBreakerConfig(circuitbreaker.Config{})))
	r := levee.Must(retry.New("svc", leveegrpc.RetryConfig(retry.Config{MaxAttempts: 2, WaitDuration: retry.NoWait})))
	ic := leveegrpc.StreamClientInterceptor(levee.Compose[grpc.ClientStream]().WithRetry(r), cb)
	answer := make(chan struct{})
	first := &fakeStream{
		header: func() (metadata.MD, error) { <-answer; return nil, nil }, // a trailers-only answer
		recv:   func(any) error { return status.Error(codes.Unavailable, "shutting down") },
	}
	second := &fakeStream{send: func(any) error { panic("replay") }}
	cs, err := ic(t.Context(), streamDesc, nil, "/s/m", streamerOf(first, second))
	require.NoError(t, err)
	require.NoError(t, cs.SendMsg(&testpb.StreamingInputCallRequest{}))
	close(answer)
	err = cs.RecvMsg(&testpb.StreamingOutputCallResponse{})
	assert.Equal(t, codes.Internal, status.Code(err))
	var perr *levee.PanicError
	require.ErrorAs(t, err, &perr)
	assert.Equal(t, "replay", perr.Value)
	assert.Equal(t, counts(circuitbreaker.Closed, 2, 2, 0), breakerCounts(cb))
}

// A committed stream whose RecvMsg or SendMsg panics (a codec's panic, say) ends its permit
// as a failure; the panic reaches the caller.
func TestStreamClientPanicOfACommittedStreamRecordsAFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		use  func(grpc.ClientStream)
	}{
		{"RecvMsg", func(cs grpc.ClientStream) { _ = cs.RecvMsg(&testpb.StreamingOutputCallResponse{}) }},
		{"SendMsg", func(cs grpc.ClientStream) { _ = cs.SendMsg(&testpb.StreamingInputCallRequest{}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cb := halfOpen(t)
			ic := leveegrpc.StreamClientInterceptor(nil, cb)
			cs, err := ic(t.Context(), streamDesc, nil, "/s/m", streamerOf(&fakeStream{
				recv: func(any) error { panic("codec") },
				send: func(any) error { panic("codec") },
			}))
			require.NoError(t, err)
			assert.PanicsWithValue(t, "codec", func() { tc.use(cs) })
			assert.Equal(t, circuitbreaker.Open, cb.State())
		})
	}
}

// A server handler that panics gives back its bulkhead permit and ends its adaptive permit,
// on the unary and the streaming interceptor.
func TestServerPanicEndsEveryPermit(t *testing.T) {
	bh := levee.Must(bulkhead.New("server", bulkhead.Config{MaxConcurrentCalls: 1}))
	al := levee.Must(adaptive.New("server", adaptive.Config{InitialLimit: 1, MinLimit: 1, MaxLimit: 1}))
	s, err := leveegrpc.NewServer(leveegrpc.ServerConfig{Bulkhead: bh, ConcurrencyLimiter: al})
	require.NoError(t, err)
	for range 2 {
		err = s.StreamServerInterceptor()(nil, &serverStream{ctx: t.Context()}, &grpc.StreamServerInfo{FullMethod: "/test/Stream"}, func(any, grpc.ServerStream) error {
			panic("stream")
		})
		assert.Equal(t, codes.Internal, status.Code(err))
		_, err = s.UnaryServerInterceptor()(grpc.NewContextWithServerTransportStream(t.Context(), &transportStream{}), nil, unaryInfo, func(context.Context, any) (any, error) {
			panic("unary")
		})
		assert.Equal(t, codes.Internal, status.Code(err))
	}
	assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
	m := al.Metrics()
	assert.Equal(t, 0, m.InFlight)
	assert.Equal(t, uint64(4), m.Permitted)
	assert.Equal(t, uint64(0), m.Rejected)
}
