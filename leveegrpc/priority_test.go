package leveegrpc_test

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"

	"github.com/levee-go/levee/leveegrpc"
	"github.com/levee-go/levee/priority"
)

// priorityServer serves svc behind a Server of cfg, recording what each handler found in its
// context: the priority carried (priority.Carried, "" for none) and the priority.
func priorityServer(t *testing.T, cfg leveegrpc.ServerConfig, copts ...grpc.DialOption) (testpb.TestServiceClient, func() []string) {
	t.Helper()
	s, err := leveegrpc.NewServer(cfg)
	require.NoError(t, err)
	var mu sync.Mutex
	var got []string
	record := func(ctx context.Context) {
		carried, _ := priority.Carried(ctx)
		mu.Lock()
		got = append(got, carried+"|"+priority.FromContext(ctx).String())
		mu.Unlock()
	}
	svc := &service{
		unary:  func(ctx context.Context, _ int) error { record(ctx); return nil },
		before: func(ctx context.Context, _ int) error { record(ctx); return nil },
	}
	client := serve(t, svc, []grpc.ServerOption{
		grpc.UnaryInterceptor(s.UnaryServerInterceptor()), grpc.StreamInterceptor(s.StreamServerInterceptor()),
	}, copts...)
	return client, func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := got
		got = nil
		return out
	}
}

func callBoth(t *testing.T, client testpb.TestServiceClient, ctx context.Context) {
	t.Helper()
	_, err := client.UnaryCall(ctx, &testpb.SimpleRequest{})
	require.NoError(t, err, "served, not refused")
	stream, err := client.StreamingOutputCall(ctx, three)
	require.NoError(t, err)
	for {
		if _, err := stream.Recv(); err != nil {
			require.Equal(t, io.EOF, err)
			break
		}
	}
}

// The server interceptors put the priority of the call's metadata in its context; values
// that are not valid leave the call Normal's, served all the same.
func TestServerReadsThePriorityMetadata(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  leveegrpc.ServerConfig
		md   []string // key, value pairs
		want string   // carried|priority
	}{
		{"a name", leveegrpc.ServerConfig{}, []string{"levee-priority", "critical"}, "critical|critical"},
		{"case and spaces", leveegrpc.ServerConfig{}, []string{"Levee-Priority", " LOW "}, "low|low"},
		{"a level", leveegrpc.ServerConfig{}, []string{"levee-priority", "high/37"}, "high/37|high"},
		{"none", leveegrpc.ServerConfig{}, nil, "|normal"},
		{"an unknown name", leveegrpc.ServerConfig{}, []string{"levee-priority", "urgent"}, "|normal"},
		{"an offset out of range", leveegrpc.ServerConfig{}, []string{"levee-priority", "high/-1"}, "|normal"},
		{"two values", leveegrpc.ServerConfig{}, []string{"levee-priority", "critical", "levee-priority", "low"}, "|normal"},
		{"another key", leveegrpc.ServerConfig{PriorityMetadataKey: "x-priority"}, []string{"x-priority", "sheddable"}, "sheddable|sheddable"},
		{"another key, in upper case", leveegrpc.ServerConfig{PriorityMetadataKey: "X-Priority"}, []string{"x-priority", "sheddable"}, "sheddable|sheddable"},
		{"another key, the default one ignored", leveegrpc.ServerConfig{PriorityMetadataKey: "x-priority"}, []string{"levee-priority", "critical"}, "|normal"},
		{"IgnorePriority", leveegrpc.ServerConfig{IgnorePriority: true}, []string{"levee-priority", "critical"}, "|normal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, got := priorityServer(t, tc.cfg)
			ctx := ctxT(t)
			if tc.md != nil {
				ctx = metadata.AppendToOutgoingContext(ctx, tc.md...)
			}
			callBoth(t, client, ctx)
			assert.Equal(t, []string{tc.want, tc.want}, got(), "unary, then stream")
		})
	}
}

// The client interceptors send the priority of the call's context: the pipeline's under
// DefaultPriorityMetadataKey, the priority interceptors under the key they are given, instead.
func TestClientInterceptorsSendThePriority(t *testing.T) {
	prioUnary, err := leveegrpc.PriorityUnaryClientInterceptor("x-priority")
	require.NoError(t, err)
	prioStream, err := leveegrpc.PriorityStreamClientInterceptor("x-priority")
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		cfg   leveegrpc.ServerConfig
		copts []grpc.DialOption
		ctx   func(context.Context) context.Context
		want  string
	}{
		{"the pipeline's, a priority", leveegrpc.ServerConfig{}, []grpc.DialOption{
			grpc.WithUnaryInterceptor(leveegrpc.UnaryClientInterceptor(nil)), grpc.WithStreamInterceptor(leveegrpc.StreamClientInterceptor(nil, nil)),
		}, func(ctx context.Context) context.Context { return priority.WithPriority(ctx, priority.Critical) }, "critical|critical"},
		{"the pipeline's, a level", leveegrpc.ServerConfig{}, []grpc.DialOption{
			grpc.WithUnaryInterceptor(leveegrpc.UnaryClientInterceptor(nil)), grpc.WithStreamInterceptor(leveegrpc.StreamClientInterceptor(nil, nil)),
		}, func(ctx context.Context) context.Context { return priority.WithLevel(ctx, 412) }, "critical/12|critical"},
		{"the pipeline's, the caller's value", leveegrpc.ServerConfig{}, []grpc.DialOption{
			grpc.WithUnaryInterceptor(leveegrpc.UnaryClientInterceptor(nil)), grpc.WithStreamInterceptor(leveegrpc.StreamClientInterceptor(nil, nil)),
		}, func(ctx context.Context) context.Context {
			return metadata.AppendToOutgoingContext(priority.WithPriority(ctx, priority.Critical), "levee-priority", "low")
		}, "low|low"},
		{"the pipeline's, none", leveegrpc.ServerConfig{}, []grpc.DialOption{
			grpc.WithUnaryInterceptor(leveegrpc.UnaryClientInterceptor(nil)), grpc.WithStreamInterceptor(leveegrpc.StreamClientInterceptor(nil, nil)),
		}, func(ctx context.Context) context.Context { return ctx }, "|normal"},
		{"another key", leveegrpc.ServerConfig{PriorityMetadataKey: "x-priority"}, []grpc.DialOption{
			grpc.WithChainUnaryInterceptor(prioUnary, leveegrpc.UnaryClientInterceptor(nil)),
			grpc.WithChainStreamInterceptor(prioStream, leveegrpc.StreamClientInterceptor(nil, nil)),
		}, func(ctx context.Context) context.Context { return priority.WithPriority(ctx, priority.High) }, "high|high"},
		{"another key: the default one is not sent", leveegrpc.ServerConfig{}, []grpc.DialOption{
			grpc.WithChainUnaryInterceptor(prioUnary, leveegrpc.UnaryClientInterceptor(nil)),
			grpc.WithChainStreamInterceptor(prioStream, leveegrpc.StreamClientInterceptor(nil, nil)),
		}, func(ctx context.Context) context.Context { return priority.WithPriority(ctx, priority.High) }, "|normal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, got := priorityServer(t, tc.cfg, tc.copts...)
			callBoth(t, client, tc.ctx(ctxT(t)))
			assert.Equal(t, []string{tc.want, tc.want}, got(), "unary, then stream")
		})
	}
}

func TestPriorityMetadataKeyMustBeValid(t *testing.T) {
	for _, key := range []string{"grpc-priority", "priority-bin", "a b", "prio:rity"} {
		want := `leveegrpc: PriorityMetadataKey must be a metadata key of letters, digits, '-', '_' and '.', not starting with "grpc-" nor ending with "-bin", got "` + key + `"`
		_, err := leveegrpc.NewServer(leveegrpc.ServerConfig{PriorityMetadataKey: key})
		assert.EqualError(t, err, want)
		_, err = leveegrpc.PriorityUnaryClientInterceptor(key)
		assert.EqualError(t, err, strings.Replace(want, "PriorityMetadataKey", "PriorityUnaryClientInterceptor's key", 1))
		_, err = leveegrpc.PriorityStreamClientInterceptor(key)
		assert.EqualError(t, err, strings.Replace(want, "PriorityMetadataKey", "PriorityStreamClientInterceptor's key", 1))
	}
}
