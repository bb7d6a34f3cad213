package leveegrpc_test

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveegrpc"
	"github.com/levee-go/levee/retry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// streamed holds a client whose streams go through StreamClientInterceptor with a retry of
// their establishment and a breaker recording their final status.
type streamed struct {
	client testpb.TestServiceClient
	retry  *retry.Retry
	cb     *circuitbreaker.CircuitBreaker

	mu      sync.Mutex
	retries []retry.EventType
	breaker []circuitbreaker.EventType
}

func newStreamed(t *testing.T, cc circuitbreaker.Config) *streamed {
	s := &streamed{
		retry: levee.Must(retry.New("svc", leveegrpc.RetryConfig(retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait}))),
		cb:    levee.Must(circuitbreaker.New("svc", leveegrpc.CircuitBreakerConfig(cc))),
	}
	unsubscribeRetry := s.retry.Subscribe(func(e retry.Event) {
		s.mu.Lock()
		s.retries = append(s.retries, e.Type)
		s.mu.Unlock()
	})
	unsubscribeBreaker := s.cb.Subscribe(func(e circuitbreaker.Event) {
		if e.Type == circuitbreaker.EventStateTransition || e.Type == circuitbreaker.EventFailureRateExceeded {
			return
		}
		s.mu.Lock()
		s.breaker = append(s.breaker, e.Type)
		s.mu.Unlock()
	})
	t.Cleanup(func() { unsubscribeRetry(); unsubscribeBreaker() })
	return s
}

func (s *streamed) option() grpc.DialOption {
	p := levee.Compose[grpc.ClientStream]().WithRetry(s.retry)
	return grpc.WithStreamInterceptor(leveegrpc.StreamClientInterceptor(p, s.cb))
}

func (s *streamed) events() ([]retry.EventType, []circuitbreaker.EventType) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]retry.EventType(nil), s.retries...), append([]circuitbreaker.EventType(nil), s.breaker...)
}

// three asks the test service for three responses.
var three = &testpb.StreamingOutputCallRequest{ResponseParameters: make([]*testpb.ResponseParameters, 3)}

// recvAll receives until the stream ends and returns the bodies and the final error.
func recvAll(stream grpc.ServerStreamingClient[testpb.StreamingOutputCallResponse]) ([]byte, error) {
	var bodies []byte
	for {
		resp, err := stream.Recv()
		if err != nil {
			return bodies, err
		}
		bodies = append(bodies, resp.GetPayload().GetBody()...)
	}
}

func TestStreamFinalStatusIsRecorded(t *testing.T) {
	for _, c := range []struct {
		name    string
		final   error
		want    error
		breaker []circuitbreaker.EventType
		failed  int
		success int
	}{
		{"ok", nil, io.EOF, []circuitbreaker.EventType{circuitbreaker.EventSuccess}, 0, 1},
		{"unavailable", status.Error(codes.Unavailable, "gone"), status.Error(codes.Unavailable, "gone"), []circuitbreaker.EventType{circuitbreaker.EventError}, 1, 0},
		{"invalid argument", status.Error(codes.InvalidArgument, "bad"), status.Error(codes.InvalidArgument, "bad"), []circuitbreaker.EventType{circuitbreaker.EventIgnoredError}, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStreamed(t, circuitbreaker.Config{})
			svc := &service{stream: func(grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse], int) error { return c.final }}
			client := serve(t, svc, nil, s.option())

			stream, err := client.StreamingOutputCall(ctxT(t), three)
			require.NoError(t, err)
			bodies, err := recvAll(stream)
			assert.Equal(t, []byte{0, 1, 2}, bodies)
			assert.Equal(t, c.want.Error(), err.Error())
			assert.Equal(t, int64(1), svc.calls.Load(), "a stream that has started is never retried")

			retries, breaker := s.events()
			assert.Equal(t, []retry.EventType(nil), retries)
			assert.Equal(t, c.breaker, breaker)
			m := s.cb.Metrics()
			assert.Equal(t, c.failed, m.NumberOfFailedCalls)
			assert.Equal(t, c.success, m.NumberOfSuccessfulCalls)
		})
	}
}

func TestStreamClientStreamingIsRecordedOnItsResponse(t *testing.T) {
	s := newStreamed(t, circuitbreaker.Config{})
	svc := &service{}
	client := serve(t, svc, nil, s.option())

	stream, err := client.StreamingInputCall(ctxT(t))
	require.NoError(t, err)
	for _, body := range []string{"ab", "cde"} {
		require.NoError(t, stream.Send(&testpb.StreamingInputCallRequest{Payload: &testpb.Payload{Body: []byte(body)}}))
	}
	resp, err := stream.CloseAndRecv()
	require.NoError(t, err)
	assert.Equal(t, int32(5), resp.GetAggregatedPayloadSize())
	_, breaker := s.events()
	assert.Equal(t, []circuitbreaker.EventType{circuitbreaker.EventSuccess}, breaker)
	assert.Equal(t, 1, s.cb.Metrics().NumberOfSuccessfulCalls)
}

func TestStreamOpenBreakerFailsFast(t *testing.T) {
	s := newStreamed(t, circuitbreaker.Config{SlidingWindowSize: 1, MinimumNumberOfCalls: 1, WaitDurationInOpenState: time.Hour})
	svc := &service{stream: func(grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse], int) error {
		return status.Error(codes.Internal, "broken")
	}}
	client := serve(t, svc, nil, s.option())
	ctx := ctxT(t)

	stream, err := client.StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{})
	require.NoError(t, err)
	_, err = recvAll(stream)
	assert.Equal(t, codes.Internal, status.Code(err))
	require.Equal(t, circuitbreaker.Open, s.cb.State())

	_, err = client.StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{})
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
	assert.Equal(t, int64(1), svc.calls.Load())
	retries, _ := s.events()
	// The first stream's INTERNAL came before any response: the retry saw it and did not
	// retry it (INTERNAL is not retryable); the second stream was refused by the breaker.
	assert.Equal(t, []retry.EventType{retry.EventIgnoredError, retry.EventIgnoredError}, retries, "a rejection is not retried")
}

func TestStreamEstablishmentIsRetried(t *testing.T) {
	// A port nobody listens on: every establishment fails with UNAVAILABLE.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := lis.Addr().String()
	require.NoError(t, lis.Close())

	s := newStreamed(t, circuitbreaker.Config{})
	client := testpb.NewTestServiceClient(dial(t, addr, s.option()))
	_, err = client.StreamingOutputCall(ctxT(t), three)
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
	retries, breaker := s.events()
	assert.Equal(t, []retry.EventType{retry.EventRetry, retry.EventRetry, retry.EventError}, retries)
	assert.Equal(t, []circuitbreaker.EventType{circuitbreaker.EventError, circuitbreaker.EventError, circuitbreaker.EventError}, breaker)
}

func TestStreamCallerCancellationGivesThePermitBack(t *testing.T) {
	for _, read := range []bool{true, false} {
		name := map[bool]string{true: "read to the end", false: "abandoned"}[read]
		t.Run(name, func(t *testing.T) {
			// A single probe in HALF_OPEN shows whether the permit came back.
			s := newStreamed(t, circuitbreaker.Config{PermittedNumberOfCallsInHalfOpenState: 1})
			require.NoError(t, s.cb.TransitionToOpenState())
			require.NoError(t, s.cb.TransitionToHalfOpenState())
			svc := &service{stream: func(stream grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse], _ int) error {
				<-stream.Context().Done()
				return stream.Context().Err()
			}}
			client := serve(t, svc, nil, s.option())
			ctx, cancel := context.WithCancel(ctxT(t))

			stream, err := client.StreamingOutputCall(ctx, three)
			require.NoError(t, err)
			_, err = stream.Recv()
			require.NoError(t, err)
			cancel()
			if read {
				_, err = recvAll(stream)
				assert.Equal(t, codes.Canceled, status.Code(err))
			}

			// The probe permit is back: the next stream is admitted.
			require.Eventually(t, func() bool {
				p, err := s.cb.Acquire()
				if err != nil {
					return false
				}
				p.Release()
				return true
			}, 5*time.Second, time.Millisecond)
			_, breaker := s.events()
			var outcomes []circuitbreaker.EventType // the refusals of the polling above left out
			for _, e := range breaker {
				if e != circuitbreaker.EventNotPermitted {
					outcomes = append(outcomes, e)
				}
			}
			assert.Equal(t, []circuitbreaker.EventType(nil), outcomes, "nothing recorded")
			assert.Equal(t, circuitbreaker.HalfOpen, s.cb.State())
		})
	}
}
