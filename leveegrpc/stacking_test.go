package leveegrpc_test

import (
	"context"
	"sync"
	"testing"

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

// Two levee gRPC services on loopback, each retrying UNAVAILABLE 3 times: the client calls
// the front service, whose handler calls the back service, always UNAVAILABLE. Every attempt
// of a retrying pipeline sends x-envoy-attempt-count (and each retry
// grpc-previous-rpc-attempts), and the server interceptors put the attempt in the handler's
// context: without NoRetryOfRetries the back service receives 3 × 3 = 9 attempts, with it 3,
// retried by the client only. A client that does not retry sends nothing, and the front
// service retries for it: 3.
func TestRetriesDoNotStackAcrossServices(t *testing.T) {
	for _, tc := range []struct {
		name        string
		noStack     bool
		edgeRetries bool
		front       []int // the attempt numbers the client's calls carried (0: none)
		back        []int // the attempt numbers the front service's calls carried
	}{
		{"stacking", false, true, []int{1, 2, 3}, []int{1, 2, 3, 1, 2, 3, 1, 2, 3}},
		{"NoRetryOfRetries", true, true, []int{1, 2, 3}, []int{1, 1, 1}},
		{"NoRetryOfRetries, a caller that does not retry", true, false, []int{0}, []int{1, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := levee.Must(leveegrpc.NewServer(leveegrpc.ServerConfig{}))
			var mu sync.Mutex
			var seen, frontSeen []int
			back := &service{unary: func(ctx context.Context, _ int) error {
				mu.Lock()
				seen = append(seen, retry.IncomingAttempt(ctx))
				mu.Unlock()
				return status.Error(codes.Unavailable, "down")
			}}
			backClient := serve(t, back, []grpc.ServerOption{grpc.UnaryInterceptor(srv.UnaryServerInterceptor())},
				grpc.WithUnaryInterceptor(leveegrpc.UnaryClientInterceptor(levee.Compose[struct{}]().WithRetry(
					levee.Must(retry.New("back", leveegrpc.RetryConfig(retry.Config{
						MaxAttempts: 3, WaitDuration: retry.NoWait, NoRetryOfRetries: tc.noStack,
					})))))))
			front := &service{unary: func(ctx context.Context, _ int) error {
				mu.Lock()
				frontSeen = append(frontSeen, retry.IncomingAttempt(ctx))
				mu.Unlock()
				_, err := backClient.UnaryCall(ctx, &testpb.SimpleRequest{})
				return err
			}}
			edge := levee.Must(retry.New("front", leveegrpc.RetryConfig(retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})))
			edgePipeline := levee.Compose[struct{}]().WithRetry(edge)
			if !tc.edgeRetries {
				edgePipeline = levee.Compose[struct{}]().WithCircuitBreaker(levee.Must(circuitbreaker.New("front",
					leveegrpc.CircuitBreakerConfig(circuitbreaker.Config{}))))
			}
			client := serve(t, front, []grpc.ServerOption{grpc.UnaryInterceptor(srv.UnaryServerInterceptor())},
				grpc.WithUnaryInterceptor(leveegrpc.UnaryClientInterceptor(edgePipeline)))

			_, err := client.UnaryCall(ctxT(t), &testpb.SimpleRequest{})
			require.Equal(t, codes.Unavailable, status.Code(err))
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, tc.front, frontSeen, "the client's attempts")
			assert.Len(t, seen, len(tc.back), "the back service's attempts")
			assert.Equal(t, tc.back, seen)
		})
	}
}
