package leveegrpc_test

import (
	"context"
	"strings"
	"testing"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
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

// unavailableFirst returns a script that answers UNAVAILABLE, before any response, to the
// first n calls, and records the grpc-previous-rpc-attempts each call carried.
func unavailableFirst(n int, previous *[]string) func(context.Context, int) error {
	return func(ctx context.Context, call int) error {
		md, _ := metadata.FromIncomingContext(ctx)
		*previous = append(*previous, strings.Join(md.Get(leveegrpc.PreviousAttemptsKey), ","))
		if call <= n {
			return status.Error(codes.Unavailable, "draining")
		}
		return nil
	}
}

func TestServerStreamAnsweredBeforeAnyResponseIsRetried(t *testing.T) {
	s := newStreamed(t, circuitbreaker.Config{})
	var previous, counts []string
	script := unavailableFirst(2, &previous)
	svc := &service{before: func(ctx context.Context, call int) error {
		md, _ := metadata.FromIncomingContext(ctx)
		counts = append(counts, strings.Join(md.Get(leveegrpc.AttemptCountKey), ","))
		return script(ctx, call)
	}}
	client := serve(t, svc, nil, s.option())

	stream, err := client.StreamingOutputCall(ctxT(t), three)
	require.NoError(t, err)
	bodies, err := recvAll(stream)
	assert.Equal(t, []byte{0, 1, 2}, bodies, "the caller sees the stream that committed, once")
	assert.Equal(t, []string{"1", "2", "3"}, counts, "every attempt of a retrying pipeline carries its number")
	assert.Equal(t, "EOF", err.Error())
	assert.Equal(t, int64(3), svc.calls.Load())
	assert.Equal(t, []string{"", "1", "2"}, previous)
	retries, breaker := s.events()
	assert.Equal(t, []retry.EventType{retry.EventRetry, retry.EventRetry, retry.EventSuccess}, retries)
	assert.Equal(t, []circuitbreaker.EventType{circuitbreaker.EventError, circuitbreaker.EventError, circuitbreaker.EventSuccess}, breaker)
	assert.Nil(t, stream.Trailer().Get(leveegrpc.PreviousAttemptsKey))
}

func TestServerStreamRetriesExhaustedComeBackFromRecv(t *testing.T) {
	s := newStreamed(t, circuitbreaker.Config{})
	var previous []string
	svc := &service{before: unavailableFirst(5, &previous)}
	client := serve(t, svc, nil, s.option())

	stream, err := client.StreamingOutputCall(ctxT(t), three)
	require.NoError(t, err, "the first attempt was established")
	header, err := stream.Header()
	assert.NoError(t, err)
	assert.Nil(t, header, "no attempt committed: no header, the status is Recv's")
	bodies, err := recvAll(stream)
	assert.Nil(t, bodies)
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
	assert.Equal(t, int64(3), svc.calls.Load(), "MaxAttempts 3")
	retries, breaker := s.events()
	assert.Equal(t, []retry.EventType{retry.EventRetry, retry.EventRetry, retry.EventError}, retries)
	assert.Equal(t, []circuitbreaker.EventType{circuitbreaker.EventError, circuitbreaker.EventError, circuitbreaker.EventError}, breaker)
}

func TestServerStreamCommittedByItsHeaderIsNotRetried(t *testing.T) {
	s := newStreamed(t, circuitbreaker.Config{})
	svc := &service{}
	svc.before = func(ctx context.Context, _ int) error {
		require.NoError(t, grpc.SetHeader(ctx, metadata.Pairs("x-served", "yes")))
		require.NoError(t, grpc.SendHeader(ctx, nil))
		return status.Error(codes.Unavailable, "gone after the header")
	}
	client := serve(t, svc, nil, s.option())

	stream, err := client.StreamingOutputCall(ctxT(t), three)
	require.NoError(t, err)
	header, err := stream.Header()
	require.NoError(t, err)
	assert.Equal(t, []string{"yes"}, header.Get("x-served"))
	bodies, err := recvAll(stream)
	assert.Nil(t, bodies)
	assert.Equal(t, status.Error(codes.Unavailable, "gone after the header").Error(), err.Error())
	assert.Equal(t, int64(1), svc.calls.Load(), "the header committed the stream")
	retries, breaker := s.events()
	assert.Equal(t, []retry.EventType(nil), retries)
	assert.Equal(t, []circuitbreaker.EventType{circuitbreaker.EventError}, breaker)
}

func TestClientStreamIsReplayedUntilItCommits(t *testing.T) {
	s := newStreamed(t, circuitbreaker.Config{})
	var previous []string
	svc := &service{before: unavailableFirst(2, &previous)}
	client := serve(t, svc, nil, s.option())

	stream, err := client.StreamingInputCall(ctxT(t))
	require.NoError(t, err)
	for _, body := range []string{"ab", "cde"} {
		require.NoError(t, stream.Send(&testpb.StreamingInputCallRequest{Payload: &testpb.Payload{Body: []byte(body)}}))
	}
	resp, err := stream.CloseAndRecv()
	require.NoError(t, err)
	assert.Equal(t, int32(5), resp.GetAggregatedPayloadSize())
	assert.Equal(t, int64(3), svc.calls.Load())
	svc.mu.Lock()
	assert.Equal(t, [][]string{{"ab", "cde"}, {"ab", "cde"}, {"ab", "cde"}}, svc.received, "every attempt received every message, in order")
	svc.mu.Unlock()
	assert.Equal(t, []string{"", "1", "2"}, previous)
	retries, breaker := s.events()
	assert.Equal(t, []retry.EventType{retry.EventRetry, retry.EventRetry, retry.EventSuccess}, retries)
	assert.Equal(t, []circuitbreaker.EventType{circuitbreaker.EventError, circuitbreaker.EventError, circuitbreaker.EventSuccess}, breaker)
}

func TestClientStreamPastTheRetryBufferCommits(t *testing.T) {
	for _, c := range []struct {
		name   string
		limit  int
		calls  int64
		code   codes.Code
		events []retry.EventType
	}{
		// "ab" is a 6-byte message; "cde" 7: 13 bytes in all.
		{"within", 13, 2, codes.OK, []retry.EventType{retry.EventRetry, retry.EventSuccess}},
		{"past", 12, 1, codes.Unavailable, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStreamed(t, circuitbreaker.Config{})
			var previous []string
			svc := &service{before: unavailableFirst(1, &previous)}
			client := serve(t, svc, nil, s.option())

			stream, err := client.StreamingInputCall(ctxT(t), grpc.MaxRetryRPCBufferSize(c.limit))
			require.NoError(t, err)
			for _, body := range []string{"ab", "cde"} {
				require.NoError(t, stream.Send(&testpb.StreamingInputCallRequest{Payload: &testpb.Payload{Body: []byte(body)}}))
			}
			_, err = stream.CloseAndRecv()
			assert.Equal(t, c.code, status.Code(err))
			assert.Equal(t, c.calls, svc.calls.Load())
			retries, _ := s.events()
			assert.Equal(t, c.events, retries)
		})
	}
}

func TestStreamWithoutPipelineIsEstablishedOnce(t *testing.T) {
	var previous []string
	svc := &service{before: unavailableFirst(1, &previous)}
	client := serve(t, svc, nil, grpc.WithStreamInterceptor(leveegrpc.StreamClientInterceptor(nil, nil)))
	stream, err := client.StreamingOutputCall(ctxT(t), three)
	require.NoError(t, err)
	_, err = recvAll(stream)
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.Equal(t, int64(1), svc.calls.Load())
}

func TestStreamFallbackWithoutAStreamIsInternal(t *testing.T) {
	fb := levee.Must(fallback.New("svc", fallback.OnAny(func(context.Context, error) (grpc.ClientStream, error) { return nil, nil })))
	p := levee.Compose[grpc.ClientStream]().WithFallback(fb)
	var previous []string
	svc := &service{before: unavailableFirst(1, &previous)}
	client := serve(t, svc, nil, grpc.WithStreamInterceptor(leveegrpc.StreamClientInterceptor(p, nil)))
	stream, err := client.StreamingOutputCall(ctxT(t), three)
	require.NoError(t, err)
	_, err = recvAll(stream)
	assert.Equal(t, codes.Internal, status.Code(err))
	assert.Equal(t, "rpc error: code = Internal desc = leveegrpc: pipeline returned a nil stream and no error", err.Error())
}
