// Package leveetest is a test kit for code guarded by levee: a stub dependency whose every
// invocation does what the test scripts, helpers that put a circuit breaker in a given state,
// a recorder of any pattern's events, and a check that a pipeline is idle once a test is over.
//
//   - Stub[T] is the dependency. Its method value stub.Call has the shape every pattern and
//     pipeline takes, func(context.Context) (T, error). What an invocation does is a
//     Behaviour: OK, Fail, Slow, Hang, IgnoreCtx, Panic and Flaky, composed per invocation
//     with First and Sequence ("fail three times, then answer"). The stub counts its
//     invocations, the calls running now and the most that ever ran at once, and the
//     invocations whose context was done when they returned.
//   - ForceState moves a *circuitbreaker.CircuitBreaker to any state through its public
//     TransitionToXxxState methods.
//   - Record subscribes to the events of any pattern (every pattern has
//     Subscribe(func(Event)) (unsubscribe func())) and keeps them for assertions; it
//     unsubscribes when the test ends.
//   - PipeListener is an in-memory net.Listener whose connections are net.Pipe pairs, so an
//     HTTP server and its clients (leveehttp's Transport and Middleware, say) run inside a
//     testing/synctest bubble on fake time.
//   - VerifyIdle fails the test when a pattern still holds something a finished call should
//     have given back: a bulkhead permit, a HALF_OPEN probe permit, a caller waiting for the
//     rate limiter, a call the time limiter abandoned, a busy worker pool.
//
// Everything here works inside a testing/synctest bubble: the stub waits only on timers made by
// the goroutine that calls it (fake time inside a bubble), and no helper starts a goroutine or
// a timer of its own. Under synctest, call synctest.Wait before VerifyIdle so that abandoned
// calls have returned.
//
// VerifyIdle checks the patterns; goroutines are go.uber.org/goleak's business. Pair them, the
// leak check last:
//
//	func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
//
//	func TestPayment(t *testing.T) {
//		defer goleak.VerifyNone(t) // runs last: after VerifyIdle's cleanup
//		...
//		leveetest.VerifyIdle(t, patterns)
//	}
//
// Inside synctest.Test the bubble itself refuses goroutines that outlive it (the test
// panics with a deadlock), so goleak is only needed for goroutines started outside a bubble.
package leveetest
