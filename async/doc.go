// Package async runs calls guarded by a levee pipeline on goroutines of their own: one call as
// a *Future, many calls as a fan-out (All, Map, FirstSuccess), one slow call hedged with extra
// attempts (Hedge), and tasks on a bounded set of worker goroutines with a queue (WorkerPool, a
// bulkhead that never blocks the submitter).
//
// # Futures
//
// Go runs a call guarded by a *levee.Pipeline in a goroutine of its own and returns a *Future
// at once. The pipeline applies to that one call exactly as it would to a synchronous one: its
// breaker takes one decision, its bulkhead holds one permit while the call runs, its TimeLimiter
// cancels the call's context at the deadline, its Retry retries the call, and its fallback
// answers the failure, which the future reports in its Outcome. The future completes exactly
// once, and only once the guarded execution has returned, so by then every permit is back,
// except those held inside a TimeLimiter by a call it gave up on (see Future);
// timelimiter.TrackCalls waits for those calls.
//
//	quote := async.Go(ctx, pricing, func(ctx context.Context) (Price, error) {
//		return client.Price(ctx, isbn)
//	})
//	...
//	price, err := quote.Get(ctx)
//
// GoLazy takes a function that builds the call and runs it inside the guarded execution, so a
// panic or an error while building the call reaches the fallback.
//
// # Fan-out
//
// All and Map run many calls through one pipeline, so they share its breaker, bulkhead and rate
// limiter; MaxConcurrency paces them and FailFast stops at the first failure. FirstSuccess
// returns the first call to succeed (one of several replicas) and Hedge starts extra attempts of
// one call when it is slow. In each, the calls that are no longer needed are cancelled, which
// every pattern treats as the caller's cancellation: permits are released and nothing is
// recorded against the dependency. Each returns only once every call it started has returned,
// so a fan-out leaves no goroutine and no permit behind, except a call that a TimeLimiter
// gave up on: it ends on its own, holding the permits taken inside the limiter until then, and
// timelimiter.TrackCalls waits for it.
//
// A fallback's answer is marked in the results (Result.Outcome). FirstSuccess and Hedge prefer a
// live success to it: a fallback answer is returned only when no call succeeds.
//
// # Worker pool
//
// A WorkerPool runs the tasks submitted to it on at most MaxThreadPoolSize worker goroutines:
// core and maximum workers, a bounded queue, a keep-alive for the workers above the core size,
// admission as Java's ThreadPoolExecutor, and a *WorkerPoolFullError matching
// bulkhead.ErrBulkheadFull, at once, when it is full. Submit returns a *Future; a refusal is a
// failure of the call that the pipeline's fallback answers, and its future is already
// completed, with that answer or with the refusal. Its events and metrics are those of a
// bulkhead.
//
// # Cancellation
//
// Every call runs with a context derived from the caller's: cancelling it cancels every future,
// fan-out call and hedge it started. A future's own Cancel cancels just that one. A call that
// honours its context then returns promptly; one that ignores it keeps its goroutine until it
// returns, unless the pipeline holds a TimeLimiter, whose execution returns at once when its
// context ends.
//
// # Cost
//
// A future needs a goroutine, a context and a place for its result: Go and Get allocate 6
// objects, Submit and Get 7, and each call of a fan-out 2 more than the fan-out itself, on top
// of what the pipeline's patterns cost (nothing on their success paths, except a TimeLimiter).
// Calls waiting for a MaxConcurrency slot or in a WorkerPool queue hold no goroutine.
//
// # Logging
//
// WorkerPoolConfig.Logger, a *slog.Logger, is nil by default: nothing is logged and nothing
// is subscribed. Set, it is one more event consumer, attached by NewWorkerPool, that checks
// Logger.Enabled before building a record and logs each refusal of a full pool at Debug, as a
// semaphore bulkhead does and with the keys every levee pattern uses:
//
//	pool, err := async.NewWorkerPool("payment", async.WorkerPoolConfig{MaxThreadPoolSize: 4, Logger: logger})
//
//	level=DEBUG msg="bulkhead call rejected" pattern=bulkhead name=payment event=CALL_REJECTED
//
// A task's CALL_PERMITTED and CALL_FINISHED are not logged. Records are logged with
// context.Background().
//
// # Differences from Resilience4j
//
// Futures stand for Resilience4j's decorated CompletionStage suppliers, and a WorkerPool for
// its ThreadPoolBulkhead, with goroutines for threads.
//
//   - A future completes when its guarded call has returned, not when it is cancelled:
//     Resilience4j completes a cancelled CompletableFuture at once while the work may still hold
//     its permits. Done means the work is over.
//   - A panic in the call, or in the code that builds it (GoLazy), is an error value
//     (*levee.PanicError) that the pipeline records and its fallback answers, never a crash of
//     the program from a goroutine nobody can recover. An exception thrown while building the
//     call reaches the fallback as for a CompletableFuture, not as for a Mono or a Flux, which
//     it escapes.
//   - A WorkerPool's refusal reaches the fallback of the task's pipeline, as a semaphore
//     bulkhead's does: Resilience4j's ThreadPoolBulkhead threw it past the fallback (its
//     issue #596).
//   - A WorkerPool task cancelled while queued leaves the queue at once; Java leaves a cancelled
//     task in the queue until a worker reaches it.
//   - WorkerPoolConfig's defaults adapt to each other (see its fields), so a configuration that
//     is valid on one machine is valid on every machine, whatever its CPU count.
//   - Hedging, fan-out and first-success are not in Resilience4j, whose futures compose with
//     CompletableFuture.allOf and anyOf: those neither cancel the losers nor release their
//     permits.
package async
