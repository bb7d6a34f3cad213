// Package async guards asynchronous calls with levee's patterns: futures, fan-out over many
// calls, hedged requests, and a worker-pool bulkhead (Resilience4j's ThreadPoolBulkhead).
//
// # Futures
//
// Go runs a call guarded by a *levee.Pipeline in a goroutine of its own and returns a *Future
// at once. The pipeline applies to that one call exactly as it would to a synchronous one: its
// breaker takes one decision, its bulkhead holds one permit while the call runs, its TimeLimiter
// cancels the call's context at the deadline (Resilience4j's cancelRunningFuture), its Retry
// retries the call, and its fallback answers the failure, which the future reports in its
// Outcome. The future completes exactly once, and only once the guarded execution has returned,
// so by then every permit is back.
//
//	quote := async.Go(ctx, pricing, func(ctx context.Context) (Price, error) {
//		return client.Price(ctx, isbn)
//	})
//	...
//	price, err := quote.Get(ctx)
//
// GoLazy takes a function that builds the call and runs it inside the guarded execution, so a
// panic or an error while building the call reaches the fallback, as with Resilience4j's
// CompletableFuture fallbacks, and unlike its Mono and Flux ones, which a throw before the Mono
// exists escapes.
//
// # Fan-out
//
// All and Map run many calls through one pipeline, so they share its breaker, bulkhead and rate
// limiter; MaxConcurrency paces them and FailFast stops at the first failure. FirstSuccess
// returns the first call to succeed (one of several replicas) and Hedge starts extra attempts of
// one call when it is slow. In each, the calls that are no longer needed are cancelled, which
// every pattern treats as the caller's cancellation: permits are released and nothing is
// recorded against the dependency. Each returns only once every call it started has returned,
// so a fan-out leaves no goroutine and no permit behind (a call that a TimeLimiter gave up on
// ends on its own, as the timelimiter package describes).
//
// A fallback's answer is marked in the results (Result.Outcome). FirstSuccess and Hedge prefer a
// live success to it: a fallback answer is returned only when no call succeeds.
//
// # Worker pool
//
// WorkerPool is Resilience4j's ThreadPoolBulkhead with goroutines for threads: core and maximum
// workers, a bounded queue, a keep-alive for the workers above the core size, admission as
// Java's ThreadPoolExecutor, a *WorkerPoolFullError matching bulkhead.ErrBulkheadFull when full,
// Resilience4j's events and metrics. Submit returns a *Future.
//
// # Cancellation
//
// Every call runs with a context derived from the caller's: cancelling it cancels every future,
// fan-out call and hedge it started. A future's own Cancel cancels just that one. A call that
// honours its context then returns promptly; one that ignores it keeps its goroutine until it
// returns, unless the pipeline holds a TimeLimiter, whose execution returns at once when its
// context ends.
//
// # How levee differs from Resilience4j, and why
//
//   - A future completes when its guarded call has returned, not when it is cancelled:
//     Resilience4j completes a cancelled CompletableFuture at once while the work may still hold
//     its permits. levee's Done means the work is over.
//   - A panic in the call, or in the code that builds it (GoLazy), is an error value
//     (*levee.PanicError) that the pipeline records and its fallback answers, never a crash of
//     the program from a goroutine nobody can recover.
//   - A WorkerPool task cancelled while queued leaves the queue at once; Java leaves a cancelled
//     task in the queue until a worker reaches it.
//   - WorkerPoolConfig's defaults adapt to each other (see its fields), so a configuration that
//     is valid on one machine is valid on every machine, whatever its CPU count.
//   - Hedging, fan-out and first-success are not in Resilience4j, whose futures compose with
//     CompletableFuture.allOf and anyOf: those neither cancel the losers nor release their
//     permits.
//
// # Cost
//
// A future needs a goroutine, a context and a place for its result: Go and Get allocate 6
// objects, Submit and Get 7, and each call of a fan-out 2 more than the fan-out itself, on top
// of what the pipeline's patterns cost (nothing on their success paths, except a TimeLimiter).
// Calls waiting for a MaxConcurrency slot or in a WorkerPool queue hold no goroutine.
package async
