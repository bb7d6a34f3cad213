package operators

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/levee-go/levee/internal/engine"
	"github.com/levee-go/levee/stream"
	"github.com/reactivex/rxgo/v2"
)

// Option configures one operator of this package, as the stream package's options configure
// its operators; the names and meanings are the same. rxgo's own options are opaque to other
// packages, so they cannot carry these settings: an operator given an option that does not
// apply to it, or an invalid one, returns an error naming it before anything starts. The zero
// Option is refused.
type Option struct {
	name  string
	scope scope
	apply func(*settings)
}

type scope uint8

const (
	perEmission     scope = 1 << iota // Map, MapResults, Filter, FlatMap
	perSubscription                   // Guard
	perRateLimiter                    // RateLimiter
)

type settings struct {
	em      engine.Settings // the per-emission options, shared with the stream package
	bounds  TimeBound
	permits int   // 0: one
	err     error // the first invalid option
}

func (s *settings) invalid(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("operators: "+format, args...)
	}
}

// check records err, an option's error, as the first invalid option.
func (s *settings) check(err error) {
	if err != nil {
		s.invalid("%s", err.Error())
	}
}

// emissionOption returns an option of the per-emission operators that sets em.
func emissionOption(name string, set func(em *engine.Settings) error) Option {
	return Option{name: name, scope: perEmission, apply: func(s *settings) { s.check(set(&s.em)) }}
}

// collect applies opts for the operator op, whose options must be in sc.
func collect(op string, sc scope, opts []Option) (settings, error) {
	s := settings{em: engine.Defaults()}
	for i, o := range opts {
		if o.apply == nil {
			return s, fmt.Errorf("operators: option %d of %s is the zero Option", i, op)
		}
		if o.scope&sc == 0 {
			return s, fmt.Errorf("operators: option %s does not apply to %s", o.name, op)
		}
		o.apply(&s)
		if s.err != nil {
			return s, s.err
		}
	}
	s.check(s.em.Check())
	return s, s.err
}

// rxOptions returns the rxgo options of the operator's own output channel.
func (s *settings) rxOptions() []rxgo.Option {
	if s.em.Buffer > 0 {
		return []rxgo.Option{rxgo.WithBufferedChannel(s.em.Buffer)}
	}
	return nil
}

// Limits of the options that size what a subscription allocates up front, so that a
// mistyped value is refused rather than exhausting memory. They are the stream package's.
const (
	MaxConcurrency = engine.MaxConcurrency // 1 << 16; Concurrency: workers
	MaxWindow      = engine.MaxWindow      // 1 << 16; Window: reorder slots
	MaxBuffer      = engine.MaxBuffer      // 1 << 20; Buffer: capacity of the output channel
)

// DefaultBuffer is the capacity of a per-emission operator's output channel when no Buffer is
// given, the stream package's: an operator that may run 64 items ahead of its consumer
// handles many items per goroutine switch instead of one.
const DefaultBuffer = engine.DefaultBuffer // 64

// Concurrency lets up to n guarded calls run at the same time (default 1), each in one of n
// worker goroutines of the subscription. Items still come out in input order unless
// Unordered is given: a result that is ready waits for the ones before it, and no more than
// the Window (default n) items are taken from the upstream before their results are sent.
// rxgo's WithPool, by contrast, loses the order and keeps going after an error. n must be in
// [1, MaxConcurrency].
//
// A time limiter in the pipeline answers a call at its deadline, but a call that ignores its
// context keeps running after that (Go cannot stop a goroutine), and the worker goes on to the
// next item: n bounds the calls the operator waits for, not those a time limiter abandoned,
// and with OrderByKey an item of a key may start while an abandoned call of the same key still
// runs. Put a Bulkhead inside the TimeLimiter (the order of levee.DefaultPipeline and
// levee.Patterns) to bound the calls running at once, abandoned ones included; the output
// closes only once every abandoned call has returned.
//
// It applies to Map, MapResults, Filter and FlatMap.
func Concurrency(n int) Option {
	return emissionOption("Concurrency", func(em *engine.Settings) error { return em.SetConcurrency(n) })
}

// PauseWhileOpen makes the operator wait out a refusal instead of answering it: when the
// pipeline refuses an element's call with a levee rejection (levee.IsRejection: an open
// breaker, a rate limiter out of permissions, a full bulkhead), whether or not a fallback of
// the pipeline answered it, the operator holds that element and retries it once the refusal
// may be over, rather than emitting the fallback's answer or the rejection. While an element
// is held no other call starts (calls already running finish), and its retry is the next call
// the operator makes: after an open breaker's wait, the held element is the HALF_OPEN probe.
// Nothing is skipped or reordered.
//
// When to retry is decided as by stream.PauseWhileOpen: at the end of an OPEN breaker's wait or
// of a rate limiter's wait for its next permission, whichever is later, or sooner on a
// breaker's state transition or ignored error, or a bulkhead's finished call; an element refused while another is
// held waits for that one first. maxWait bounds the time one
// element is held (0: no bound): past it the last refusal stands, answered by the fallbacks as
// without this option, and the operator goes on. Holding ends when the subscription's context
// is done. The time an element was held is its Result's Paused (MapResults). A pipeline with
// no breaker, rate limiter or bulkhead (a nil one included) holds nothing.
//
// Permits that come free together run every held element they can take, not one, and the
// Window still bounds what is taken, as stream.PauseWhileOpen says: in input order with the
// default Window (the Concurrency), a held first element keeps the next elements from being
// taken until it has been emitted; give a Window above the Concurrency, or Unordered, for
// freed permits to take new elements too.
//
// maxWait must be >= 0. It applies to Map, Filter, FlatMap and MapResults.
func PauseWhileOpen(maxWait time.Duration) Option {
	return emissionOption("PauseWhileOpen", func(em *engine.Settings) error { return em.SetPauseWhileOpen(maxWait) })
}

// Window sets the reorder window of ordered output to n items (default: the Concurrency), as
// stream.Window: no more than n items, counted from the oldest whose result has not been
// emitted yet, that one included, are taken from the upstream and either being called or
// finished and waiting for the ones before them, so one slow element stops new calls only
// once n-1 items after it have been taken; with OrderByKey, the items taken and not yet
// emitted, those waiting for their key included; with OrderByKeyAndInput, as for ordered
// output. n must be in [Concurrency, MaxWindow]. With Unordered the window is a bound that
// always holds (unordered output takes no more than Concurrency items ahead of those
// emitted): Window with Unordered is accepted and changes nothing.
//
// It applies to Map, MapResults, Filter and FlatMap.
func Window(n int) Option {
	return emissionOption("Window", func(em *engine.Settings) error { return em.SetWindow(n) })
}

// Watermark is the commit watermark of one operator, given to it with CommitWatermark: Load
// returns the number of upstream value items, from the first, whose items have all been
// emitted and acknowledged, as stream.Watermark's; see CommitWatermark. Make one with
// NewWatermark; its methods are safe for concurrent use. A zero Watermark is refused by
// CommitWatermark, and its methods do nothing (Load returns 0).
type Watermark struct {
	w       *engine.Watermark
	invalid error // why CommitWatermark refuses it, for the Watermark of a PositionWatermark that has none
}

// NewWatermark returns a Watermark at 0, to give to one operator with CommitWatermark.
func NewWatermark() *Watermark { return &Watermark{w: engine.NewWatermark()} }

// Load returns the watermark: the number of upstream value items from the first (index 0)
// that are all done (every item emitted for them and acknowledged), so that the item of index
// Load() is the first not done: the offset to commit. It starts at 0 and never goes down. An
// element cut by a cancellation never becomes done, so Load stays below it. The operator
// records an element's last item as emitted just after the send returns, so Load may count it
// a moment after the consumer's Ack: it lags, never leads.
func (w *Watermark) Load() int {
	if w == nil || w.w == nil {
		return 0
	}
	return w.w.Load()
}

// Ack acknowledges one Result, received and handled by the observer, with its Index (after
// MapResults): call it once per Result, in any order. An index below the watermark, or one
// with no item left to acknowledge, is ignored. Use Ack or AckNext, not both, on one
// Watermark.
func (w *Watermark) Ack(index int) {
	if w == nil || w.w == nil {
		return
	}
	w.w.Ack(index)
}

// AckNext acknowledges the oldest item emitted and not yet acknowledged: call it once per
// item read from levee's operator (a value or an error item alike), in the order read, when
// the items carry no index (after Map, Filter or FlatMap). A call with nothing to acknowledge
// is ignored. Use Ack or AckNext, not both, on one Watermark.
func (w *Watermark) AckNext() {
	if w == nil || w.w == nil {
		return
	}
	w.w.AckNext()
}

// ErrWatermarkInUse is matched (errors.Is) by the error of an operator given a Watermark
// another operator already has, and by the error item of a second subscription of an
// operator with CommitWatermark. It is stream.ErrWatermarkInUse.
var ErrWatermarkInUse = engine.ErrWatermarkInUse

// CommitWatermark makes the operator keep w, a commit watermark over its upstream's value
// items, as stream.CommitWatermark: w.Load() is the number of elements, from the first, each
// of which is done, so that a consumer may commit it as the offset to resume from without
// losing an element (at-least-once delivery).
//
// Done means emitted and acknowledged: the operator has emitted every item the element yields
// (none for an element Filter drops, one for Map and MapResults, one per value for FlatMap, an
// error item for a failed element), and the consumer has acknowledged each. An item in the
// output channel's buffer has not reached the consumer, and the channel cannot tell the
// operator when it has: the acknowledgement does. With MapResults, call w.Ack(r.Index) for
// each Result, in any order. With Map, Filter and FlatMap, whose items carry no index, call
// w.AckNext() once per item received from the operator's own Observe channel (values and
// error items alike, upstream errors forwarded included), in the order received: the items
// are received in the order they were emitted, so the k-th call acknowledges the k-th item.
// An rxgo operator between levee's and the consumer that drops, adds or reorders items breaks
// that count: acknowledge before it, or use MapResults.
//
// An element whose call was cut when the subscription stopped yields no item and never
// becomes done: the watermark stays below it. The watermark follows the operator's first
// subscription: a later Observe of the same operator, a resubscription included, emits one
// error item matching ErrWatermarkInUse and nothing else; give each subscription an operator
// of its own. w must come from NewWatermark and serve this operator only, or the operator
// returns an error. Resilience4j has no counterpart.
//
// It applies to Map, MapResults, Filter and FlatMap.
func CommitWatermark(w *Watermark) Option {
	return emissionOption("CommitWatermark", func(em *engine.Settings) error {
		if w == nil {
			return em.SetWatermark(nil)
		}
		if w.w == nil {
			if w.invalid != nil {
				return w.invalid
			}
			return errors.New("CommitWatermark needs a *Watermark from NewWatermark, got a zero Watermark")
		}
		return em.SetWatermark(w.w)
	})
}

// Unordered emits each result as soon as its call ends, instead of in input order; Result's
// Index still tells each element's position. With a Concurrency of 1 the order is the
// input's either way. With OrderByKey it is accepted and changes nothing: OrderByKey already
// emits the items of different keys as their calls end. With OrderByKeyAndInput, which emits
// in input order, it is refused.
//
// It applies to Map, MapResults, Filter and FlatMap.
func Unordered() Option {
	return emissionOption("Unordered", func(em *engine.Settings) error { em.Unordered = true; return nil })
}

// OrderByKey orders the items by key instead of by input, as stream.OrderByKey and as a Kafka
// consumer orders the records of one partition (Confluent's parallel consumer with its KEY
// ordering): key(v) is the key of the value item v, and the elements of one key are called one
// at a time, in input order, and their items emitted in that order, while elements of
// different keys are called in parallel, up to Concurrency at once. An element's items are
// emitted as soon as its call has ended (those of the earlier elements of its key are out by
// then), so the output is ordered by key only; MapResults' Index tells each element's position.
// An upstream error item, or a value that is not a V, has no key and is emitted in its own
// time, ordered with nothing.
//
// An element whose key has a call running waits for it without holding a worker. The Window
// (default: the Concurrency) bounds the items taken from the upstream and not yet emitted,
// waiting ones included, so a slow key holds back the others only once the window is full.
// Memory is bounded by the number of keys in flight (at most the Window): a key with no item
// taken and not yet emitted has no entry. CommitWatermark counts by upstream index, so it never
// passes an element of a slow key; with Map, Filter and FlatMap acknowledge with AckNext in the
// order received, as without this option. With PauseWhileOpen, a held element stops every call.
// With a Concurrency of 1, the order is the upstream's and key is not called.
//
// key is called once per value item, on one goroutine, in upstream order, and must be cheap.
// A panic in key, or a key that cannot be compared (an interface holding a slice), fails the
// element with a *levee.PanicError, without a call and without WithFallback. The type of key
// must match the operator: func(V) K for Map[V, R], MapResults[V, R], Filter[V] and
// FlatMap[V, R]; the operator refuses any other, and a nil key. OrderByKey with Unordered is
// OrderByKey; to keep the upstream order across keys as well, give OrderByKeyAndInput instead
// (not both). Resilience4j has no counterpart.
//
// It applies to Map, MapResults, Filter and FlatMap.
func OrderByKey[V any, K comparable](key func(V) K) Option {
	return emissionOption("OrderByKey", func(em *engine.Settings) error { return em.SetKey(engine.KeyBy(key), key == nil) })
}

// OrderByKeyAndInput calls the elements of one key one at a time, in upstream order, as
// OrderByKey does, and emits every item in upstream order, as without OrderByKey, as
// stream.OrderByKeyAndInput: the calls of one key never overlap, the calls of different keys
// run in parallel, up to Concurrency at once, and an item whose call has ended waits for the
// items before it, of every key, within the Window (default: the Concurrency). An upstream
// error item, or a value that is not a V, has no key and keeps its place in the order.
//
// Everything OrderByKey says of key and of the options it meets holds here, except the order
// across keys: StopOnError stops at the first error item in upstream order, and Unordered,
// which contradicts it, is refused, as is OrderByKey given with it. With a Concurrency of 1,
// the order is the upstream's and key is not called. Resilience4j has no counterpart.
//
// It applies to Map, MapResults, Filter and FlatMap.
func OrderByKeyAndInput[V any, K comparable](key func(V) K) Option {
	return emissionOption("OrderByKeyAndInput", func(em *engine.Settings) error {
		return em.SetKeyAndInput(engine.KeyBy(key), key == nil)
	})
}

// StopOnError ends the subscription at the first error item the operator emits: a failed
// element (once every fallback has had its say), whose error is then a *StoppedError naming
// the element, or an error item of the upstream, forwarded unchanged. Calls still running
// are cancelled and the upstream is cancelled and no longer read. "First" is in input order by
// default and with OrderByKeyAndInput, in completion order with Unordered, and in the order
// of the items emitted with OrderByKey.
//
// Without it every per-emission operator goes on past a failed element, as stream.Map does.
// Give it before a consumer that stops reading at the first error item: ReactiveX ends an
// Observable there, and so do rxgo's operators and terminal methods under their default error
// strategy (rxgo.StopOnError, ToSlice, Reduce) and levee's Collect, so an operator that went
// on past it would make calls whose results nobody reads, blocked on its next send until the
// subscription's context ends.
//
// It applies to Map, MapResults, Filter and FlatMap.
func StopOnError() Option {
	return emissionOption("StopOnError", func(em *engine.Settings) error { em.StopOnError = true; return nil })
}

// ContinueOnError keeps the subscription going after an error item, as rxgo's
// ContinueOnError error strategy: a failed element is one error item among values, and an
// error item of the upstream is forwarded in its place. It is the default of every
// per-emission operator, as of stream.Map, and spelling it changes nothing. Given with
// StopOnError, it is refused.
//
// It applies to Map, MapResults, Filter and FlatMap.
//
// Deprecated: going on past an error item is the default; StopOnError asks for the opposite.
func ContinueOnError() Option {
	return emissionOption("ContinueOnError", func(em *engine.Settings) error { em.ContinueOnError = true; return nil })
}

// Buffer gives the operator's output channel a capacity of n items (default DefaultBuffer,
// 64), so that it runs up to n items ahead of a slow consumer; Buffer(0) makes it unbuffered,
// each item handed over to the consumer. (An
// rxgo.WithBufferedChannel given to Observe does the same for the outermost operator of a
// chain, whichever it is.) n must be in [0, MaxBuffer].
//
// It applies to Map, MapResults, Filter and FlatMap.
func Buffer(n int) Option {
	return Option{name: "Buffer", scope: perEmission, apply: func(s *settings) {
		s.check(s.em.SetBuffer(n))
	}}
}

// WithFallback answers a failed element with fn(ctx, in, err), as stream.WithFallback: in is
// the element and err the error the pipeline gave up with (after its retries and its own
// fallback, if any). It runs outermost. When fn answers, its value is emitted instead of an
// error item (MapResults marks it with Fallback true and Cause err); when fn returns an error
// or panics, the element's error is a *fallback.Error holding both fn's error (a
// *levee.PanicError after a panic) and err. fn is not called for an element whose call ended
// because the subscription was cancelled, nor for an item whose value is not of the input
// type (an *ItemTypeError).
//
// The type of fn must match the operator: func(context.Context, V, error) (R, error) for
// Map[V, R] and MapResults[V, R], with R bool for Filter and []R for FlatMap; the operator
// refuses any other. It applies to Map, MapResults, Filter and FlatMap. A nil fn is refused.
func WithFallback[V, R any](fn func(ctx context.Context, in V, err error) (R, error)) Option {
	return emissionOption("WithFallback", func(em *engine.Settings) error { return em.SetFallback(fn, fn == nil) })
}

// TimeBound names what a TimeLimiter bounds on a subscription; it is stream.TimeBound and
// its constants are the stream package's: the bounds combine with |, each bounded stretch
// may last the limiter's TimeoutDuration, and time spent waiting for a slow consumer does
// not count towards BoundFirstElement and BoundGap.
type TimeBound = stream.TimeBound

// The bounds a TimeLimiter can enforce (see stream.TimeBound).
const (
	BoundFirstElement = stream.BoundFirstElement // start of the subscription to its first item
	BoundGap          = stream.BoundGap          // end of one item's delivery to the next item or the end
	BoundStream       = stream.BoundStream       // the whole subscription, slow consumer included
	BoundEachElement  = stream.BoundEachElement  // Resilience4j's TimeLimiter on a Flux, the default
)

func validBounds(b TimeBound) bool {
	return b != 0 && b&^(BoundFirstElement|BoundGap|BoundStream) == 0
}

// TimeLimit chooses what Guard's TimeLimiter bounds (default BoundEachElement). It needs a
// Patterns.TimeLimiter, and b must name at least one bound.
//
// It applies to Guard.
func TimeLimit(b TimeBound) Option {
	return Option{name: "TimeLimit", scope: perSubscription, apply: func(s *settings) {
		if !validBounds(b) {
			s.invalid("TimeLimit must be a combination of BoundFirstElement, BoundGap and BoundStream, got %d", b)
			return
		}
		s.bounds = b
	}}
}

// Permits makes the subscription take n permissions of its RateLimiter instead of one, as
// Resilience4j's RateLimiterOperator with a number of permits: they are taken once, when the
// subscription (each attempt, under Guard) starts. n must be at least 1; a subscription that
// asks for more than the limiter's LimitForPeriod fails with an error matching
// ratelimiter.ErrInvalidPermits. Guard needs a Patterns.RateLimiter for it.
//
// It applies to RateLimiter and Guard.
func Permits(n int) Option {
	return Option{name: "Permits", scope: perRateLimiter | perSubscription, apply: func(s *settings) {
		if n < 1 {
			s.invalid("Permits must be >= 1, got %d", n)
			return
		}
		s.permits = n
	}}
}

// permitsOr1 returns the number of permissions Permits asked for, or one.
func (s *settings) permitsOr1() int { return max(s.permits, 1) }
