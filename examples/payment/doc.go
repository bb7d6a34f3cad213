// Package payment is the dependency levee's examples run against: a real HTTP payment and
// pricing gateway listening on the loopback interface, and a client for it.
//
// The examples (examples/gateway, examples/orders, examples/fanout and the rxgo example of the
// operators module) show what the resilience patterns do to the traffic a dependency really
// receives, so the dependency is not a function that returns canned errors: it is a
// [net/http] server on 127.0.0.1 that counts the requests reaching its handlers, the requests in
// flight and their high-water mark, and the requests whose context ended before it answered.
// A time limiter that cancels an attempt, a bulkhead that keeps calls out, a breaker that stops
// calling: each shows up in these counters.
//
// # Server
//
// [Start] listens on a free port of 127.0.0.1; [Gateway.Close] stops it and waits for every
// goroutine it started. The gateway's behaviour is set at any time, from any goroutine, with
// [Gateway.SetMode]:
//
//   - [ModeOK] answers 200 at once;
//   - [ModeFail] answers 503 Service Unavailable at once;
//   - [ModeSlow] answers 200 after [Gateway.SetLatency], unless the request's context ends first;
//   - [ModeHang] never answers: the request waits until its context ends.
//
// Whatever the mode, an order (or SKU) starting with "BAD" is refused with 422 Unprocessable
// Entity at once, as a real gateway validates its input before doing any work: such a request is
// the customer's error, which says nothing about the gateway's health.
//
// Endpoints: POST /charge?order=ID answers "PAID:ID" as text; GET /price?sku=SKU answers
// {"sku":"SKU","cents":N} where N is [ListPrice] of the SKU, a deterministic price between 199
// and 9999 cents.
//
// # Client
//
// [Client] calls the gateway over its own [net/http.Transport], so [Client.Close] can release its
// idle connections and tests stay free of leaked goroutines. Its errors follow the split the
// patterns care about:
//
//   - [*GatewayError] (errors.Is [ErrGateway]): a 5xx answer or an unreachable gateway, the
//     dependency's fault, worth recording in a circuit breaker and retrying;
//   - [*InvalidOrderError] (errors.Is [ErrInvalidOrder]): a 4xx answer, the caller's fault,
//     to be ignored by breakers and never retried;
//   - the context's own error, returned as is, when the call's context ends first.
package payment
