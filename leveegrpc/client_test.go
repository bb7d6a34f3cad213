package leveegrpc_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveegrpc"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// guarded holds a client whose unary calls go through a retry and a breaker set up by
// RetryConfig and CircuitBreakerConfig, in DefaultPipeline's order.
type guarded struct {
	client testpb.TestServiceClient
	retry  *retry.Retry
	cb     *circuitbreaker.CircuitBreaker

	mu            sync.Mutex
	retryEvents   []retry.Event
	breakerEvents []circuitbreaker.Event
}

func newGuarded(t *testing.T, svc *service, rc retry.Config, cc circuitbreaker.Config) *guarded {
	t.Helper()
	g := &guarded{
		retry: levee.Must(retry.New("svc", leveegrpc.RetryConfig(rc))),
		cb:    levee.Must(circuitbreaker.New("svc", leveegrpc.CircuitBreakerConfig(cc))),
	}
	unsubscribeRetry := g.retry.Subscribe(func(e retry.Event) {
		g.mu.Lock()
		g.retryEvents = append(g.retryEvents, e)
		g.mu.Unlock()
	})
	unsubscribeBreaker := g.cb.Subscribe(func(e circuitbreaker.Event) {
		g.mu.Lock()
		g.breakerEvents = append(g.breakerEvents, e)
		g.mu.Unlock()
	})
	t.Cleanup(func() { unsubscribeRetry(); unsubscribeBreaker() })
	p := levee.DefaultPipeline[struct{}](levee.Patterns{Retry: g.retry, CircuitBreaker: g.cb}, nil)
	g.client = serve(t, svc, nil, grpc.WithUnaryInterceptor(leveegrpc.UnaryClientInterceptor(p)))
	return g
}

func (g *guarded) retryTypes() []retry.EventType {
	g.mu.Lock()
	defer g.mu.Unlock()
	var ts []retry.EventType
	for _, e := range g.retryEvents {
		ts = append(ts, e.Type)
	}
	return ts
}

func (g *guarded) breakerTypes() []circuitbreaker.EventType {
	g.mu.Lock()
	defer g.mu.Unlock()
	var ts []circuitbreaker.EventType
	for _, e := range g.breakerEvents {
		if e.Type != circuitbreaker.EventStateTransition && e.Type != circuitbreaker.EventFailureRateExceeded {
			ts = append(ts, e.Type)
		}
	}
	return ts
}

// failFirst returns a script failing the first n calls with code c, with pushback md in the
// trailers when md is not nil.
func failFirst(n int, c codes.Code, md metadata.MD) func(ctx context.Context, call int) error {
	return func(ctx context.Context, call int) error {
		if call > n {
			return nil
		}
		if md != nil {
			if err := grpc.SetTrailer(ctx, md); err != nil {
				return err
			}
		}
		return status.Errorf(c, "call %d fails", call)
	}
}

func TestUnaryUnavailableTwiceThenOK(t *testing.T) {
	svc := &service{unary: failFirst(2, codes.Unavailable, nil)}
	g := newGuarded(t, svc, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait}, circuitbreaker.Config{})

	resp, err := g.client.UnaryCall(ctxT(t), &testpb.SimpleRequest{})
	require.NoError(t, err)
	assert.Equal(t, []byte{3}, resp.GetPayload().GetBody(), "the reply of the third attempt")
	assert.Equal(t, "served", resp.GetUsername())
	assert.Equal(t, int64(3), svc.calls.Load())
	assert.Equal(t, []retry.EventType{retry.EventRetry, retry.EventRetry, retry.EventSuccess}, g.retryTypes())
	assert.Equal(t, retry.Metrics{NumberOfSuccessfulCallsWithRetryAttempt: 1, NumberOfTotalCalls: 3}, g.retry.Metrics())
	m := g.cb.Metrics()
	assert.Equal(t, 2, m.NumberOfFailedCalls)
	assert.Equal(t, 1, m.NumberOfSuccessfulCalls)
}

func TestUnaryUnavailableExhaustsAttempts(t *testing.T) {
	svc := &service{unary: failFirst(5, codes.Unavailable, nil)}
	g := newGuarded(t, svc, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait}, circuitbreaker.Config{})

	_, err := g.client.UnaryCall(ctxT(t), &testpb.SimpleRequest{})
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
	assert.Equal(t, "retry: Retry 'svc' has exhausted all attempts (3): rpc error: code = Unavailable desc = call 3 fails", status.Convert(err).Message())
	assert.Equal(t, int64(3), svc.calls.Load())
}

func TestUnaryInvalidArgumentNotRetriedNotRecorded(t *testing.T) {
	svc := &service{unary: failFirst(1, codes.InvalidArgument, nil)}
	g := newGuarded(t, svc, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait}, circuitbreaker.Config{})

	_, err := g.client.UnaryCall(ctxT(t), &testpb.SimpleRequest{})
	assert.Equal(t, codes.InvalidArgument, status.Code(err))
	assert.Equal(t, "call 1 fails", status.Convert(err).Message())
	assert.Equal(t, int64(1), svc.calls.Load())
	assert.Equal(t, []retry.EventType{retry.EventIgnoredError}, g.retryTypes())
	assert.Equal(t, []circuitbreaker.EventType{circuitbreaker.EventIgnoredError}, g.breakerTypes())
	m := g.cb.Metrics()
	assert.Equal(t, 0, m.NumberOfBufferedCalls)
}

func TestUnaryPushbackIsTheNextWait(t *testing.T) {
	const pushback = 60 * time.Millisecond
	svc := &service{unary: failFirst(1, codes.ResourceExhausted, metadata.Pairs(leveegrpc.PushbackKey, "60"))}
	// Without the pushback the retry would not wait at all.
	g := newGuarded(t, svc, retry.Config{MaxAttempts: 2, WaitDuration: retry.NoWait}, circuitbreaker.Config{})

	resp, err := g.client.UnaryCall(ctxT(t), &testpb.SimpleRequest{})
	require.NoError(t, err)
	assert.Equal(t, []byte{2}, resp.GetPayload().GetBody())
	ts := svc.instants()
	require.Len(t, ts, 2)
	assert.GreaterOrEqual(t, ts[1].Sub(ts[0]), pushback, "measured between the server's two calls")
	g.mu.Lock()
	defer g.mu.Unlock()
	require.Equal(t, retry.EventRetry, g.retryEvents[0].Type)
	assert.Equal(t, pushback, g.retryEvents[0].WaitInterval)
	wait, found := leveegrpc.Pushback(g.retryEvents[0].LastErr)
	assert.True(t, found)
	assert.Equal(t, pushback, wait)
}

func TestUnaryPushbackRefusingRetry(t *testing.T) {
	for _, value := range []string{"-1", "soon"} {
		t.Run(value, func(t *testing.T) {
			svc := &service{unary: failFirst(1, codes.Unavailable, metadata.Pairs(leveegrpc.PushbackKey, value))}
			g := newGuarded(t, svc, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait}, circuitbreaker.Config{})

			_, err := g.client.UnaryCall(ctxT(t), &testpb.SimpleRequest{})
			assert.Equal(t, codes.Unavailable, status.Code(err))
			wait, found := leveegrpc.Pushback(err)
			assert.True(t, found)
			assert.Equal(t, time.Duration(-1), wait)
			assert.Equal(t, int64(1), svc.calls.Load())
			assert.Equal(t, []retry.EventType{retry.EventIgnoredError}, g.retryTypes())
			assert.Equal(t, 1, g.cb.Metrics().NumberOfFailedCalls, "still a failure of the server")
		})
	}
}

func TestUnaryOpenBreakerFailsFast(t *testing.T) {
	svc := &service{unary: failFirst(100, codes.Internal, nil)}
	g := newGuarded(t, svc, retry.Config{MaxAttempts: 1}, circuitbreaker.Config{
		SlidingWindowSize: 2, MinimumNumberOfCalls: 2, WaitDurationInOpenState: time.Hour,
	})
	ctx := ctxT(t)
	for range 2 {
		_, err := g.client.UnaryCall(ctx, &testpb.SimpleRequest{})
		assert.Equal(t, codes.Internal, status.Code(err))
	}
	require.Equal(t, circuitbreaker.Open, g.cb.State())

	_, err := g.client.UnaryCall(ctx, &testpb.SimpleRequest{})
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
	assert.True(t, levee.IsRejection(err))
	assert.Equal(t, "circuitbreaker: CircuitBreaker 'svc' is OPEN and does not permit further calls", status.Convert(err).Message())
	assert.Equal(t, int64(2), svc.calls.Load(), "the refused call never reached the server")
	assert.Equal(t, 1, g.cb.Metrics().NumberOfNotPermittedCalls)
}

func TestUnaryCallerCancellationIsNobodysFailure(t *testing.T) {
	started := make(chan struct{})
	svc := &service{unary: func(ctx context.Context, _ int) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}}
	g := newGuarded(t, svc, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait}, circuitbreaker.Config{})
	ctx, cancel := context.WithCancel(ctxT(t))
	go func() {
		<-started
		cancel()
	}()

	_, err := g.client.UnaryCall(ctx, &testpb.SimpleRequest{})
	assert.Equal(t, codes.Canceled, status.Code(err))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, int64(1), svc.calls.Load())
	assert.Equal(t, 0, g.cb.Metrics().NumberOfBufferedCalls)
	assert.Equal(t, []circuitbreaker.EventType(nil), g.breakerTypes())
	assert.Equal(t, retry.Metrics{}, g.retry.Metrics())
}

func TestUnaryLeveeErrorsMapToStatus(t *testing.T) {
	svc := &service{}
	boom := errors.New("boom")
	cases := []struct {
		name string
		d    levee.Decorator[struct{}]
		code codes.Code
		is   error
	}{
		{"panic", func(context.Context, func(context.Context) (struct{}, error)) (struct{}, error) { panic(boom) }, codes.Internal, boom},
		{"plain error", func(context.Context, func(context.Context) (struct{}, error)) (struct{}, error) {
			return struct{}{}, boom
		}, codes.Unknown, boom},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := levee.Compose[struct{}]().With(c.d)
			client := serve(t, svc, nil, grpc.WithUnaryInterceptor(leveegrpc.UnaryClientInterceptor(p)))
			_, err := client.UnaryCall(ctxT(t), &testpb.SimpleRequest{})
			assert.Equal(t, c.code, status.Code(err))
			assert.ErrorIs(t, err, c.is)
		})
	}
	assert.Equal(t, int64(0), svc.calls.Load())
}

func TestUnaryTimeLimitedAttemptsDoNotOverlap(t *testing.T) {
	// The first call ends only when the test does: the client's time limit alone ends the
	// attempt, never the server's answer to the same deadline.
	release := make(chan struct{})
	svc := &service{unary: func(ctx context.Context, n int) error {
		if n == 1 {
			<-release
		}
		return nil
	}}
	// Generous, so that the second attempt has time to succeed on a loaded machine.
	tl := levee.Must(timelimiter.New("svc", timelimiter.Config{TimeoutDuration: 250 * time.Millisecond}))
	r := levee.Must(retry.New("svc", leveegrpc.RetryConfig(retry.Config{
		MaxAttempts: 2, WaitDuration: retry.NoWait, RetryOnErrorPredicate: leveegrpc.RetryCodes(codes.DeadlineExceeded),
	})))
	var retried []error
	r.Subscribe(func(e retry.Event) {
		if e.Type == retry.EventRetry {
			retried = append(retried, e.LastErr)
		}
	})
	p := levee.DefaultPipeline[struct{}](levee.Patterns{Retry: r, TimeLimiter: tl}, nil)
	client := serve(t, svc, nil, grpc.WithUnaryInterceptor(leveegrpc.UnaryClientInterceptor(p)))
	t.Cleanup(func() { close(release) }) // before the server stops

	resp, err := client.UnaryCall(ctxT(t), &testpb.SimpleRequest{})
	require.NoError(t, err)
	assert.Equal(t, []byte{2}, resp.GetPayload().GetBody())
	assert.Equal(t, int64(2), svc.calls.Load())
	require.Len(t, retried, 1)
	assert.Equal(t, codes.DeadlineExceeded, leveegrpc.Code(retried[0]))
	assert.ErrorIs(t, retried[0], context.DeadlineExceeded)
	assert.Equal(t, retry.Metrics{NumberOfSuccessfulCallsWithRetryAttempt: 1, NumberOfTotalCalls: 2}, r.Metrics())
}

func TestUnaryTimeLimitIsDeadlineExceeded(t *testing.T) {
	release := make(chan struct{})
	svc := &service{unary: func(context.Context, int) error {
		<-release
		return nil
	}}
	tl := levee.Must(timelimiter.New("svc", timelimiter.Config{TimeoutDuration: 20 * time.Millisecond}))
	p := levee.Compose[struct{}]().WithTimeLimiter(tl)
	client := serve(t, svc, nil, grpc.WithUnaryInterceptor(leveegrpc.UnaryClientInterceptor(p)))
	t.Cleanup(func() { close(release) }) // before the server stops

	for range 5 {
		_, err := client.UnaryCall(ctxT(t), &testpb.SimpleRequest{})
		assert.Equal(t, codes.DeadlineExceeded, status.Code(err))
		// A *timelimiter.TimeoutError when the limiter woke first, the attempt's own
		// DEADLINE_EXCEEDED when gRPC's answer to the same deadline came first: the caller
		// cannot tell them apart, and neither can the classification.
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.True(t, leveegrpc.IsFailure(err))
		assert.False(t, leveegrpc.IsRetryable(err))
	}
	// Whether each request reached the server before its deadline depends on the machine's
	// load; the limiter saw all five.
	m := tl.Metrics()
	assert.Equal(t, int64(5), m.NumberOfTimedOutCalls+m.NumberOfFailedCalls, "%+v", m)
	assert.Equal(t, int64(0), m.NumberOfSuccessfulCalls)
}
