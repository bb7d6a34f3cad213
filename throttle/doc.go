// Package throttle rejects calls on the client side before an overloaded backend has to, as
// the adaptive throttling of Google's Site Reliability Engineering book (chapter 21,
// "Handling Overload"): each client counts, over a sliding Window, the requests it sent and
// those the backend accepted, and refuses a new request locally with probability
//
//	max(0, (requests − K × accepts) / (requests + 1))
//
// While the backend accepts everything the probability is 0; once it rejects more than
// 1 − 1/K of the requests, the client sheds the excess itself, without the cost of a round
// trip, and sends just enough to keep measuring. K (default 2) trades load on the backend for
// fewer local rejections of requests the backend could have served.
//
//	t, err := throttle.New("inventory", throttle.Config{})
//	...
//	stock, err := throttle.Execute(ctx, t, inventory.Stock)
//
// A Throttler plugs in where a circuit breaker does: Acquire returns a Permit ended by
// OnSuccess, OnError or Release; Execute runs a call under a permit; Decorator makes it a layer
// of a levee.Pipeline. A local refusal returns the throttler's *ThrottledError, which matches
// ErrThrottled and is a levee rejection (levee.IsRejection): a breaker around it does not
// record it and Retry does not retry it.
//
// # Differences from the SRE book and go-zero
//
//   - The throttler's own rejections are not requests: requests counts the calls sent to the
//     backend only. The book counts every attempt, and go-zero's Google breaker records a
//     local drop as a failed request, so that shedding raises the probability of shedding;
//     here the probability depends on the backend's answers alone (a backend that accepts a
//     fraction f of what it is sent is sent K × f of the offered load).
//   - A call counts when it ends (the book counts a request when it is sent). A call the
//     caller cancelled, or that an inner levee pattern refused, does not count at all.
//   - What "rejected by the backend" means is configurable: RecordErrors and
//     RecordErrorPredicate name the errors of an overloaded backend (HTTP 429 and 503, gRPC
//     RESOURCE_EXHAUSTED and UNAVAILABLE); without them every error counts.
//
// Admitting, ending and refusing a call allocate nothing.
package throttle
