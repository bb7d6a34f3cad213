package leveegrpc

import (
	"context"
	"fmt"
	"strings"

	"github.com/levee-go/levee/priority"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// DefaultPriorityMetadataKey is the metadata key carrying a call's priority when
// ServerConfig.PriorityMetadataKey is empty, and the key UnaryClientInterceptor and
// StreamClientInterceptor send it in: priority.DefaultHeaderName in lower case, as gRPC
// metadata keys are, so that an HTTP service behind leveehttp and a gRPC one read the same
// field.
const DefaultPriorityMetadataKey = "levee-priority"

// validMetadataKey reports whether key, in lower case, may name an ASCII metadata entry of one's own: the
// characters gRPC allows in a key (lower case letters, digits, '-', '_', '.'), not reserved
// by gRPC ("grpc-") and not binary ("-bin").
func validMetadataKey(key string) bool {
	if key == "" || len(key) >= 5 && key[:5] == "grpc-" || len(key) >= 4 && key[len(key)-4:] == "-bin" {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func priorityKeyError(field, key string) error {
	return fmt.Errorf("leveegrpc: %s must be a metadata key of letters, digits, '-', '_' and '.', "+
		"not starting with \"grpc-\" nor ending with \"-bin\", got %q", field, key)
}

// withIncomingPriority returns ctx carrying the priority of its incoming metadata's key
// (priority.ParseHeader) when it has exactly one value and the value is valid, and ctx itself
// otherwise.
func withIncomingPriority(ctx context.Context, key string) context.Context {
	if key == "" {
		return ctx
	}
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return ctx
	}
	vs := md[key]
	if len(vs) != 1 {
		return ctx
	}
	if pctx, err := priority.ParseHeader(ctx, vs[0]); err == nil {
		return pctx
	}
	return ctx
}

// prioritySent marks a context whose priority a PriorityUnaryClientInterceptor or
// PriorityStreamClientInterceptor has handled, so that the pipeline's interceptors do not
// send it again under DefaultPriorityMetadataKey.
type prioritySent struct{}

// withOutgoingPriority returns ctx with the priority it carries (priority.Carried) appended
// to its outgoing metadata under key, unless that metadata already has key (the caller's
// value stays), ctx carries no priority, or a priority interceptor has handled it.
func withOutgoingPriority(ctx context.Context, key string) context.Context {
	if ctx.Value(prioritySent{}) != nil {
		return ctx
	}
	v, ok := priority.Carried(ctx)
	if !ok {
		return ctx
	}
	if md, ok := metadata.FromOutgoingContext(ctx); ok && len(md[key]) > 0 {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, key, v)
}

// PriorityUnaryClientInterceptor returns a client interceptor that sends the priority of
// each call's context (priority.WithPriority, priority.WithLevel) in its outgoing metadata
// under key, as priority.Carried writes it ("critical"; "high/37" for an exact level), so
// that a server whose ServerConfig.PriorityMetadataKey is key admits or sheds the call at
// that priority. A call whose outgoing metadata already has key keeps the caller's value;
// a context without a priority sends nothing.
//
// UnaryClientInterceptor sends the priority under DefaultPriorityMetadataKey by itself; this
// interceptor is for another key, or for a connection without a pipeline. Chain it before
// (outside) UnaryClientInterceptor, which then sends nothing more:
//
//	grpc.WithChainUnaryInterceptor(prio, leveegrpc.UnaryClientInterceptor(p))
//
// key "" is DefaultPriorityMetadataKey; key is case-insensitive, as gRPC metadata keys are
// (it is sent in lower case). A key gRPC does not allow for ASCII metadata is
// refused with an error naming it.
func PriorityUnaryClientInterceptor(key string) (grpc.UnaryClientInterceptor, error) {
	key = strings.ToLower(key)
	if key == "" {
		key = DefaultPriorityMetadataKey
	}
	if !validMetadataKey(key) {
		return nil, priorityKeyError("PriorityUnaryClientInterceptor's key", key)
	}
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		ctx = context.WithValue(withOutgoingPriority(ctx, key), prioritySent{}, true)
		return invoker(ctx, method, req, reply, cc, opts...)
	}, nil
}

// PriorityStreamClientInterceptor is PriorityUnaryClientInterceptor for streams: it sends
// the priority of each stream's context under key; chain it before StreamClientInterceptor.
func PriorityStreamClientInterceptor(key string) (grpc.StreamClientInterceptor, error) {
	key = strings.ToLower(key)
	if key == "" {
		key = DefaultPriorityMetadataKey
	}
	if !validMetadataKey(key) {
		return nil, priorityKeyError("PriorityStreamClientInterceptor's key", key)
	}
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		ctx = context.WithValue(withOutgoingPriority(ctx, key), prioritySent{}, true)
		return streamer(ctx, desc, cc, method, opts...)
	}, nil
}
