package leveegrpc_test

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveegrpc"
	"github.com/levee-go/levee/retry"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// overloaded answers its first call with RESOURCE_EXHAUSTED and a pushback of 20ms, and the
// others with a greeting.
type overloaded struct {
	testpb.UnimplementedTestServiceServer
	calls atomic.Int64
}

func (s *overloaded) UnaryCall(ctx context.Context, req *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	if s.calls.Add(1) == 1 {
		_ = grpc.SetTrailer(ctx, metadata.Pairs(leveegrpc.PushbackKey, "20"))
		return nil, status.Error(codes.ResourceExhausted, "busy")
	}
	return &testpb.SimpleResponse{Username: "hello"}, nil
}

// A gRPC client guarded by a retry and a circuit breaker: the server's RESOURCE_EXHAUSTED is
// retried after the 20ms it asks for, and a NOT_FOUND would be neither retried nor recorded.
func Example() {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := grpc.NewServer()
	svc := &overloaded{}
	testpb.RegisterTestServiceServer(srv, svc)
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	r := levee.Must(retry.New("greeter", leveegrpc.RetryConfig(retry.Config{MaxAttempts: 3})))
	cb := levee.Must(circuitbreaker.New("greeter", leveegrpc.CircuitBreakerConfig(circuitbreaker.Config{})))
	r.Subscribe(func(e retry.Event) {
		if e.Type == retry.EventRetry {
			fmt.Printf("retry after %v: %v\n", e.WaitInterval, status.Code(e.LastErr))
		}
	})
	p := levee.DefaultPipeline[struct{}](levee.Patterns{Retry: r, CircuitBreaker: cb}, nil)

	conn, err := grpc.NewClient(lis.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(leveegrpc.UnaryClientInterceptor(p)))
	if err != nil {
		panic(err)
	}
	defer conn.Close()

	resp, err := testpb.NewTestServiceClient(conn).UnaryCall(context.Background(), &testpb.SimpleRequest{})
	fmt.Println(resp.GetUsername(), err)
	fmt.Println("calls served:", svc.calls.Load())
	fmt.Println("breaker:", cb.State(), "failed", cb.Metrics().NumberOfFailedCalls)
	// Output:
	// retry after 20ms: ResourceExhausted
	// hello <nil>
	// calls served: 2
	// breaker: CLOSED failed 1
}
