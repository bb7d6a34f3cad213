package leveegrpc_test

import (
	"context"
	"sync"
	"testing"

	"github.com/levee-go/levee"
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
// the front service, whose handler calls the back service, always UNAVAILABLE. Retries send
// grpc-previous-rpc-attempts and the server interceptors put the attempt in the handler's
// context: without NoRetryOfRetries the back service receives 3 × 3 = 9 attempts, with it
// 3 + 1 + 1.
func TestRetriesDoNotStackAcrossServices(t *testing.T) {
	for _, tc := range []struct {
		name     string
		noStack  bool
		incoming []int // the attempt numbers the front service's calls carried (0: a first attempt)
	}{
		{"stacking", false, []int{0, 2, 3, 0, 2, 3, 0, 2, 3}},
		{"NoRetryOfRetries", true, []int{0, 2, 3, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := levee.Must(leveegrpc.NewServer(leveegrpc.ServerConfig{}))
			var mu sync.Mutex
			var seen []int
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
				_, err := backClient.UnaryCall(ctx, &testpb.SimpleRequest{})
				return err
			}}
			edge := levee.Must(retry.New("front", leveegrpc.RetryConfig(retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})))
			client := serve(t, front, []grpc.ServerOption{grpc.UnaryInterceptor(srv.UnaryServerInterceptor())},
				grpc.WithUnaryInterceptor(leveegrpc.UnaryClientInterceptor(levee.Compose[struct{}]().WithRetry(edge))))

			_, err := client.UnaryCall(ctxT(t), &testpb.SimpleRequest{})
			require.Equal(t, codes.Unavailable, status.Code(err))
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, tc.incoming, seen)
			assert.Equal(t, int64(3), edge.Metrics().NumberOfTotalCalls, "the client made 3 attempts")
		})
	}
}
