package leveegrpc

import (
	"context"
	"errors"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/internal/compose"
	"github.com/levee-go/levee/internal/safe"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// UnaryClientInterceptor returns a grpc.UnaryClientInterceptor that runs each unary call
// through p: each run of p's innermost call is one attempt, one invocation of the RPC. The
// pipeline's result type is struct{}: the reply is written by gRPC into the caller's reply
// message, as without the interceptor, and the pipeline only decides whether, when and how
// often to invoke. Build p once per dependency, typically
//
//	levee.DefaultPipeline[struct{}](levee.Patterns{Retry: r, CircuitBreaker: cb}, nil)
//
// with r from retry.New(name, RetryConfig(...)) and cb from circuitbreaker.New(name,
// CircuitBreakerConfig(...)), so that UNAVAILABLE and RESOURCE_EXHAUSTED are retried
// (waiting the server's pushback when it sent one), and the breaker records the failures
// IsFailure names and ignores INVALID_ARGUMENT, NOT_FOUND and the like.
//
// Each attempt's error is the RPC's status error, with the server's pushback (PushbackKey in
// the trailers, see Pushback) and, when the caller's context ended, that context's error
// attached, so that levee treats the caller's cancellation as nobody's failure. The caller
// receives an error that status.Code reads: the RPC's status when the last attempt had one,
// and otherwise a status mapped from levee's error, kept in the chain (errors.Is and
// errors.As see it): an open breaker is UNAVAILABLE (circuitbreaker.ErrCallNotPermitted; the
// server was not called), a full bulkhead or a refused rate limit RESOURCE_EXHAUSTED, a time
// limit DEADLINE_EXCEEDED, the caller's cancellation CANCELLED, a panic INTERNAL.
//
// Attempts of one call never overlap, so the reply is never written by two attempts at once:
// an attempt a TimeLimiter gave up on has its context cancelled, and the next attempt, like
// the interceptor's return, waits until it has returned (gRPC returns at once on
// cancellation; with the time limiter's DisableCancelRunningFuture it runs to its end). A
// fallback in p that answers a failure makes the call succeed with the reply as it stands.
// When p holds a Retry, every attempt carries its number in AttemptCountKey
// (x-envoy-attempt-count: 1, 2, 3, ..., as Envoy sends it for gRPC too) in its outgoing
// metadata, the first included, and each retry also PreviousAttemptsKey
// (grpc-previous-rpc-attempts: 1, 2, ...), as gRPC's own retries do, so that a levee server
// knows that its caller retries and can leave the retrying to it
// (retry.Config.NoRetryOfRetries). A p without a Retry sends neither on its first attempt.
// Leave gRPC's own retry policy (service config) off when p retries, or the two multiply.
// A call whose context carries a priority (priority.WithPriority, priority.WithLevel) sends
// it on every attempt in DefaultPriorityMetadataKey, as priority.Carried writes it, unless
// its outgoing metadata already has that key; for another key chain
// PriorityUnaryClientInterceptor before this one.
// A nil p guards nothing but still maps errors as above. Each call allocates a little besides
// what gRPC allocates (the attempt's function and its trailer option); a refusal by p
// allocates the status it is mapped to.
func UnaryClientInterceptor(p *levee.Pipeline[struct{}]) grpc.UnaryClientInterceptor {
	retries := (*compose.Chain[struct{}])(p).Retries()
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		ctx = withOutgoingPriority(ctx, DefaultPriorityMetadataKey)
		var mu sync.Mutex
		attempts := 0
		_, err := p.Execute(ctx, func(actx context.Context) (struct{}, error) {
			mu.Lock()
			defer mu.Unlock()
			actx = withAttempt(actx, attempts, retries)
			attempts++
			var trailer metadata.MD
			err := invoker(actx, method, req, reply, cc, append(opts[:len(opts):len(opts)], grpc.Trailer(&trailer))...)
			return struct{}{}, attemptError(actx, err, trailer)
		})
		mu.Lock() // an attempt given up on may still be running: wait for it
		mu.Unlock()
		return clientError(ctx, err)
	}
}

// attemptError returns the error of one attempt that failed with err: err itself when there
// is nothing to add, else err with the server's pushback from trailer and actx's error when
// the attempt's context ended.
func attemptError(actx context.Context, err error, trailer metadata.MD) error {
	if err == nil {
		return nil
	}
	se := &statusError{err: err}
	se.pushback, se.hasPushback = parsePushback(trailer)
	switch c := status.Code(err); {
	case c != codes.Canceled && c != codes.DeadlineExceeded:
	case actx.Err() != nil:
		se.ctx = actx.Err()
	case c == codes.DeadlineExceeded && deadlinePassed(actx):
		// The server's answer to the same deadline, or gRPC's own timer, came before the
		// context's timer had fired: the deadline is the context's all the same.
		se.ctx = context.DeadlineExceeded
	}
	if !se.hasPushback && se.ctx == nil {
		return err
	}
	st, ok := status.FromError(err)
	if !ok {
		st = status.New(codes.Unknown, err.Error())
	}
	se.st = st
	return se
}

// StreamClientInterceptor returns a grpc.StreamClientInterceptor that guards streaming calls.
// p's innermost call is one attempt: one stream, from its establishment
// (grpc.ClientConn.NewStream, which fails when no connection can carry it) until it commits,
// as gRPC's retry design (A6) defines it: when the server's first response header arrives
// (it comes before, or with, the first response message). A retry in p therefore retries a
// stream that failed to be established and a stream the server answered before any response
// (a trailers-only answer, such as UNAVAILABLE from a server that is shutting down or a
// RESOURCE_EXHAUSTED from a levee Server), opening another stream and sending it again the
// messages the caller sent so far, then its CloseSend; the caller sees one stream, the one
// that committed. Once a stream has committed, its errors (RecvMsg's or SendMsg's) are the
// caller's to handle, as with gRPC's own retry policy: messages already received cannot be
// replayed.
//
// The messages sent before a stream commits are kept for replay up to gRPC's per-RPC retry
// buffer (DefaultRetryBufferSize, 256 KiB of proto.Size, or grpc.MaxRetryRPCBufferSize's
// bound): a message past it commits the stream at once, and so does a message that is not a
// proto.Message. A SendMsg of a stream not yet committed whose attempt has ended returns nil,
// the message kept for the next attempt. The first attempt's establishment is waited for by
// the interceptor, so an error establishing the stream in every attempt comes back from
// NewStream (the generated client's method) as before; an error of a later attempt, or the
// status of the last attempt when p gives up, comes back from RecvMsg. While a stream has not
// committed, p runs on a goroutine of its own, which ends when the stream commits or p gives
// up (the stream's context ending ends it too).
//
// cb, when not nil, decides and records each attempt's stream as a whole: each attempt asks
// it for a permission (an open breaker refuses it with an error whose status is UNAVAILABLE
// and which matches circuitbreaker.ErrCallNotPermitted, and the server is not called), a
// failed establishment or an answer before any response is recorded at once, and a committed
// stream is recorded with its final status: a success when RecvMsg returns io.EOF (or the
// single response of a client-streaming call), its error otherwise, classified by cb's config
// (see CircuitBreakerConfig). A stream that ends by its caller's cancellation records nothing
// and gives the permission back; so does a stream whose context ends before its status was
// read. A panic while the permission is held (in the streamer, or in a method of the stream,
// a codec's say) is recorded as a failure, a *levee.PanicError, as the breaker's Execute
// records one, and panics on: p returns it as an error (INTERNAL to the caller), and without
// p it reaches the caller as without the interceptor; a streamer that calls runtime.Goexit
// gives the permission back. Do not put cb in p as well: it would record the attempts only,
// and twice.
//
// p must hold no TimeLimiter: the context of an attempt it limits ends when the attempt
// returns, which would end the stream as soon as it commits; bound a stream with its own
// context's deadline instead. A Bulkhead in p bounds concurrent attempts, not open streams.
//
// Errors reach the caller mapped as UnaryClientInterceptor's, and the context's priority is
// sent as UnaryClientInterceptor sends it (PriorityStreamClientInterceptor for another key).
// A nil p guards only with cb,
// establishing each stream once, with no goroutine or buffer; a nil cb records nothing.
func StreamClientInterceptor(p *levee.Pipeline[grpc.ClientStream], cb *circuitbreaker.CircuitBreaker) grpc.StreamClientInterceptor {
	retries := (*compose.Chain[grpc.ClientStream])(p).Retries()
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		ctx = withOutgoingPriority(ctx, DefaultPriorityMetadataKey)
		open := func(actx context.Context) (grpc.ClientStream, error) {
			if cb == nil {
				cs, err := streamer(actx, desc, cc, method, opts...)
				return cs, attemptError(actx, err, nil)
			}
			permit, err := cb.Acquire()
			if err != nil {
				return nil, err
			}
			// A streamer that panics is recorded as a failed call, as the breaker's Execute
			// records a panic, and panics on (the pipeline, when there is one, returns it as a
			// *levee.PanicError); one that never returns (runtime.Goexit) gives the permit back.
			returned := false
			defer func() {
				if returned {
					return
				}
				if r := recover(); r != nil {
					permit.OnError(safe.NewPanicError(r))
					panic(r)
				}
				permit.Release()
			}()
			cs, err := streamer(actx, desc, cc, method, opts...)
			returned = true
			if err != nil {
				err = attemptError(actx, err, nil)
				if actx.Err() != nil && errors.Is(err, actx.Err()) || callerDeadline(actx, err) {
					permit.Release()
				} else {
					permit.OnError(err)
				}
				return nil, err
			}
			return newRecordedStream(actx, cs, desc, permit), nil
		}
		if p == nil {
			cs, err := open(ctx)
			if err != nil {
				return nil, clientError(ctx, err)
			}
			return cs, nil
		}

		rs := &replayStream{ctx: ctx, limit: retryBufferSize(opts), changed: make(chan struct{}), ready: make(chan struct{})}
		go func() {
			attempts := 0
			cs, err := p.Execute(ctx, func(actx context.Context) (grpc.ClientStream, error) {
				actx = withAttempt(actx, attempts, retries)
				attempts++
				cs, err := open(actx)
				if err != nil {
					return nil, err
				}
				if rec, ok := cs.(*recordedStream); ok {
					// A panic replaying the messages sent so far or waiting for the stream
					// to commit ends its permit as a failure, like a panic in streamer.
					defer rec.endOnPanic()
				}
				if err := rs.attempt(actx, cs); err != nil {
					return nil, err
				}
				return cs, nil
			})
			rs.finish(cs, clientError(ctx, err))
		}()
		<-rs.ready
		rs.mu.Lock()
		opened, err := rs.last != nil, rs.final
		rs.mu.Unlock()
		if !opened && err != nil {
			return nil, err // no attempt was established: NewStream's error, as without retries
		}
		return rs, nil
	}
}

// recordedStream reports an established stream's final status to its breaker permit, once.
type recordedStream struct {
	grpc.ClientStream
	ctx           context.Context
	serverStreams bool
	permit        circuitbreaker.Permit
	once          sync.Once
	stop          func() bool // stops the context watch
}

func newRecordedStream(ctx context.Context, cs grpc.ClientStream, desc *grpc.StreamDesc, permit circuitbreaker.Permit) *recordedStream {
	s := &recordedStream{ClientStream: cs, ctx: ctx, serverStreams: desc.ServerStreams, permit: permit}
	// gRPC ends a stream whose context ends; a caller that stops reading without cancelling
	// must cancel it anyway (grpc.ClientConn.NewStream), so the permit cannot be kept forever.
	s.stop = context.AfterFunc(ctx, func() { s.once.Do(s.permit.Release) })
	return s
}

// finish records the stream's final status: nil is a success.
func (s *recordedStream) finish(err error) {
	s.once.Do(func() {
		s.stop()
		switch {
		case err == nil:
			s.permit.OnSuccess()
		case s.ctx.Err() != nil && status.Code(err) == status.FromContextError(s.ctx.Err()).Code(),
			callerDeadline(s.ctx, err):
			s.permit.Release()
		default:
			s.permit.OnError(err)
		}
	})
}

// endOnPanic, deferred, records a panic going through it as the stream's failure
// (a *levee.PanicError) and panics on.
func (s *recordedStream) endOnPanic() {
	if r := recover(); r != nil {
		s.finish(safe.NewPanicError(r))
		panic(r)
	}
}

// RecvMsg receives a message; io.EOF or an error ends the stream and records it, and so does
// the response of a call whose server sends only one. A panic (a codec's, say) is recorded as
// a failure and panics on.
func (s *recordedStream) RecvMsg(m any) error {
	defer s.endOnPanic()
	err := s.ClientStream.RecvMsg(m)
	switch {
	case err == io.EOF:
		s.finish(nil)
	case err != nil:
		s.finish(err)
	case !s.serverStreams:
		s.finish(nil) // gRPC has read the status after the single response
	}
	return err
}

// SendMsg sends a message; an error other than io.EOF (whose status RecvMsg returns) is the
// stream's final status. A panic is recorded as a failure and panics on.
func (s *recordedStream) SendMsg(m any) error {
	defer s.endOnPanic()
	err := s.ClientStream.SendMsg(m)
	if err != nil && err != io.EOF {
		s.finish(err)
	}
	return err
}

// PreviousAttemptsKey is the metadata key of gRPC's retry design (A6) carrying the number of
// attempts of the same call made before this one. The client interceptors send it on each
// retry (1 on the first retry; the first attempt carries none, as gRPC's own retries do),
// besides AttemptCountKey on every attempt, and the server interceptors read the attempt it
// names (its value + 1) when a call carries no AttemptCountKey.
const PreviousAttemptsKey = "grpc-previous-rpc-attempts"

// AttemptCountKey is the metadata key carrying the attempt number of a call, 1 for the first
// attempt and one more for each retry: Envoy's x-envoy-attempt-count, which Envoy sends for
// gRPC as for HTTP. The client interceptors send it on every attempt, the first included, when
// their pipeline holds a Retry (and on its retries otherwise), replacing a value the caller
// set. The server interceptors put the number a call carries in the handler's context, read by
// retry.IncomingAttempt (from AttemptCountKey, else PreviousAttemptsKey + 1): a caller that
// sends it retries the call itself, so that the server's own retries can leave the call to it
// (retry.Config.NoRetryOfRetries, retry.CallerRetries).
const AttemptCountKey = "x-envoy-attempt-count"

// withAttempt returns ctx with the outgoing metadata of the attempt after n attempts of the
// same call: AttemptCountKey n+1 when the pipeline retries or n > 0, and PreviousAttemptsKey n
// when n > 0. A first attempt of a pipeline that does not retry is ctx itself.
func withAttempt(ctx context.Context, n int, retries bool) context.Context {
	if n == 0 && !retries {
		return ctx
	}
	md, _ := metadata.FromOutgoingContext(ctx) // a copy
	if md == nil {
		md = metadata.MD{}
	}
	md.Set(AttemptCountKey, strconv.Itoa(n+1))
	if n > 0 {
		md.Set(PreviousAttemptsKey, strconv.Itoa(n))
	} else {
		delete(md, PreviousAttemptsKey)
	}
	return metadata.NewOutgoingContext(ctx, md)
}

// callerDeadline reports whether err is a DEADLINE_EXCEEDED status and ctx's own deadline has
// passed, even an instant before ctx.Err() is set: the caller's deadline, nobody's failure.
func callerDeadline(ctx context.Context, err error) bool {
	return status.Code(err) == codes.DeadlineExceeded && deadlinePassed(ctx)
}

// deadlinePassed reports whether ctx has a deadline that is not in the future.
func deadlinePassed(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}
