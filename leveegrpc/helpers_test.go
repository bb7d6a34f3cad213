package leveegrpc_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// service is the test server: each call to a method counts, records its instant and asks
// the method's script what to do, given the call's number (1 for the first).
type service struct {
	testpb.UnimplementedTestServiceServer

	calls atomic.Int64
	mu    sync.Mutex
	times []time.Time

	unary  func(ctx context.Context, n int) error
	stream func(stream grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse], n int) error
	// before, when set, runs before a streaming call sends any response; an error ends the
	// call with it.
	before func(ctx context.Context, n int) error
	// received holds, per call of StreamingInputCall, the bodies it received.
	received [][]string
}

func (s *service) count() int {
	n := int(s.calls.Add(1))
	s.mu.Lock()
	s.times = append(s.times, time.Now())
	s.mu.Unlock()
	return n
}

// instants returns the instants of the calls so far.
func (s *service) instants() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.times...)
}

// UnaryCall answers with a payload holding the call's number, or the script's error.
func (s *service) UnaryCall(ctx context.Context, req *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	n := s.count()
	if s.unary != nil {
		if err := s.unary(ctx, n); err != nil {
			return nil, err
		}
	}
	return &testpb.SimpleResponse{Payload: &testpb.Payload{Body: []byte{byte(n)}}, Username: "served"}, nil
}

// StreamingOutputCall sends one response per ResponseParameters entry, then the script's
// error.
func (s *service) StreamingOutputCall(req *testpb.StreamingOutputCallRequest, stream grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
	n := s.count()
	if s.before != nil {
		if err := s.before(stream.Context(), n); err != nil {
			return err
		}
	}
	for i := range req.GetResponseParameters() {
		if err := stream.Send(&testpb.StreamingOutputCallResponse{Payload: &testpb.Payload{Body: []byte{byte(i)}}}); err != nil {
			return err
		}
	}
	if s.stream != nil {
		return s.stream(stream, n)
	}
	return nil
}

// StreamingInputCall sums the sizes of the payloads received, once the client has closed its
// side; before, when set, may answer an error instead.
func (s *service) StreamingInputCall(stream grpc.ClientStreamingServer[testpb.StreamingInputCallRequest, testpb.StreamingInputCallResponse]) error {
	n := s.count()
	var size int32
	var bodies []string
	for {
		req, err := stream.Recv()
		if err != nil {
			s.mu.Lock()
			s.received = append(s.received, bodies)
			s.mu.Unlock()
			if s.before != nil {
				if err := s.before(stream.Context(), n); err != nil {
					return err
				}
			}
			return stream.SendAndClose(&testpb.StreamingInputCallResponse{AggregatedPayloadSize: size})
		}
		size += int32(len(req.GetPayload().GetBody()))
		bodies = append(bodies, string(req.GetPayload().GetBody()))
	}
}

// serve starts svc on a loopback listener with opts and returns a client connected to it
// with copts; both are stopped at the end of the test.
func serve(t *testing.T, svc *service, opts []grpc.ServerOption, copts ...grpc.DialOption) testpb.TestServiceClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer(opts...)
	testpb.RegisterTestServiceServer(srv, svc)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	conn := dial(t, lis.Addr().String(), copts...)
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return testpb.NewTestServiceClient(conn)
}

// dial returns a client connection to addr, closed at the end of the test.
func dial(t *testing.T, addr string, copts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, copts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, conn.Close()) })
	return conn
}

// ctxT returns a context that ends with the test, bounded so that a hang fails instead of
// blocking the run.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}
