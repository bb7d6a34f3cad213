package leveegrpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// DefaultBulkheadPushback is the pushback a Server sends with a full bulkhead's
// RESOURCE_EXHAUSTED when ServerConfig.BulkheadPushback is zero.
const DefaultBulkheadPushback = 100 * time.Millisecond

// NoPushback is the BulkheadPushback that sends no pushback metadata with a full bulkhead's
// RESOURCE_EXHAUSTED. It exists because the zero value means DefaultBulkheadPushback.
const NoPushback time.Duration = -1

// ServerConfig names the patterns that guard a gRPC server's handlers. Any of them may be
// nil; they nest as levee.DefaultPipeline does,
// RateLimiter(Limiter(TimeLimiter(Bulkhead(ConcurrencyLimiter(handler))))): a call takes its
// rate-limiter permissions first, then runs under the time limit, holding a bulkhead permit
// and a concurrency limiter's while the handler runs.
type ServerConfig struct {
	// Bulkhead bounds the handlers running at once. A call it refuses ends with
	// RESOURCE_EXHAUSTED and, unless BulkheadPushback is NoPushback, PushbackKey in the
	// trailers.
	Bulkhead *bulkhead.Bulkhead

	// RateLimiter takes one permission per call. A call it refuses ends with
	// RESOURCE_EXHAUSTED and PushbackKey in the trailers: the limiter's real wait for its next
	// permission at the refusal (ratelimiter.Metrics.NanosToWait), rounded up to the
	// millisecond.
	RateLimiter *ratelimiter.RateLimiter

	// Limiter is a rate limiter of any kind (levee.PermissionLimiter: a limiter shared by a
	// fleet, leveeredis.RateLimiter, or one of your own), taking one permission per call
	// inside RateLimiter. A call it refuses with a rejection (levee.IsRejection) ends with
	// RESOURCE_EXHAUSTED and PushbackKey in the trailers: the limiter's own wait at the
	// refusal, rounded up to the millisecond — for a *ratelimiter.RateLimiter its
	// NanosToWait, for a levee.RetryAdvisor its RetryAfter; a limiter that is neither sends
	// no pushback. Another error (its store failing, say) ends the call as a handler's error
	// without a status does (UNKNOWN), without pushback.
	Limiter levee.PermissionLimiter

	// ConcurrencyLimiter is a limit on the handlers running at once of any kind
	// (levee.Admitter: adaptive.Limiter, adaptive.PartitionedLimiter, a Prioritizer's
	// limiter), holding one permit while the handler runs, inside Bulkhead. A call it refuses
	// ends with RESOURCE_EXHAUSTED and PushbackKey: the limiter's RetryAfter when it is a
	// levee.RetryAdvisor that says a positive wait, else BulkheadPushback (none for
	// NoPushback). The permit ends with the handler's outcome: OnSuccess, OnError with its
	// error (or its panic's *levee.PanicError), Release when the client cancelled.
	ConcurrencyLimiter levee.Admitter

	// TimeLimiter bounds each handler's run to its TimeoutDuration. The handler runs on the
	// RPC's own goroutine with a context whose deadline is the limit (the earlier of it and the
	// client's deadline), and is waited for: a gRPC stream cannot be used once its handler
	// has returned, so the handler is never left running, and a handler must honour its
	// context for the limit to hold (DisableCancelRunningFuture does not apply). A handler
	// that fails once the limit has passed ends with DEADLINE_EXCEEDED and a
	// *timelimiter.TimeoutError recorded as the limiter's TIMEOUT event; one that succeeds
	// all the same keeps its response.
	TimeLimiter *timelimiter.TimeLimiter

	// BulkheadPushback is the pushback sent with a full bulkhead's RESOURCE_EXHAUSTED: how
	// long clients should wait before retrying, sent to the millisecond (rounded up). 0 means
	// DefaultBulkheadPushback (100ms); NoPushback sends none; other negative values are
	// refused.
	BulkheadPushback time.Duration

	// PriorityMetadataKey is the metadata key carrying the caller's priority, as the priority
	// package writes it and the client interceptors send it (priority.Carried): a priority's
	// name ("critical", case-insensitive) or a priority and a level in its range ("high/37").
	// A call carrying exactly one valid value has it in its context before any limiter runs
	// (priority.ParseHeader), so that a ConcurrencyLimiter from an adaptive.Prioritizer
	// (Prioritizer.Limiter) sheds it at that priority and the handler reads it
	// (priority.FromContext). A call with no value, or a value that is not valid (several
	// values, an unknown name such as "urgent", an offset outside [0, 99]) is served, not
	// refused, with the context it came with: without a priority, it is Normal's, so that a
	// malformed value never raises a caller above Normal. The value is the caller's word:
	// behind a public edge, strip it there or set IgnorePriority. A key must be one gRPC
	// allows for ASCII metadata (letters, digits, '-', '_', '.'; case-insensitive, read
	// in lower case), not starting with "grpc-" nor ending with "-bin". ["": DefaultPriorityMetadataKey, "levee-priority"]
	PriorityMetadataKey string

	// IgnorePriority reads no PriorityMetadataKey: calls keep the priority their context
	// carries (none, unless an outer interceptor gave one). [false]
	IgnorePriority bool

	// Logger, when set, receives each handler panic (the method, the panic's value and stack)
	// at Error level. The client receives INTERNAL without them. Nil logs nothing.
	Logger *slog.Logger
}

// Server holds the interceptors that guard a gRPC server's handlers with the patterns of a
// ServerConfig. It is safe for concurrent use; build it once per server with NewServer.
type Server struct {
	cfg         ServerConfig
	priorityKey string // "" with IgnorePriority
	unary       *levee.Pipeline[any]
	stream      *levee.Pipeline[struct{}]
}

// NewServer validates cfg and returns the Server that guards handlers with its patterns. An
// invalid field is refused with an error naming it:
// "leveegrpc: BulkheadPushback must be >= 0 (or NoPushback for none), got -2ns".
func NewServer(cfg ServerConfig) (*Server, error) {
	switch {
	case cfg.BulkheadPushback == 0:
		cfg.BulkheadPushback = DefaultBulkheadPushback
	case cfg.BulkheadPushback < 0 && cfg.BulkheadPushback != NoPushback:
		return nil, fmt.Errorf("leveegrpc: BulkheadPushback must be >= 0 (or NoPushback for none), got %v", cfg.BulkheadPushback)
	}
	cfg.PriorityMetadataKey = strings.ToLower(cfg.PriorityMetadataKey)
	switch {
	case cfg.PriorityMetadataKey != "" && !validMetadataKey(cfg.PriorityMetadataKey):
		return nil, priorityKeyError("PriorityMetadataKey", cfg.PriorityMetadataKey)
	case cfg.PriorityMetadataKey == "":
		cfg.PriorityMetadataKey = DefaultPriorityMetadataKey
	}
	s := &Server{cfg: cfg}
	if cfg.IgnorePriority {
		s.priorityKey = ""
	} else {
		s.priorityKey = cfg.PriorityMetadataKey
	}
	if isNil(cfg.Limiter) {
		cfg.Limiter = nil // a nil pointer in the field is a limiter left unset
	}
	if isNil(cfg.ConcurrencyLimiter) {
		cfg.ConcurrencyLimiter = nil
	}
	s.cfg = cfg
	var limiter levee.PermissionLimiter
	if cfg.Limiter != nil {
		limiter = taggedLimiter{cfg.Limiter}
	}
	var concurrency levee.Admitter
	if cfg.ConcurrencyLimiter != nil {
		concurrency = taggedAdmitter{cfg.ConcurrencyLimiter}
	}
	s.unary = levee.Compose[any]().WithConcurrencyLimiter(concurrency).WithBulkhead(cfg.Bulkhead)
	s.stream = levee.Compose[struct{}]().WithConcurrencyLimiter(concurrency).WithBulkhead(cfg.Bulkhead)
	if cfg.TimeLimiter != nil {
		s.unary = s.unary.With(timeLimit[any](cfg.TimeLimiter))
		s.stream = s.stream.With(timeLimit[struct{}](cfg.TimeLimiter))
	}
	s.unary = s.unary.WithPermissionLimiter(limiter).WithRateLimiter(cfg.RateLimiter)
	s.stream = s.stream.WithPermissionLimiter(limiter).WithRateLimiter(cfg.RateLimiter)
	return s, nil
}

// UnaryServerInterceptor returns the interceptor that runs each unary handler through the
// Server's patterns. A refusal, a time limit or a panic ends the call with the status the
// ServerConfig's fields name (RESOURCE_EXHAUSTED with pushback, DEADLINE_EXCEEDED, INTERNAL);
// a panic releases the bulkhead permit like any other end. The handler's own errors that carry
// a status reach the client unchanged. One without a status is mapped: the client's
// cancellation is CANCELLED (DEADLINE_EXCEEDED for its deadline), and levee's errors from the
// dependencies the handler guards are mapped as the client interceptors map them (an open
// breaker UNAVAILABLE, a full bulkhead or refused rate limit RESOURCE_EXHAUSTED without
// pushback, a timeout DEADLINE_EXCEEDED); gRPC makes any other UNKNOWN.
//
// A call whose metadata carries its attempt number (AttemptCountKey, or PreviousAttemptsKey
// plus one) has it in the handler's context (retry.IncomingAttempt): its caller retries it, so
// that a retry with retry.Config.NoRetryOfRetries in the handler's own calls makes one attempt,
// and retries happen at the outermost layer only. A call whose metadata carries its priority
// (ServerConfig.PriorityMetadataKey) has it in its context before any pattern runs.
func (s *Server) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		ctx = withIncomingPriority(withIncomingAttempt(ctx), s.priorityKey)
		ran := false
		resp, err := s.unary.Execute(ctx, func(ctx context.Context) (any, error) {
			ran = true
			return handler(ctx, req)
		})
		if err != nil {
			return nil, s.serverError(ctx, info.FullMethod, err, ran, func(md metadata.MD) { _ = grpc.SetTrailer(ctx, md) })
		}
		return resp, nil
	}
}

// StreamServerInterceptor returns the interceptor that runs each streaming handler through the
// Server's patterns, as UnaryServerInterceptor: the stream holds its bulkhead permit and runs
// under the time limit until its handler returns, and the handler sees the limit as the
// deadline of its stream's Context.
func (s *Server) StreamServerInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ran := false
		if ctx := withIncomingPriority(withIncomingAttempt(ss.Context()), s.priorityKey); ctx != ss.Context() {
			ss = &limitedStream{ServerStream: ss, ctx: ctx}
		}
		_, err := s.stream.Execute(ss.Context(), func(ctx context.Context) (struct{}, error) {
			ran = true
			if ctx == ss.Context() {
				return struct{}{}, handler(srv, ss)
			}
			return struct{}{}, handler(srv, &limitedStream{ServerStream: ss, ctx: ctx})
		})
		if err != nil {
			return s.serverError(ss.Context(), info.FullMethod, err, ran, ss.SetTrailer)
		}
		return nil
	}
}

// withIncomingAttempt returns ctx carrying the caller's attempt number
// (retry.WithIncomingAttempt) when its incoming metadata has exactly one valid AttemptCountKey
// (a positive integer) or, failing that, exactly one valid PreviousAttemptsKey (a
// non-negative integer, the attempt being one more), and ctx itself otherwise.
func withIncomingAttempt(ctx context.Context) context.Context {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return ctx
	}
	if n, ok := mdInt(md, AttemptCountKey); ok && n > 0 {
		return retry.WithIncomingAttempt(ctx, n)
	}
	if n, ok := mdInt(md, PreviousAttemptsKey); ok && n < math.MaxInt {
		return retry.WithIncomingAttempt(ctx, n+1)
	}
	return ctx
}

// mdInt returns the value of key in md when it has exactly one, a non-negative integer.
func mdInt(md metadata.MD, key string) (int, bool) {
	vs := md.Get(key)
	if len(vs) != 1 {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(vs[0]))
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// limitedStream is a server stream whose Context carries the time limit, or the caller's
// attempt number.
type limitedStream struct {
	grpc.ServerStream
	ctx context.Context
}

// Context returns the stream's context with the time limit's deadline.
func (s *limitedStream) Context() context.Context { return s.ctx }

// serverError maps the error a server pipeline returned to the status the client receives,
// setting the pushback trailer with setTrailer for a refusal. ran tells whether the handler
// was called: a levee rejection is the Server's own only when it was not (a handler may
// return one from a dependency it guards, which carries no pushback of the Server's).
func (s *Server) serverError(ctx context.Context, method string, err error, ran bool, setTrailer func(metadata.MD)) error {
	var ref *refusal
	if errors.As(err, &ref) {
		if !ran && levee.IsRejection(ref.err) {
			if d, ok := ref.wait(s.cfg.BulkheadPushback); ok {
				setTrailer(pushbackMD(d))
			}
			return withStatus(codes.ResourceExhausted, ref.err)
		}
		err = ref.err
	}
	var perr *levee.PanicError
	switch {
	case errors.As(err, &perr):
		if s.cfg.Logger != nil {
			s.cfg.Logger.Error("leveegrpc: handler panicked", "method", method, "panic", fmt.Sprint(perr.Value), "stack", string(perr.Stack))
		}
		return status.Error(codes.Internal, "leveegrpc: the handler panicked")
	case !ran && errors.Is(err, bulkhead.ErrBulkheadFull):
		if s.cfg.BulkheadPushback >= 0 {
			setTrailer(pushbackMD(s.cfg.BulkheadPushback))
		}
		return withStatus(codes.ResourceExhausted, err)
	case !ran && errors.Is(err, ratelimiter.ErrRequestNotPermitted):
		setTrailer(pushbackMD(s.cfg.RateLimiter.Metrics().NanosToWait))
		return withStatus(codes.ResourceExhausted, err)
	case errors.Is(err, timelimiter.ErrTimeout):
		return withStatus(codes.DeadlineExceeded, err)
	case hasStatus(err):
		return err
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return withStatus(status.FromContextError(ctx.Err()).Code(), err)
	}
	if c := levelCode(err); c != codes.Unknown {
		return withStatus(c, err)
	}
	return err
}

// isNil reports whether v is nil or holds a nil pointer (or other nil reference).
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func, reflect.Interface:
		return r.IsNil()
	}
	return false
}

// refusal is an error of ServerConfig.Limiter or ConcurrencyLimiter, tagged with the limiter
// so that serverError tells a refusal of the Server's own from one the handler returned, and
// sends that limiter's wait.
type refusal struct {
	err         error
	limiter     levee.PermissionLimiter // set for Limiter's errors
	concurrency levee.Admitter          // set for ConcurrencyLimiter's errors
}

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// wait returns the pushback of the refusal, read at once from the limiter that refused, and
// whether to send one; bulkheadPushback is the ConcurrencyLimiter's default.
func (r *refusal) wait(bulkheadPushback time.Duration) (time.Duration, bool) {
	if r.limiter != nil {
		if rl, ok := r.limiter.(*ratelimiter.RateLimiter); ok {
			return rl.Metrics().NanosToWait, true
		}
		a, ok := r.limiter.(levee.RetryAdvisor)
		if !ok {
			return 0, false
		}
		return a.RetryAfter(), true
	}
	if a, ok := r.concurrency.(levee.RetryAdvisor); ok {
		if d := a.RetryAfter(); d > 0 {
			return d, true
		}
	}
	return bulkheadPushback, bulkheadPushback >= 0
}

type taggedLimiter struct{ l levee.PermissionLimiter }

func (t taggedLimiter) AcquirePermission(ctx context.Context, n int) error {
	if err := t.l.AcquirePermission(ctx, n); err != nil {
		return &refusal{err: err, limiter: t.l}
	}
	return nil
}

type taggedAdmitter struct{ a levee.Admitter }

func (t taggedAdmitter) Admit(ctx context.Context) (levee.Permit, error) {
	p, err := t.a.Admit(ctx)
	if err != nil {
		return nil, &refusal{err: err, concurrency: t.a}
	}
	return p, nil
}

// pushbackMD returns the trailer carrying d as PushbackKey, in milliseconds rounded up.
func pushbackMD(d time.Duration) metadata.MD {
	ms := (d + time.Millisecond - 1) / time.Millisecond
	return metadata.Pairs(PushbackKey, strconv.FormatInt(int64(ms), 10))
}

// timeLimit is the Server's time limit as a pipeline layer: next runs on the caller's
// goroutine under a context whose deadline is tl's TimeoutDuration, and is waited for.
func timeLimit[T any](tl *timelimiter.TimeLimiter) levee.Decorator[T] {
	timeout := tl.Config().TimeoutDuration
	return func(ctx context.Context, next func(context.Context) (T, error)) (T, error) {
		if err := ctx.Err(); err != nil {
			var zero T
			return zero, err
		}
		start := time.Now()
		lctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		v, err := next(lctx)
		d := time.Since(start)
		switch {
		case ctx.Err() != nil && err != nil:
			// The client's own cancellation or deadline: nobody's failure, nothing recorded.
		case err != nil && errors.Is(lctx.Err(), context.DeadlineExceeded):
			err = &timelimiter.TimeoutError{Name: tl.Name(), Timeout: timeout, Err: err}
			tl.OnError(d, err)
		default:
			tl.OnError(d, err) // a nil err is a success
		}
		return v, err
	}
}
