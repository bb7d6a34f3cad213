// Package leveegrpc guards gRPC clients and servers with levee's patterns, as Resilience4j's
// Spring and Feign integrations guard HTTP calls.
//
// # Clients
//
// UnaryClientInterceptor runs each unary RPC through a *levee.Pipeline[struct{}]: gRPC writes
// the reply into the caller's message as usual, and the pipeline decides whether, when and how
// often the RPC is invoked. StreamClientInterceptor retries a stream until it commits, as
// gRPC's retry design (A6) does: a stream that could not be established, or that the server
// answered before its first response header, is opened again and sent again the messages
// sent so far (up to gRPC's per-RPC retry buffer); a circuit breaker records each stream's
// final status.
//
// KeyedClient (NewKeyedClient) keeps one set of patterns per target (TargetKey) or per method
// (MethodKey), built from a template on a key's first call and bounded in number as package
// keyed bounds its instances: a breaker open for one target refuses nothing to the others.
//
// gRPC's status codes are classified as HTTP's status codes are: UNAVAILABLE and
// RESOURCE_EXHAUSTED (503 and 429) are retried, waiting exactly the server's pushback when its
// trailers carry PushbackKey ("grpc-retry-pushback-ms"), as gRPC's own retry policy does;
// UNKNOWN, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, INTERNAL, UNAVAILABLE and DATA_LOSS (5xx)
// are failures for a circuit breaker; INVALID_ARGUMENT, NOT_FOUND and the other codes that
// refuse a request as asked (4xx) are never retried and are ignored by the breaker. RetryConfig
// and CircuitBreakerConfig set a retry.Config and a circuitbreaker.Config up that way;
// IsRetryable, IsFailure, RetryCodes, RecordCodes and PushbackInterval are the pieces, for
// configs of one's own, and Code the code they classify.
//
//	r := levee.Must(retry.New("inventory", leveegrpc.RetryConfig(retry.Config{MaxAttempts: 4})))
//	cb := levee.Must(circuitbreaker.New("inventory", leveegrpc.CircuitBreakerConfig(circuitbreaker.Config{})))
//	p := levee.DefaultPipeline[struct{}](levee.Patterns{Retry: r, CircuitBreaker: cb}, nil)
//	conn, err := grpc.NewClient(target, grpc.WithUnaryInterceptor(leveegrpc.UnaryClientInterceptor(p)), ...)
//
// The caller always receives an error that status.Code reads, with levee's error kept in its
// chain: an open breaker is UNAVAILABLE and matches circuitbreaker.ErrCallNotPermitted.
//
// # Servers
//
// NewServer builds a Server from a bulkhead, a rate limiter and a time limiter; its
// UnaryServerInterceptor and StreamServerInterceptor answer a full bulkhead and a refused rate
// limit with RESOURCE_EXHAUSTED and a pushback in the trailers (the rate limiter's real wait
// for its next permission), a handler past its time limit with DEADLINE_EXCEEDED, and a
// handler's panic with INTERNAL, releasing its bulkhead permit.
//
// # Differences from Resilience4j
//
// Resilience4j has no gRPC module; the classification above follows gRPC's retry design (A6)
// and its status-code guidance. The server's time limit is the handler's context deadline,
// waited for on the RPC's goroutine, not a timer on another thread: a gRPC stream cannot be
// used once its handler has returned.
package leveegrpc
