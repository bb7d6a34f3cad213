package stream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/levee-go/levee/internal/engine"
)

// Option configures one operator of this package. Options are built by the functions below
// and are not generic, except for the fallbacks, whose type arguments are inferred from the
// function given. Each option says which operators it applies to; an operator given an option
// that does not apply, or an invalid one, returns an error naming it before it starts anything.
// The zero Option is refused.
type Option struct {
	name  string
	scope scope
	apply func(*settings)
}

// scope is the set of operators an Option applies to.
type scope uint8

const (
	perEmission     scope = 1 << iota // Map, Filter, FlatMap, Batch
	perSubscription                   // Subscribe
)

// settings is what the options of one operator amount to.
type settings struct {
	em        engine.Settings // the per-emission options, shared with the operators module
	buffer    int
	fbSource  any // func(context.Context, error, func(T) error) error, checked by Subscribe
	bounds    TimeBound
	boundsSet bool
	permits   int   // 0: one
	err       error // the first invalid option
}

func (s *settings) invalid(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("stream: "+format, args...)
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
			return s, fmt.Errorf("stream: option %d of %s is the zero Option", i, op)
		}
		if o.scope&sc == 0 {
			return s, fmt.Errorf("stream: option %s does not apply to %s", o.name, op)
		}
		o.apply(&s)
		if s.err != nil {
			return s, s.err
		}
	}
	s.check(s.em.Check())
	return s, s.err
}

// Limits of the options that size what an operator allocates up front, so that a mistyped
// value is refused rather than exhausting memory.
const (
	MaxConcurrency = engine.MaxConcurrency // 1 << 16; Concurrency: workers
	MaxWindow      = engine.MaxWindow      // 1 << 16; Window: reorder slots
	MaxBuffer      = engine.MaxBuffer      // 1 << 20; Buffer: capacity of the output channel
)

// DefaultBuffer is the capacity of the output channel of Map, Filter, FlatMap and Batch when
// no Buffer is given. With a cheap call, an unbuffered output costs two goroutine switches per
// element, most of the operator's cost; with room for results, the operator and its consumer
// each handle many per switch. Measured side by side (the bench module's StreamBuffer, Map
// with no pattern and an input of 64, medians of ten interleaved runs on a shared 2-core
// machine): unbuffered 1,644 ns per element, 3.3 times a plain channel stage with an output of
// 64 (493 ns); Buffer(8) 782 ns, Buffer(32) 719 ns, Buffer(64) 629 ns (1.3 times the plain
// stage), Buffer(128) 617 ns. 64 is where the gain levels off, and a small bound on the
// memory held and on the run-ahead past a slow consumer.
const DefaultBuffer = engine.DefaultBuffer // 64

// Concurrency lets up to n calls run at the same time (default 1), each in one of n worker
// goroutines. Results still come out in input order unless Unordered is given: a result that
// is ready waits for the ones before it, and no more than the Window (default n) elements are
// taken from the input before their results are sent. n must be in [1, MaxConcurrency].
//
// A time limiter in the pipeline answers a call at its deadline, but a call that ignores its
// context keeps running after that (Go cannot stop a goroutine), and the worker goes on to the
// next element: n bounds the calls the stage waits for, not those a time limiter abandoned,
// and with OrderByKey an element of a key may start while an abandoned call of the same key still
// runs. Put a Bulkhead inside the TimeLimiter (the order of levee.DefaultPipeline and
// levee.Patterns) to bound the calls running at once, abandoned ones included; the output
// closes only once every abandoned call has returned.
//
// It applies to Map, Filter, FlatMap and Batch.
func Concurrency(n int) Option {
	return emissionOption("Concurrency", func(em *engine.Settings) error { return em.SetConcurrency(n) })
}

// Window sets the reorder window of ordered output to n elements (default: the Concurrency):
// no more than n elements, counted from the oldest whose result has not been sent yet, that
// one included, are taken from the input and either being called or finished and waiting for
// the ones before them. One slow element then stops new calls only once n-1 elements after it
// have been taken, not as soon as every worker has finished one: with Concurrency 8, a Window
// of 64 keeps the workers busy past a call eight times slower than the others. The window
// bounds the results held, and what the operator reads ahead of a slow consumer, to n (plus
// the output's Buffer).
//
// With OrderByKey, n bounds in the same way the elements taken and not yet sent, those
// waiting for an earlier element of their key included.
//
// With OrderByKeyAndInput, n bounds the elements taken and not yet sent, as for ordered
// output: a Result waits for the Results before it, of every key, within the window.
//
// n must be in [Concurrency, MaxWindow]. With Unordered, which holds no result back, the
// window is a bound that always holds: unordered output takes no more than Concurrency
// elements ahead of those sent, and Window with Unordered is accepted (and changes nothing).
//
// It applies to Map, Filter, FlatMap and Batch.
func Window(n int) Option {
	return emissionOption("Window", func(em *engine.Settings) error { return em.SetWindow(n) })
}

// PauseWhileOpen makes the operator wait out a refusal instead of answering it: when the
// pipeline refuses an element's call with a levee rejection (levee.IsRejection: an open
// breaker, a rate limiter out of permissions, a full bulkhead), whether or not a fallback of
// the pipeline answered it, the operator holds that element and retries it once the refusal
// may be over, rather than sending the fallback's answer or the rejection. While an element is
// held no other call starts (calls already running finish, and at most the Window of elements
// is read ahead), and its retry is the next call the operator makes: after an open breaker's
// wait, the held element is the HALF_OPEN probe. Nothing is skipped or reordered.
//
// When to retry is decided from the pipeline's patterns: at the end of an OPEN breaker's wait
// (circuitbreaker.CircuitBreaker.RemainingWaitInOpenState) or of a rate limiter's wait for its
// next permission (ratelimiter.Metrics.NanosToWait), whichever is later, or sooner when a
// breaker changes state or gives a permission back on an ignored error, or a bulkhead's call
// finishes (their events). A refusal with no such
// wait (a HALF_OPEN breaker whose probes are all out, FORCED_OPEN, a full bulkhead) is retried
// once at once, then on those events only. A retry refused again holds the element again. With
// Concurrency > 1, an element refused while another is held (its call had started before)
// first waits for that one to be let go, then tries again and is held in its turn if refused.
// A bulkhead permit given back unfinished (ReleasePermission, for a cancelled call) publishes
// no event: a hold waiting on a full bulkhead alone then lasts until another event, maxWait or
// ctx. A fallback of the pipeline that answered a refused try has been called; its answer is
// discarded. Resilience4j has no counterpart: this is a Kafka consumer's pause and resume,
// driven by the patterns.
//
// Permits that come free together (a bulkhead's calls ending, a limiter's next cycle) run
// every held element they can take, not one: a held element is let go as soon as its retry is
// admitted, and the elements waiting behind it are tried at once. The Window still bounds what
// is taken: in input order (the default), a held element keeps the Results after it from being
// sent, so with Concurrency(3) over a bulkhead of 2 (no wait) and the default Window of 3, four
// calls of 100ms start at 0, 0, 100ms, 100ms and end at 200ms only when the element refused
// is the last of the three taken; when it is the first, the fourth is taken only once it has
// been sent (0, 0, 100ms, 200ms, ending at 300ms). Which of the calls that start together a
// full bulkhead refuses is decided by which reaches it first. Give a Window above the
// Concurrency (Window(4) there), or Unordered, for freed permits to take new elements too.
//
// maxWait bounds the time one element is held (0: no bound): past it, the last refusal stands,
// answered by the fallbacks as without this option, and the operator goes on with the next
// element. Holding ends when ctx is done, as any wait of the operator. The time an element was
// held is its Result's Paused.
//
// A pipeline with no breaker, rate limiter or bulkhead (a nil one included) refuses nothing,
// so the option holds nothing there: a rejection the function itself returns is its error.
//
// maxWait must be >= 0. It applies to Map, Filter, FlatMap and Batch.
func PauseWhileOpen(maxWait time.Duration) Option {
	return emissionOption("PauseWhileOpen", func(em *engine.Settings) error { return em.SetPauseWhileOpen(maxWait) })
}

// Watermark is the commit watermark of one operator, given to it with CommitWatermark: Load
// returns the number of input elements, from the first (Result.Index 0), whose Results have
// all been sent and acknowledged with Ack, so that a consumer of a log or a queue can commit
// that offset, or acknowledge the entries below it, without losing one. See CommitWatermark.
// Make one with NewWatermark; its methods are safe for concurrent use. A zero Watermark is
// refused by CommitWatermark, and its methods do nothing (Load returns 0).
type Watermark struct {
	w       *engine.Watermark
	invalid error // why CommitWatermark refuses it, for the Watermark of a PositionWatermark that has none
}

// NewWatermark returns a Watermark at 0, to give to one operator with CommitWatermark.
func NewWatermark() *Watermark { return &Watermark{w: engine.NewWatermark()} }

// Load returns the watermark: the number of input elements from the first (index 0) that are
// all done (every Result sent and acknowledged), so that the element of index Load() is the
// first not done: the offset to commit. It starts at 0, never goes down, and reaches the
// number of input elements once each has yielded its Results and each has been acknowledged.
// An element cut by a cancellation never becomes done, so Load stays below it. The operator
// records an element's last Result as sent just after the send returns, so Load may count it a
// moment after the consumer's Ack: it lags, never leads.
func (w *Watermark) Load() int {
	if w == nil || w.w == nil {
		return 0
	}
	return w.w.Load()
}

// Ack acknowledges one Result, received and handled by the consumer: call it once per Result
// taken from the output, with the Result's Index, in any order. An index below the watermark,
// or one with no Result left to acknowledge, is ignored. Use Ack or AckNext, not both, on one
// Watermark.
func (w *Watermark) Ack(index int) {
	if w == nil || w.w == nil {
		return
	}
	w.w.Ack(index)
}

// AckNext acknowledges the oldest Result sent on the output and not yet acknowledged: call it
// once per Result taken from the output, in the order received, where the Index is not at
// hand. Since a channel hands its items over in the order they were sent, the k-th call
// acknowledges the k-th Result received. A call with nothing to acknowledge is ignored. Use
// Ack or AckNext, not both, on one Watermark.
func (w *Watermark) AckNext() {
	if w == nil || w.w == nil {
		return
	}
	w.w.AckNext()
}

// ErrWatermarkInUse is returned, wrapped, by an operator given a Watermark that another
// operator already has: each operator needs its own.
var ErrWatermarkInUse = engine.ErrWatermarkInUse

// CommitWatermark makes the operator keep w, a commit watermark over its input: w.Load() is
// the number of elements, counted from the input's first, every one of which is done, so that
// a consumer may commit it as the offset to resume from (Kafka's committed offset, a NATS or
// Redis Streams acknowledgement of every entry below it) and be sure that each element below
// it has been handled: at-least-once delivery.
//
// Done means delivered to the consumer and acknowledged by it: the operator has sent every
// Result the element yields, and the consumer has called w.Ack(r.Index) for each. An element
// Filter drops yields none and is done once dropped; a FlatMap element is done once each of
// its values has been acknowledged, and one whose slice is empty once the call returned. For
// Batch the elements counted are the batches (a Result's Index), not the input's elements. Sent alone is not enough: a Result in the output's Buffer, or
// taken by a consumer that fails before handling it, has not been delivered, and the channel
// cannot tell the operator when the consumer has received one; the acknowledgement can. So
// the watermark never passes an element whose Result is not out and handled, whatever the
// Buffer, Concurrency, Window or Unordered. Results are acknowledged in any order: with
// Unordered, the watermark moves once the oldest pending element is done, past every later
// one that is done too.
//
// An element whose call was cut when the operator stopped (ctx done, StopOnError) yields no
// Result and never becomes done: the watermark stays below it, so a restart from the committed
// offset reads it again. A failed element's Result (its Err set, StopOnError's last one
// included) counts as delivered once acknowledged; a consumer that must retry it does not
// acknowledge it. w must come from NewWatermark and serve this operator only; another
// operator given it returns ErrWatermarkInUse. Resilience4j has no counterpart.
//
// It applies to Map, Filter, FlatMap and Batch.
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

// Unordered sends each result as soon as its call ends, instead of in input order. The
// Index of each Result still gives the position of its element in the input. With a
// Concurrency of 1 the order is the input's either way. With OrderByKey it is accepted and
// changes nothing: OrderByKey already sends the Results of different keys as their calls end,
// and keeps each key's order. With OrderByKeyAndInput, which sends in input order, it is
// refused.
//
// It applies to Map, Filter, FlatMap and Batch.
func Unordered() Option {
	return emissionOption("Unordered", func(em *engine.Settings) error { em.Unordered = true; return nil })
}

// OrderByKey orders the output by key instead of by input, as a Kafka consumer orders the
// records of one partition (Confluent's parallel consumer with its KEY ordering): key(v) is
// the key of element v, and the elements of one key are called one at a time, in input order,
// and their Results sent in that order, while the elements of different keys are called in
// parallel, up to Concurrency at once. A Result is sent as soon as its call has ended (the
// Results of the earlier elements of its key are out by then), so the output is ordered by
// key only: a Result of one key may overtake a Result of another, and Index still tells each
// element's position in the input.
//
// An element whose key has a call running waits for it without holding a worker: the worker
// that called its key's previous element calls it next, and the other workers go on with other
// keys. The Window (default: the Concurrency) bounds the elements taken from the input and not
// yet sent, waiting ones included, so one slow key holds back the others only once the window
// is full of its elements and of elements of keys waiting behind theirs: with a Window of 64,
// a call that lasts a minute stops the operator from taking new elements only once 63 after
// it have been taken. Memory is bounded by the number of keys in flight, at most the Window: a
// key none of whose elements is taken and unsent has no entry, so a stream of millions of keys
// holds only those in flight.
//
// CommitWatermark counts by input index, whatever the order of the Results, so it never passes
// an element of a slow key, however far the other keys have gone. With PauseWhileOpen, a held
// element stops every call, as without this option. StopOnError stops at the first failed
// element sent. With a Concurrency of 1, the order is the input's and key is not called.
//
// key is called once per element, on one goroutine, in input order; it must be cheap and not
// block, since the elements after one wait for it. A panic in key, or a key that cannot be
// compared (a K of interface type holding a slice), fails the element with a *levee.PanicError
// in its Result's Err, without a call and without WithFallback. Keys are compared with ==,
// so an element whose key is not equal to itself (NaN) is ordered with no other.
// The type of key must match the operator's element: func(V) K for Map[V, R], Filter[V] and
// FlatMap[V, R], func([]V) K for Batch (whose element is the batch); the operator refuses any
// other with an error, and a nil key. OrderByKey with Unordered is OrderByKey (unordered
// across keys, ordered within one); to keep the input order across keys as well, give
// OrderByKeyAndInput instead (not both). Resilience4j has no counterpart.
//
// It applies to Map, Filter, FlatMap and Batch.
func OrderByKey[V any, K comparable](key func(V) K) Option {
	return emissionOption("OrderByKey", func(em *engine.Settings) error { return em.SetKey(engine.KeyBy(key), key == nil) })
}

// OrderByKeyAndInput calls the elements of one key one at a time, in input order, as
// OrderByKey does, and sends every Result in input order, as without OrderByKey: the calls
// of one key never overlap (an element waits for its key's previous call to end, without
// holding a worker), the calls of different keys run in parallel, up to Concurrency at once,
// and the output is the input's order. A Result whose call has ended waits for the Results
// before it, of every key, within the Window (default: the Concurrency), which bounds the
// elements taken from the input and not yet sent, as for ordered output. It is for a consumer
// whose calls on one entity must not overlap (two updates of one account) but that commits or
// hands on its output in the input's order; OrderByKey, which lets other keys pass a slow one,
// is the choice when each key's order is all that matters.
//
// Everything OrderByKey says of key, of a failed key and of the options it meets holds here,
// except the order across keys: StopOnError stops at the first failed element in input order,
// and Unordered, which contradicts the input order, is refused, as is OrderByKey given with
// it. With a Concurrency of 1, the order is the input's and key is not called. Resilience4j and
// Confluent's parallel consumer have no counterpart.
//
// It applies to Map, Filter, FlatMap and Batch.
func OrderByKeyAndInput[V any, K comparable](key func(V) K) Option {
	return emissionOption("OrderByKeyAndInput", func(em *engine.Settings) error {
		return em.SetKeyAndInput(engine.KeyBy(key), key == nil)
	})
}

// StopOnError ends the stream at the first failed element (a Result whose Err is not nil
// once every fallback has had its say): that Result is the last one sent, its Err a
// *StoppedError naming the element, calls still running are cancelled and no further element
// is read from the input. "First" is in input order by default and with OrderByKeyAndInput,
// in completion order with Unordered, and in the order of the Results sent with OrderByKey. By default a failed element is one Result among others and the stream goes on.
//
// It applies to Map, Filter, FlatMap and Batch.
func StopOnError() Option {
	return emissionOption("StopOnError", func(em *engine.Settings) error { em.StopOnError = true; return nil })
}

// Buffer gives the output channel a capacity of n results or items: by default
// DefaultBuffer (64) for Map, Filter, FlatMap and Batch, 0 (unbuffered) for Subscribe. A
// buffer lets the operator run up to n results ahead of a slow consumer, so that the operator
// and its consumer each handle many results per goroutine switch instead of one; it is the
// only buffering between the operator and its consumer, so backpressure still reaches the
// calls once it is full. Results already in the buffer when the consumer cancels stay
// readable until the channel is drained, and count as sent. Buffer(0) makes every send a
// hand-over to the consumer: a result is sent only once the consumer takes it. n must be in
// [0, MaxBuffer].
//
// It applies to every operator.
func Buffer(n int) Option {
	return Option{name: "Buffer", scope: perEmission | perSubscription, apply: func(s *settings) {
		if err := s.em.SetBuffer(n); err != nil {
			s.check(err)
			return
		}
		s.buffer = n
	}}
}

// WithFallback answers a failed element with fn(ctx, in, err): in is the element and err the
// error the pipeline gave up with (after its retries and its own fallback, if any). It runs
// outermost, so it sees every failure the pipeline returns, rejections included. When fn
// answers, the Result carries its value with Fallback true and Cause err. When fn returns an
// error or panics, the Result's Err is a *fallback.Error holding both fn's error (a
// *levee.PanicError after a panic) and err. fn is not called for an element whose call ended
// because the operator's context was cancelled.
//
// The type of fn must match the operator: func(context.Context, V, error) (R, error) for
// Map[V, R] and FlatMap (R being the slice the call returns), with R bool for Filter and V a
// slice of elements for Batch; the operator refuses any other with an error. It applies to
// Map, Filter, FlatMap and Batch. A nil fn is refused.
func WithFallback[V, R any](fn func(ctx context.Context, in V, err error) (R, error)) Option {
	return emissionOption("WithFallback", func(em *engine.Settings) error { return em.SetFallback(fn, fn == nil) })
}

// Permits makes each attempt of the subscription take n permissions of its RateLimiter instead
// of one, as Resilience4j's RateLimiterOperator with a number of permits: they are taken once,
// when the attempt starts, whatever the number of elements. n must be at least 1; an attempt
// that asks for more than the limiter's LimitForPeriod fails with an error matching
// ratelimiter.ErrInvalidPermits, without calling the Source; the breaker's permission goes
// back unrecorded, since the dependency was not called. It needs a Patterns.RateLimiter.
//
// It applies to Subscribe.
func Permits(n int) Option {
	return Option{name: "Permits", scope: perSubscription, apply: func(s *settings) {
		if n < 1 {
			s.invalid("Permits must be >= 1, got %d", n)
			return
		}
		s.permits = n
	}}
}
