package leveegrpc_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveegrpc"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/timelimiter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// guardedServer serves svc behind a Server built from cfg and returns a plain client.
func guardedServer(t *testing.T, svc *service, cfg leveegrpc.ServerConfig) testpb.TestServiceClient {
	t.Helper()
	s, err := leveegrpc.NewServer(cfg)
	require.NoError(t, err)
	return serve(t, svc, []grpc.ServerOption{
		grpc.UnaryInterceptor(s.UnaryServerInterceptor()),
		grpc.StreamInterceptor(s.StreamServerInterceptor()),
	})
}

// blockFirst returns a script whose first call signals started and waits for release.
func blockFirst(started, release chan struct{}) func(ctx context.Context, n int) error {
	return func(ctx context.Context, n int) error {
		if n == 1 {
			close(started)
			<-release
		}
		return nil
	}
}

func TestServerBulkheadFullIsResourceExhaustedWithPushback(t *testing.T) {
	for _, c := range []struct {
		name     string
		pushback time.Duration
		want     []string
	}{
		{"default", 0, []string{"100"}},
		{"rounded up", 1500 * time.Microsecond, []string{"2"}},
		{"none", leveegrpc.NoPushback, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			started, release := make(chan struct{}), make(chan struct{})
			svc := &service{unary: blockFirst(started, release)}
			bh := levee.Must(bulkhead.New("server", bulkhead.Config{MaxConcurrentCalls: 1}))
			client := guardedServer(t, svc, leveegrpc.ServerConfig{Bulkhead: bh, BulkheadPushback: c.pushback})
			ctx := ctxT(t)

			var wg sync.WaitGroup
			var firstErr error
			wg.Go(func() { _, firstErr = client.UnaryCall(ctx, &testpb.SimpleRequest{}) })
			<-started

			var trailer metadata.MD
			_, err := client.UnaryCall(ctx, &testpb.SimpleRequest{}, grpc.Trailer(&trailer))
			assert.Equal(t, codes.ResourceExhausted, status.Code(err))
			assert.Equal(t, "bulkhead: Bulkhead 'server' is full and does not permit further calls", status.Convert(err).Message())
			assert.Equal(t, c.want, trailer.Get(leveegrpc.PushbackKey))

			close(release)
			wg.Wait()
			assert.NoError(t, firstErr)
			assert.Equal(t, int64(1), svc.calls.Load(), "the refused call never reached the handler")
			assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
		})
	}
}

func TestServerPanicIsInternalAndReleasesThePermit(t *testing.T) {
	var log bytes.Buffer
	svc := &service{unary: func(_ context.Context, n int) error {
		if n == 1 {
			panic("boom")
		}
		return nil
	}}
	bh := levee.Must(bulkhead.New("server", bulkhead.Config{MaxConcurrentCalls: 1}))
	client := guardedServer(t, svc, leveegrpc.ServerConfig{
		Bulkhead: bh,
		Logger:   slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{ReplaceAttr: dropTimeAndStack})),
	})
	ctx := ctxT(t)

	_, err := client.UnaryCall(ctx, &testpb.SimpleRequest{})
	assert.Equal(t, codes.Internal, status.Code(err))
	assert.Equal(t, "leveegrpc: the handler panicked", status.Convert(err).Message())
	assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
	assert.Equal(t, `level=ERROR msg="leveegrpc: handler panicked" method=/grpc.testing.TestService/UnaryCall panic=boom`+"\n", log.String())

	resp, err := client.UnaryCall(ctx, &testpb.SimpleRequest{})
	require.NoError(t, err)
	assert.Equal(t, []byte{2}, resp.GetPayload().GetBody())
}

func dropTimeAndStack(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey || a.Key == "stack" {
		return slog.Attr{}
	}
	return a
}

func TestServerStreamBulkheadFull(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	svc := &service{stream: func(_ grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse], n int) error {
		if n == 1 {
			close(started)
			<-release
		}
		return nil
	}}
	bh := levee.Must(bulkhead.New("server", bulkhead.Config{MaxConcurrentCalls: 1}))
	client := guardedServer(t, svc, leveegrpc.ServerConfig{Bulkhead: bh, BulkheadPushback: 30 * time.Millisecond})
	ctx := ctxT(t)

	first, err := client.StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{})
	require.NoError(t, err)
	<-started

	second, err := client.StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{})
	require.NoError(t, err)
	_, err = second.Recv()
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	assert.Equal(t, []string{"30"}, second.Trailer().Get(leveegrpc.PushbackKey))

	close(release)
	_, err = first.Recv()
	assert.Equal(t, "EOF", errString(err))
	assert.Equal(t, int64(1), svc.calls.Load())
	assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// transportStream stands for gRPC's server transport stream in tests that call a Server's
// interceptor directly: it keeps the trailer set.
type transportStream struct {
	mu      sync.Mutex
	trailer metadata.MD
}

func (s *transportStream) Method() string               { return "/test/Method" }
func (s *transportStream) SetHeader(metadata.MD) error  { return nil }
func (s *transportStream) SendHeader(metadata.MD) error { return nil }
func (s *transportStream) SetTrailer(md metadata.MD) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trailer = metadata.Join(s.trailer, md)
	return nil
}

var unaryInfo = &grpc.UnaryServerInfo{FullMethod: "/test/Method"}

func TestServerRateLimiterPushbackIsTheRealWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := levee.Must(ratelimiter.New("server", ratelimiter.Config{
			LimitForPeriod: 1, LimitRefreshPeriod: 10 * time.Second, TimeoutDuration: ratelimiter.NoWait,
		}))
		s, err := leveegrpc.NewServer(leveegrpc.ServerConfig{RateLimiter: rl})
		require.NoError(t, err)
		intercept := s.UnaryServerInterceptor()
		handler := func(context.Context, any) (any, error) { return "ok", nil }

		ts := &transportStream{}
		ctx := grpc.NewContextWithServerTransportStream(t.Context(), ts)
		resp, err := intercept(ctx, nil, unaryInfo, handler)
		require.NoError(t, err)
		assert.Equal(t, "ok", resp)

		time.Sleep(3*time.Second + 500*time.Microsecond)
		resp, err = intercept(ctx, nil, unaryInfo, handler)
		assert.Nil(t, resp)
		assert.Equal(t, codes.ResourceExhausted, status.Code(err))
		assert.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)
		assert.Equal(t, []string{"7000"}, ts.trailer.Get(leveegrpc.PushbackKey), "6.9995s rounded up")
	})
}

func TestServerTimeLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := levee.Must(timelimiter.New("server", timelimiter.Config{TimeoutDuration: 2 * time.Second}))
		s, err := leveegrpc.NewServer(leveegrpc.ServerConfig{TimeLimiter: tl})
		require.NoError(t, err)
		intercept := s.UnaryServerInterceptor()
		ctx := grpc.NewContextWithServerTransportStream(t.Context(), &transportStream{})

		// A handler that honours its context ends at the limit with DEADLINE_EXCEEDED.
		start := time.Now()
		_, err = intercept(ctx, nil, unaryInfo, func(ctx context.Context, _ any) (any, error) {
			<-ctx.Done()
			return nil, status.FromContextError(ctx.Err()).Err()
		})
		assert.Equal(t, 2*time.Second, time.Since(start))
		assert.Equal(t, codes.DeadlineExceeded, status.Code(err))
		var te *timelimiter.TimeoutError
		require.ErrorAs(t, err, &te)
		assert.Equal(t, 2*time.Second, te.Timeout)
		assert.Equal(t, "timelimiter: TimeLimiter 'server' recorded a timeout exception", status.Convert(err).Message())

		// One that succeeds in time, or late all the same, keeps its response.
		for _, d := range []time.Duration{time.Second, 3 * time.Second} {
			resp, err := intercept(ctx, nil, unaryInfo, func(context.Context, any) (any, error) {
				time.Sleep(d)
				return "ok", nil
			})
			require.NoError(t, err)
			assert.Equal(t, "ok", resp)
		}

		// The client's cancellation is recorded by nobody.
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(time.Second, cancel)
		_, err = intercept(cctx, nil, unaryInfo, func(ctx context.Context, _ any) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
		assert.Equal(t, codes.Canceled, status.Code(err))
		assert.ErrorIs(t, err, context.Canceled)

		m := tl.Metrics()
		assert.Equal(t, timelimiter.Metrics{NumberOfSuccessfulCalls: 2, NumberOfTimedOutCalls: 1}, m)
	})
}

// serverStream stands for a gRPC server stream in tests that call a Server's stream
// interceptor directly.
type serverStream struct {
	grpc.ServerStream
	ctx     context.Context
	trailer metadata.MD
}

func (s *serverStream) Context() context.Context  { return s.ctx }
func (s *serverStream) SetTrailer(md metadata.MD) { s.trailer = metadata.Join(s.trailer, md) }

func TestServerStreamTimeLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := levee.Must(timelimiter.New("server", timelimiter.Config{TimeoutDuration: 2 * time.Second}))
		s, err := leveegrpc.NewServer(leveegrpc.ServerConfig{TimeLimiter: tl})
		require.NoError(t, err)
		ss := &serverStream{ctx: t.Context()}
		start := time.Now()
		var deadline time.Time
		err = s.StreamServerInterceptor()(nil, ss, &grpc.StreamServerInfo{FullMethod: "/test/Stream"}, func(_ any, stream grpc.ServerStream) error {
			deadline, _ = stream.Context().Deadline()
			<-stream.Context().Done()
			return stream.Context().Err()
		})
		assert.Equal(t, 2*time.Second, time.Since(start))
		assert.Equal(t, start.Add(2*time.Second), deadline)
		assert.Equal(t, codes.DeadlineExceeded, status.Code(err))
		assert.ErrorIs(t, err, timelimiter.ErrTimeout)
		assert.Equal(t, int64(1), tl.Metrics().NumberOfTimedOutCalls)
	})
}

func TestServerStreamPanicReleasesThePermit(t *testing.T) {
	bh := levee.Must(bulkhead.New("server", bulkhead.Config{MaxConcurrentCalls: 1}))
	s, err := leveegrpc.NewServer(leveegrpc.ServerConfig{Bulkhead: bh})
	require.NoError(t, err)
	ss := &serverStream{ctx: t.Context()}
	err = s.StreamServerInterceptor()(nil, ss, &grpc.StreamServerInfo{FullMethod: "/test/Stream"}, func(any, grpc.ServerStream) error {
		panic(errors.New("boom"))
	})
	assert.Equal(t, codes.Internal, status.Code(err))
	assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
}

func TestNewServerRefusesANegativePushback(t *testing.T) {
	s, err := leveegrpc.NewServer(leveegrpc.ServerConfig{BulkheadPushback: -2})
	assert.Nil(t, s)
	assert.EqualError(t, err, "leveegrpc: BulkheadPushback must be >= 0 (or NoPushback for none), got -2ns")
}

func TestServerMapsTheHandlersLeveeErrorsWithoutPushback(t *testing.T) {
	downstream := levee.Must(bulkhead.New("downstream", bulkhead.Config{MaxConcurrentCalls: bulkhead.NoConcurrentCalls}))
	_, full := bulkhead.Execute(t.Context(), downstream, func(context.Context) (int, error) { return 1, nil })
	require.ErrorIs(t, full, bulkhead.ErrBulkheadFull)
	own := levee.Must(bulkhead.New("server", bulkhead.Config{MaxConcurrentCalls: 1}))
	s, err := leveegrpc.NewServer(leveegrpc.ServerConfig{Bulkhead: own})
	require.NoError(t, err)

	for _, c := range []struct {
		err  error
		code codes.Code
	}{
		{full, codes.ResourceExhausted},
		{circuitbreaker.ErrCallNotPermitted, codes.Unavailable},
		{errors.New("plain"), codes.Unknown},
	} {
		ts := &transportStream{}
		ctx := grpc.NewContextWithServerTransportStream(t.Context(), ts)
		_, err := s.UnaryServerInterceptor()(ctx, nil, unaryInfo, func(context.Context, any) (any, error) { return nil, c.err })
		assert.Equal(t, c.code, status.Code(err), c.err.Error())
		assert.ErrorIs(t, err, c.err)
		assert.Equal(t, metadata.MD(nil), ts.trailer, "no pushback of the server's own")
	}
	assert.Equal(t, 1, own.Metrics().AvailableConcurrentCalls)
}
