// Package stream guards streams carried by Go channels with levee's patterns, in two ways:
// per element, where each element read from an input channel is one guarded call whose
// Result is sent on an output channel, and per subscription, where a whole stream, produced
// by a function, is one guarded call whose elements are sent on an output channel.
//
// # Per element
//
// Map, Filter, FlatMap and Batch read elements from a channel and make one call per element
// (per batch for Batch) through a *levee.Pipeline, so that one bad element is one failed
// Result, not a dead stream:
//
//	results, err := stream.Map(ctx, orders, pricing, priceOrder, stream.Concurrency(4))
//	for r := range results {
//		// r.In is the order, r.Value its price, r.Err the failure, r.Fallback a cached answer
//	}
//
// Every input element yields exactly one Result (Filter, FlatMap and Batch say how they
// differ), in input order unless Unordered or OrderByKey is given, or the stream ends early:
// with StopOnError, after a last Result whose *StoppedError names the element that stopped it;
// when ctx is done, by closing. The stream keeps going after a failed element unless asked to
// stop, here and in the operators module's Map, Filter and FlatMap alike: a failed element is
// the fate of one record (a poison message, a refused call), and ending the stream there would
// leave every record behind it unprocessed, so one pipeline behaves the same over channels and
// over rxgo. StopOnError is the one option that ends it at the first failure. Concurrency n bounds the calls in flight to n and the
// operator's goroutines to n + 2; Window w (n by default) bounds the elements taken from the
// input and not yet sent, so one slow element holds up the others only once w-1 after it are
// taken; the output's Buffer (DefaultBuffer, 64, by default) bounds the results sent and not
// yet read. A slow consumer therefore slows the calls and nothing buffers without bound. With
// Concurrency 1 and a pipeline without TimeLimiter, an element costs no allocation and, with
// the default Buffer, about what a plain channel stage with a buffered output costs: each
// channel operation is tried without blocking first, and selects on the context only when it
// would block; an unbuffered output (Buffer(0)) costs two goroutine switches per element.
//
// By default an element whose call a pattern refuses (an open breaker, a rate limiter or a
// full bulkhead) is answered at once by the fallbacks, so a backlog read during an outage
// drains into fallback answers. A consumer of a log or a queue that would rather wait for the
// dependency gives PauseWhileOpen: the refused element is held, no other call starts, and it
// is retried when the refusal may be over (after an open breaker's wait it is the HALF_OPEN
// probe); Result.Paused tells how long it waited.
//
// To commit offsets, give CommitWatermark a Watermark and acknowledge each Result once handled
// (Watermark.Ack with its Index, or Watermark.AckNext in the order received): Watermark.Load is
// then the number of input elements from the first whose Results have all been received and
// acknowledged, also with Unordered, and never passes an element whose Result sits in the
// output's buffer or was cut by a cancellation.
//
// A consumer of a partitioned log that needs only each key's order gives OrderByKey: the
// elements of one key are called one at a time and their Results sent in input order, while
// other keys go on in parallel, past a slow key, within the Window; the watermark still counts
// by input index. OrderByKeyAndInput keeps the calls of one key from overlapping in the same
// way and sends every Result in input order, within the Window. Options that agree are
// accepted together: OrderByKey with Unordered is OrderByKey, and a Window with Unordered is a
// bound that unordered output always keeps.
//
// # Per subscription
//
// Subscribe runs a lazy Source — a function that produces the stream, called once per
// attempt — under levee.Patterns as one call: permission is taken when an attempt starts,
// success is recorded when it ends cleanly and failure when it ends with an error; when the
// consumer cancels, the breaker permission is released unrecorded if nothing was emitted and
// counts as a success otherwise. Retry starts the stream over by calling the Source again; a
// fallback source replaces a stream that failed for good; a TimeLimiter bounds the time to
// the first element and between elements (or the whole stream). FromChan adapts a
// func(ctx) (<-chan T, error) source.
//
// # Cancellation and leaks
//
// Every goroutine an operator starts ends when its input is closed (Subscribe: its Source
// returns) or when the consumer's context is done, and calls in flight at that moment are
// cancelled, releasing their bulkhead and half-open permits and their rate-limiter
// reservations without being recorded as failures. Once the context is done an operator
// sends nothing more, even to a consumer still reading (results a Buffer already holds stay
// readable). Once an output channel of Map, Filter, FlatMap or Batch is closed, the
// operator's goroutines have ended or are ending and every call it made has returned, calls a
// TimeLimiter of the pipeline gave up on included: the caller has its Result (a timeout) at the
// deadline, and the output stays open until the abandoned call returns too, so that a client
// closed right after the stream ends is no longer in use. A call that ignores its context
// therefore holds the output open as long as it runs. Subscribe's output likewise closes only once every Source it called has returned.
//
// One leak cannot be prevented: a consumer that stops reading without cancelling the
// context leaves the operator blocked on its next send for ever, as with any channel. Stop
// reading only after cancelling, or read to the end:
//
//	ctx, cancel := context.WithCancel(ctx)
//	defer cancel() // ends the operator even when the loop below returns early
//
// Likewise the goroutine feeding an operator's input should select on the same context,
// since an operator that stops early (StopOnError, cancellation) stops reading its input.
//
// # Differences from Resilience4j
//
// The per-element operators have no counterpart there: Resilience4j decorates a Flux as a
// whole. Subscribe follows its reactive operators (CircuitBreakerOperator, RetryOperator and
// the others on a Flux), with these differences:
//
//   - The source is built inside the guarded execution: an error returned or a panic raised
//     while building the stream reaches retry and the fallback. In Reactor, a method that
//     throws before returning its Mono or Flux skips the fallback.
//   - A panic in a guarded function becomes a *levee.PanicError result, never a crash.
//   - Cancellation is never reported as completion: a cancelled stream just closes, and the
//     consumer tells it by ctx.Err(); a stream that failed always ends with an item or
//     result carrying the error.
//   - A TimeLimiter on a subscription bounds the Source's own time: time spent waiting for a
//     slow consumer does not count towards the first-element and gap bounds, so backpressure
//     is never taken for a slow dependency. It records one outcome per attempt, where the
//     Flux operator publishes a SUCCESS per element as well.
//   - The rate limiter waits for its permission, and a cancelled wait hands the reservation
//     back; the Flux operator delays the subscription by the reservation and cannot give it
//     back.
//
// As there: a cancelled subscription that had emitted counts as a success, and one that had
// not is released unrecorded; retry matches RetryOnResultPredicate against each element
// before delivering it, and the elements of a failed attempt stay delivered; the breaker does
// not apply RecordResultPredicate to elements; with DrainPermissionsOnResult every element and
// the final error are offered to the rate limiter.
package stream
