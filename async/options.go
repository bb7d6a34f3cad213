package async

import (
	"context"
	"fmt"
)

// Option tunes a fan-out: All, Map or FirstSuccess.
type Option func(*options)

type options struct {
	maxConcurrency int // 0: no limit
	failFast       bool
	itemContext    func(ctx context.Context, i int) context.Context
	err            error
}

// MaxConcurrency runs at most n of the fan-out's calls at a time (n >= 1), starting them in
// input order as earlier ones finish, so that N tasks sharing one breaker, bulkhead and rate
// limiter reach them at a pace they can bear; calls waiting for a slot hold no goroutine and no
// permit. Without it every call starts at once. A fan-out given n < 1 returns an error without
// running anything.
func MaxConcurrency(n int) Option {
	return func(o *options) {
		if n < 1 {
			o.setErr(fmt.Errorf("async: MaxConcurrency must be >= 1, got %d", n))
			return
		}
		o.maxConcurrency = n
	}
}

// FailFast ends a fan-out at the first failure: the calls still running are cancelled (their
// permits are released, nothing is recorded against the dependency) and those not yet started
// never start. For All and Map the first failure is the error returned; for FirstSuccess the
// first call to complete decides, success or not. A call answered by its pipeline's fallback has
// not failed: the fallback has answered it.
func FailFast() Option { return func(o *options) { o.failFast = true } }

// ItemContext derives the context of the i-th call of a fan-out (i is its index in the input)
// from the fan-out's context, which it must return or wrap (context.WithValue, WithTimeout...)
// so that cancelling the fan-out still cancels the call. The whole guarded execution of that
// call runs with it, fallback included, so this is how a per-call value reaches a pattern: the
// key of a fallback.LastKnown (its WithKey), a tracing span, a deadline of its own. f runs on
// the call's goroutine; a nil f, or a nil context returned, leaves the fan-out's context.
func ItemContext(f func(ctx context.Context, i int) context.Context) Option {
	return func(o *options) { o.itemContext = f }
}

func (o *options) setErr(err error) {
	if o.err == nil {
		o.err = err
	}
}

func collect(opts []Option) (options, error) {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o, o.err
}

// limit returns how many of n calls may run at once.
func (o *options) limit(n int) int {
	if o.maxConcurrency > 0 && o.maxConcurrency < n {
		return o.maxConcurrency
	}
	return n
}

// ctxFor returns the context of the i-th call.
func (o *options) ctxFor(ctx context.Context, i int) context.Context {
	if o.itemContext == nil {
		return ctx
	}
	if c := o.itemContext(ctx, i); c != nil {
		return c
	}
	return ctx
}
