package retry

import "context"

type incomingAttemptKey struct{}

// WithIncomingAttempt returns a copy of ctx carrying attempt, the number of the attempt (1 for
// the first, 2 for the first retry, ...) by which the caller of the request being served sent
// it: what a server reads from its caller, as Envoy's x-envoy-attempt-count header or gRPC's
// grpc-previous-rpc-attempts metadata (plus one) say. A caller sends the number only when it
// retries (leveehttp's Transport and leveegrpc's client interceptors send it on every attempt
// of a pipeline holding a Retry, the first included, as Envoy does), so a number in ctx also
// says that the caller retries (CallerRetries). leveehttp's Middleware and leveegrpc's server
// interceptors call it for every request that carries the number. A value below 1 is stored as
// unknown. A nil ctx means context.Background().
func WithIncomingAttempt(ctx context.Context, attempt int) context.Context {
	if attempt < 1 {
		attempt = 0
	}
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, incomingAttemptKey{}, attempt)
}

// IncomingAttempt returns the attempt number WithIncomingAttempt put in ctx: 1 for a request
// its caller sent for the first time, more for a retry, and 0 when unknown. Any number above 0
// means that the caller retries the request itself (see CallerRetries): a Retry with
// Config.NoRetryOfRetries then makes one attempt, whatever the number.
func IncomingAttempt(ctx context.Context) int {
	if ctx == nil {
		return 0
	}
	n, _ := ctx.Value(incomingAttemptKey{}).(int)
	return n
}

// CallerRetries reports whether the request served under ctx comes from a caller that retries
// it: IncomingAttempt(ctx) > 0, any attempt of it, the first included. A Retry with
// Config.NoRetryOfRetries makes one attempt exactly then, so that retries happen at one layer
// only, the outermost.
func CallerRetries(ctx context.Context) bool { return IncomingAttempt(ctx) > 0 }
