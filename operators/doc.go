// Package operators guards github.com/reactivex/rxgo/v2 (v2.5.0) Observables with levee's
// patterns. Its operators are functions from Observable to Observable (Operator) that make one
// guarded call per value item, or guard a whole subscription as one call, with the semantics
// of levee's stream package and without rxgo's goroutine leaks. Helpers convert between
// Observables and the stream package's channels.
//
// It is a module of its own because importing rxgo links testing, testify and a few other
// modules into every binary: users of levee's core do not pay for it.
//
// # Per emission
//
// Map, MapResults, Filter and FlatMap return an Operator that makes one guarded call per value
// item, through a *levee.Pipeline (any composition of the patterns and a fallback), and emits
// the values in input order:
//
//	price, err := operators.Map(pricing, quote, operators.Concurrency(4))
//	...
//	for it := range price(orders).Observe(rxgo.WithContext(ctx)) { ... }
//
// An element that fails once every fallback has had its say is, for Map, Filter and FlatMap,
// one error item among the values, and the subscription goes on past it, as stream.Map goes
// on past a failed Result: a failed element is the fate of one record, not of the stream, and
// one pipeline behaves the same over channels and over rxgo. StopOnError, one option away,
// ends the subscription there instead, with an error item whose error is a *StoppedError
// naming the element, as ReactiveX ends an Observable at an error; give it before rxgo
// operators and terminals that stop reading at the first error item (ToSlice, Reduce,
// levee's Collect: see below). MapResults emits a failed element as a value. Concurrency,
// Window, Unordered, StopOnError, Buffer, PauseWhileOpen, OrderByKey, OrderByKeyAndInput and
// WithFallback mean what they mean in the stream package, and agree as they do there
// (OrderByKey with Unordered is OrderByKey, a Window with Unordered a bound that always holds);
// each call goes through
// the pipeline without a closure per item. Error items of the upstream are forwarded in their
// place and are no call's failure. CommitWatermark keeps a commit watermark over the
// upstream's value items: acknowledge with Watermark.Ack(r.Index) after MapResults, and with
// Watermark.AckNext, once per item read from levee's operator in the order read, after Map,
// Filter and FlatMap.
//
// # rxgo operators after levee's
//
// With StopOnError, a per-emission operator's output follows the Rx grammar: values, then
// completion or a single error item. rxgo operators and terminal methods that read until the
// end or the first error item are then safe after it with their defaults: ToSlice, Reduce,
// Count, Last, Max, Min, the Sum and Average methods, Map, Filter, DoOnNext, DoOnError,
// ForEach, BufferWithCount, a range over Observe, and levee's Collect, ForEach and First; a
// range over Observe, and anything given rxgo.WithErrorStrategy(rxgo.ContinueOnError), is
// safe without it. Two kinds are not, unless the subscription is observed with a context
// that is cancelled once they are done (levee's operator then stops at once): rxgo operators
// that stop reading before the end without an error item (Take, TakeWhile, TakeUntil, First,
// FirstOrDefault, ElementAt, Contains, All, Find), and, without StopOnError, every rxgo
// operator under its default error strategy, which stops reading at the first error item
// while levee's goes on. Either
// leaves levee's operator blocked on its next send, holding its calls' permits, until that
// context ends.
//
// # Per subscription
//
// CircuitBreaker, Bulkhead, RateLimiter, TimeLimiter, Retry and Fallback guard a whole
// subscription as one call: permission when the subscription starts (a refusal is an error
// item, and the upstream is never observed); success when the upstream completes, failure at
// its first error item, which ends the subscription; when the consumer cancels, the
// permission released unrecorded if no item had come, a success if one had. Retry and Lazy take a Source, a function that builds the
// Observable inside the guarded execution, once per subscription or attempt: an error or a
// panic while building reaches the breaker, the retry and the fallback, and every retry
// subscribes to a fresh Observable. Guard composes them all in the default pipeline's order;
// it is stream.Subscribe for Observables.
//
// # Between channels and Observables
//
// FromSource, FromChan, FromResults and FromItems turn the stream package's sources and
// outputs into Observables that can be observed again; ToSource and ToChan go the other way.
// Collect, ForEach and First consume an Observable and return ctx.Err() when the context ends
// first. None of them loses an element, an error or a cancellation.
//
// # rxgo's pitfalls, and what this package does about each
//
//   - rxgo has no unsubscribe: a cancelled context is the only way to stop a subscription.
//     Every operator here observes its upstream under a context of its own, derived from the
//     one given to Observe and cancelled whenever the operator stops (completion, an error
//     that ends the subscription, StopOnError, a time limit, a retry starting over, the
//     consumer's cancellation), so the upstream's goroutines are told to end. rxgo's Take,
//     First and stop-on-error operators stop reading without telling their upstream, which
//     then leaks even when the output was drained.
//   - Many rxgo operators read the context given when they are built, not the one given to
//     Observe (FlatMap, Debounce, Buffer*, Window*, every Single, Retry, BackOffRetry,
//     Create, Start, Interval, Merge, ...). Here every Observable is rxgo.Defer-based and
//     reads the context of Observe; a Source receives the subscription's context, so rxgo
//     factories built in it with rxgo.WithContext(ctx) end with the subscription.
//   - Eager factories (Create, Start, Interval, Retry, BackOffRetry) start at construction and
//     leak when never observed; built in a Source they start only when subscribed to.
//   - Single-use Observables (Create, Start, FromChannel, Retry's output, eager observation)
//     give the same drained channel to a second observer, so rxgo's Retry silently completes
//     over them, and FlatMap or a Single observed twice crashes. Retry here builds a fresh
//     Observable for each attempt from its Source, and an operator that is handed the same
//     channel again after it emitted refuses it with ErrSingleUse instead of completing.
//   - Cancellation looks like completion in rxgo: the channel closes with no error, ToSlice
//     returns a nil error and ForEach calls its completed function. Collect, ForEach, First
//     and ToChan return ctx.Err(); the per-subscription operators tell a cancelled
//     subscription from a completed one and record neither as a success by mistake.
//   - rxgo's WithPool loses the order and keeps going after an error; Serialize deadlocks.
//     Concurrency here keeps the input order unless Unordered is asked for, and with
//     StopOnError the first error item ends the subscription promptly.
//   - A panic in a function given to rxgo kills the process. Guarded functions, Sources and
//     fallbacks here run under recover: a panic becomes a *levee.PanicError error item.
//   - rxgo's OnErrorResumeNext resubscribes to a failing fallback for ever; Fallback here
//     subscribes to the replacement once and ends with its error.
//   - A context deadline ends an rxgo stream silently; TimeLimiter ends it with a
//     *timelimiter.TimeoutError.
//
// What no operator can prevent: a consumer that stops reading without cancelling its context
// leaves the goroutines that feed it blocked on their next send for ever, as with any
// channel. Always observe with a context and cancel it:
//
//	ctx, cancel := context.WithCancel(ctx)
//	defer cancel() // ends every goroutine of the chain, even when the loop below returns early
//	for it := range obs.Observe(rxgo.WithContext(ctx)) { ... }
//
// rxgo operators placed above these ones need the same context at construction when they read
// it there (rxgo.WithContext(ctx) to FlatMap, Retry, Merge, ...), and rxgo's Merge, Concat,
// Reduce after an error, connectable Observables and FromEventSource leak even after a
// cancellation: prefer these operators and the stream package's helpers under early
// termination.
//
// # Differences from Resilience4j
//
// The per-subscription operators follow Resilience4j's reactor operators
// (CircuitBreakerOperator, BulkheadOperator, RateLimiterOperator, RetryOperator on a Flux,
// and the fallback decorator over Reactor's onErrorResume), with the differences of
// stream.Subscribe:
//
//   - the Observable is built inside the guarded execution, by a Source: an error or a panic
//     while building it reaches the breaker, the retry and the fallback, where Reactor skips
//     the fallback for a method that throws before returning its Flux;
//   - a panic in a guarded function, Source or fallback is an error item, never a crash;
//   - a TimeLimiter times the upstream only, not a slow consumer, and records one outcome per
//     subscription, where the Flux operator also publishes a SUCCESS per item;
//   - the rate limiter waits for its permission cancellably and hands a cancelled
//     reservation back, where the Flux operator delays the subscription by the reserved wait
//     and cannot give it back.
//
// As there: items are not offered to the breaker's RecordResultPredicate; with
// DrainPermissionsOnResult every value item and the upstream's error are offered to the rate
// limiter; the items of a failed attempt stay emitted when retry starts over.
package operators
