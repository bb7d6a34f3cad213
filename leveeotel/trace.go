package leveeotel

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/levee-go/levee"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// The names of the span events Tracing writes. OpenTelemetry has no semantic conventions for
// resilience patterns; these are levee's own.
const (
	// EventAttempt: an attempt of a retry returned.
	EventAttempt = "levee.attempt"
	// EventWait: a retry waits before its next attempt.
	EventWait = "levee.wait"
	// EventRejection: a breaker, bulkhead or rate limiter refused the call.
	EventRejection = "levee.rejection"
	// EventFallback: a fallback answered a failure.
	EventFallback = "levee.fallback"
	// EventTransition: the breaker changed state while the call ran through it.
	EventTransition = "levee.circuitbreaker.transition"
)

// The attributes of Tracing's span events. Where OpenTelemetry's semantic conventions name an
// attribute, its name is used (http.request.resend_count, error.type); the others are levee's.
const (
	// AttrPattern is the kind of the pattern: retry, circuitbreaker, bulkhead, ratelimiter,
	// fallback. On every event.
	AttrPattern = attribute.Key("levee.pattern")
	// AttrName is the name of the pattern's instance. On every event.
	AttrName = attribute.Key("levee.name")
	// AttrAttempt is the attempt's number, 1 for the first; on a wait, the number of the
	// attempt it precedes. On attempts and waits.
	AttrAttempt = attribute.Key("levee.attempt")
	// AttrResendCount is OpenTelemetry's http.request.resend_count: the number of times the
	// call was sent before this attempt (levee.attempt - 1), on the attempts after the first
	// only, as the convention asks, and for every kind of call, not HTTP's alone.
	AttrResendCount = attribute.Key("http.request.resend_count")
	// AttrErrorType is OpenTelemetry's error.type: the Go type of the error (through
	// fmt.Errorf's wrapping), such as *leveehttp.StatusError. On a failed attempt, a
	// rejection and a fallback (the failure it answered).
	AttrErrorType = attribute.Key("error.type")
	// AttrWaitDuration is the wait's length in seconds (a float). On waits.
	AttrWaitDuration = attribute.Key("levee.wait.duration")
	// AttrStateFrom and AttrStateTo are the breaker's states before and after a transition,
	// spelled as the state attribute of resilience4j.circuitbreaker.state: closed, open,
	// half_open, disabled, forced_open, metrics_only.
	AttrStateFrom = attribute.Key("levee.circuitbreaker.state.from")
	AttrStateTo   = attribute.Key("levee.circuitbreaker.state.to")
)

// Tracing is a levee.CallObserver that writes each levee.CallEvent of a call as one event on
// the span of the context the pattern saw, the call's own span (trace.SpanFromContext): one
// span event per attempt of a retry, per wait before one, per rejection, per fallback answer
// and per breaker transition, named and attributed as the Event... and Attr... constants say.
// It writes nothing on a span that is not recording. Use it with levee.WithCallObserver, or
// through ContextWithTracing.
//
// Tracing creates no span of its own: the call's span is the application's (otelhttp's, say,
// or one started around the pipeline's Execute).
type Tracing struct{}

// ContextWithTracing returns ctx carrying Tracing as its levee.CallObserver when the span of
// ctx is recording, and ctx itself otherwise: with no tracer provider installed (the global
// no-op one) or a span that was not sampled, nothing is allocated and the patterns report
// nothing, so the call costs what it costs without tracing.
func ContextWithTracing(ctx context.Context) context.Context {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx
	}
	return levee.WithCallObserver(ctx, Tracing{})
}

// OnCallEvent writes e on the span of ctx.
func (Tracing) OnCallEvent(ctx context.Context, e levee.CallEvent) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, AttrPattern.String(e.Pattern), AttrName.String(e.Name))
	var name string
	switch e.Kind {
	case levee.CallAttempt:
		name = EventAttempt
		attrs = append(attrs, AttrAttempt.Int(e.Attempt))
		if e.Attempt > 1 {
			attrs = append(attrs, AttrResendCount.Int(e.Attempt-1))
		}
		if e.Err != nil {
			attrs = append(attrs, AttrErrorType.String(errorType(e.Err)))
		}
	case levee.CallWait:
		name = EventWait
		attrs = append(attrs, AttrAttempt.Int(e.Attempt), AttrWaitDuration.Float64(e.Wait.Seconds()))
	case levee.CallRejection:
		name = EventRejection
		attrs = append(attrs, AttrErrorType.String(errorType(e.Err)))
	case levee.CallFallback:
		name = EventFallback
		if e.Err != nil {
			attrs = append(attrs, AttrErrorType.String(errorType(e.Err)))
		}
	case levee.CallTransition:
		name = EventTransition
		attrs = append(attrs, AttrStateFrom.String(strings.ToLower(e.From)), AttrStateTo.String(strings.ToLower(e.To)))
	default:
		return
	}
	span.AddEvent(name, trace.WithAttributes(attrs...))
}

// errorType returns the Go type of err, looking through fmt.Errorf's wrapping, whose type
// says nothing of the error.
func errorType(err error) string {
	for {
		t := fmt.Sprintf("%T", err)
		if t != "*fmt.wrapError" && t != "*fmt.wrapErrors" {
			return t
		}
		next := errors.Unwrap(err)
		if next == nil {
			if u, ok := err.(interface{ Unwrap() []error }); ok && len(u.Unwrap()) > 0 {
				next = u.Unwrap()[0]
			} else {
				return t
			}
		}
		err = next
	}
}
