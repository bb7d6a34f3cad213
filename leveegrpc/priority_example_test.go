package leveegrpc_test

import (
	"context"
	"fmt"
	"net"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/leveegrpc"
	"github.com/levee-go/levee/priority"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// prioritySaying answers with the priority its handler's context carries.
type prioritySaying struct {
	testpb.UnimplementedTestServiceServer
}

func (prioritySaying) UnaryCall(ctx context.Context, _ *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	level, ok := priority.Carried(ctx)
	if !ok {
		level = "none"
	}
	return &testpb.SimpleResponse{Username: priority.FromContext(ctx).String() + " (level " + level + ")"}, nil
}

// A call's priority travels from the client's context to the handler's: the priority
// interceptor sends it in the metadata key both sides name, the Server's interceptor puts it
// back in the context, where a prioritizer (adaptive.Prioritizer.Limiter as
// ServerConfig.ConcurrencyLimiter) sheds by it.
func ExampleServerConfig_priorityMetadataKey() {
	s := levee.Must(leveegrpc.NewServer(leveegrpc.ServerConfig{PriorityMetadataKey: "x-priority"}))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := grpc.NewServer(grpc.UnaryInterceptor(s.UnaryServerInterceptor()))
	testpb.RegisterTestServiceServer(srv, prioritySaying{})
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	prio := levee.Must(leveegrpc.PriorityUnaryClientInterceptor("x-priority"))
	conn, err := grpc.NewClient(lis.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(prio, leveegrpc.UnaryClientInterceptor(nil)))
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	client := testpb.NewTestServiceClient(conn)

	for _, ctx := range []context.Context{
		priority.WithLevel(context.Background(), 437),
		priority.WithPriority(context.Background(), priority.Sheddable),
		context.Background(), // no priority: Normal
	} {
		resp, err := client.UnaryCall(ctx, &testpb.SimpleRequest{})
		fmt.Println(resp.GetUsername(), err)
	}
	// Output:
	// critical (level critical/37) <nil>
	// sheddable (level sheddable) <nil>
	// normal (level none) <nil>
}
