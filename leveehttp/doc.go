// Package leveehttp puts levee's patterns at both ends of an HTTP call, with the standard
// library only.
//
// On the client, a Transport is an http.RoundTripper that sends each request through a
// levee.Pipeline[*http.Response]: each attempt is one round trip of the next RoundTripper. It
// maps HTTP onto the patterns as failsafe-go's failsafehttp and Polly's HTTP resilience
// handler do, and as Resilience4j users write by hand around Feign or Retrofit:
//
//   - 5xx, 429 and transport errors are failures (Config.Failure changes which statuses);
//     other 4xx answers are client errors, ignored by a breaker built with
//     CircuitBreakerConfig and never retried;
//   - the body of every failed attempt is read (at most Config.MaxBodyBuffer bytes) and closed,
//     so no attempt holds a connection; the caller still gets the last one, buffered;
//   - a request is sent again only when it can be: its body replayed with GetBody, and its
//     method idempotent or the request carrying an idempotency key (set by the caller, or
//     generated once per request with Config.GenerateIdempotencyKey), the same on every
//     attempt;
//   - Retry-After (seconds or an HTTP date) on a 429 or 503 delays the next attempt, capped at
//     Config.MaxRetryAfter; when that is past the request's deadline the call fails at once
//     with a *RetryAfterError; OpenOnRetryAfter opens a breaker until then;
//   - the caller's deadline is kept exactly: a retry never sleeps past it, nor starts an
//     attempt that cannot finish before it (retry.Config.IgnoreCallerDeadline), and hands
//     back the last real answer instead; the caller's own cancellation always comes back as
//     that cancellation, never as an earlier 503;
//   - a request that cannot be sent again and whose attempt failed without a response ends
//     with a *NotReplayableError saying why (ErrNotReplayable);
//   - every attempt of a pipeline holding a Retry carries its attempt number, the first
//     included (X-Envoy-Attempt-Count: 1, 2, 3, as Envoy sends it); Middleware puts it in the
//     request's context, so that retry.Config.NoRetryOfRetries leaves the retrying of a
//     retrying caller's requests to that caller: retries happen at one layer, the outermost,
//     instead of multiplying across services (3 attempts end to end, not 3 × 3).
//
// The client in five lines:
//
//	cb := levee.Must(circuitbreaker.New("pricing", leveehttp.CircuitBreakerConfig(circuitbreaker.Config{})))
//	rt := levee.Must(retry.New("pricing", leveehttp.RetryConfig(retry.Config{MaxAttempts: 3, WaitDuration: 100 * time.Millisecond})))
//	p := levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: rt, CircuitBreaker: cb}, nil)
//	client := &http.Client{Transport: levee.Must(leveehttp.NewTransport(nil, p, leveehttp.Config{}))}
//	resp, err := client.Get("https://pricing.internal/quote")
//
// A status the pipeline gave up on comes back as the response it was (the last 503), not as an
// error: Go's HTTP clients expect a response for every HTTP status and an error only when there
// is none. Inside the pipeline it is a *StatusError, which retries, breakers and fallbacks
// classify and answer like any error.
//
// One exception: when a breaker opens in the middle of a retry (the 5xx answers of the first
// attempts opened it, and the next attempt is refused), the caller gets the rejection
// (circuitbreaker.ErrCallNotPermitted, with a nil response), not the last 5xx, as Resilience4j's
// Retry ends on CallNotPermittedException. The same holds for a rate limiter's or a bulkhead's
// refusal of a later attempt: the pipeline ended on the rejection. A fallback on
// circuitbreaker.ErrCallNotPermitted answers both cases, the breaker open from the start and
// opened mid-retry.
//
// One client calling many hosts keeps one set of patterns per host with KeyedTransport
// (NewKeyedTransport): built from a template on a host's first request, bounded in number as
// package keyed bounds its instances, so that a breaker open for one host refuses nothing to
// the others, as .NET's SelectPipelineByAuthority. KeyedConfig.Key keys by anything else of
// the request.
//
// On the server, Middleware guards a handler with a rate limiter (429) and a bulkhead (503),
// each answering with a Retry-After, a per-request time limit (503 at the limit, as
// http.TimeoutHandler), and recovers a panic into
// a 500 without losing the bulkhead's permit.
//
// # Differences from Resilience4j
//
// Resilience4j has no HTTP adapter of its own; its Feign and Retrofit decorators leave the
// mapping of statuses to failures and of Retry-After to waits to the user. This package makes
// the choices above, which follow RFC 9110 (idempotent methods, Retry-After) and the HTTP
// adapters of failsafe-go and Polly.
package leveehttp
