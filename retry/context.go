package retry

import (
	"context"
	"fmt"
	"time"

	"github.com/levee-go/levee/internal/safe"
)

// Context is the state of one guarded call across its attempts: Resilience4j's Retry.Context,
// with the waiting left to the caller. Execute uses one internally; operators that run the
// attempts themselves (streams, futures) drive one by hand:
//
//	rc := r.NewContext()
//	for {
//		v, err := attempt(ctx)
//		var wait time.Duration
//		var again bool
//		if err != nil {
//			wait, again = rc.OnError(err)
//		} else if wait, again = rc.OnResult(v); !again {
//			rc.OnSuccess()
//		}
//		if !again {
//			return v, rc.Err()
//		}
//		// wait, honouring ctx, then loop
//	}
//
// A call that returns its caller's own cancellation should simply be given up without telling
// the Context, as Execute does: it is neither a success nor a failure.
//
// A Context is a value, so NewContext does not allocate; it serves one call and is not safe for
// concurrent use. Once it has stopped (OnError or OnResult returned false with an outcome
// recorded, or OnSuccess was called) further calls of its methods do nothing, so an outcome is
// never counted twice. The zero Context does nothing.
type Context struct {
	r          *Retry
	s          *settings       // the config in force when the call started, for its whole life
	attempts   int             // failed attempts so far, as Resilience4j's numOfAttempts
	lastErr    error           // error of the last retried attempt
	lastResult any             // last result that matched RetryOnResultPredicate
	err        error           // the error the call ends with, once stopped
	reason     error           // Reason of the *MaxRetriesExceededError, when MaxDuration or Budget stopped the call
	start      time.Time       // when the call started; set only with a MaxDuration
	ctx        context.Context // the caller's, for its deadline and incoming attempt; may be nil
	expect     time.Duration   // an attempt's expected duration, from ExecuteExpecting
	state      contextState
}

type contextState uint8

const (
	running contextState = iota
	// resultStopped: the last result still matched RetryOnResultPredicate when retrying
	// stopped (attempts ran out, or a negative interval); OnSuccess records the failure.
	resultStopped
	stopped
)

// NewContext returns the state of a new call, with no attempt made yet, as Resilience4j's
// Retry.context(). The call starts now: Config.MaxDuration is measured from here, and the call
// makes its deposit in Config.Budget. On a nil *Retry it returns the zero Context, which does
// nothing.
func (r *Retry) NewContext() Context {
	if r.unset() {
		return Context{}
	}
	s := r.settings.Load()
	c := Context{r: r, s: s}
	if s.maxDuration > 0 {
		c.start = time.Now()
	}
	if s.budget != nil {
		s.budget.depositCall()
	}
	return c
}

// SetCallerContext gives the Context its caller's context, as Execute does: a retry then
// respects ctx's deadline (Config.IgnoreCallerDeadline, Config.MinAttemptDuration) and its
// incoming attempt (Config.NoRetryOfRetries). Without it a Context driven by hand knows no
// deadline. ctx is read only when a retry is decided; a nil ctx forgets the one given before.
func (c *Context) SetCallerContext(ctx context.Context) { c.ctx = ctx }

// Attempts returns the number of failed attempts so far: attempts whose error was retried or
// whose result matched RetryOnResultPredicate. It is 0 during the first attempt and equals
// MaxAttempts when the attempts ran out.
func (c *Context) Attempts() int { return c.attempts }

// OnError records that an attempt failed with err and decides what comes next, as
// Resilience4j's Context.onError. When retry is true the caller waits wait (0 or more) and
// makes the next attempt; a RETRY event was published. When retry is false the call is over
// and Err returns the error it ends with, by the rule written on Execute: err itself when it is
// not retried (IGNORED_ERROR; counted as failed without retry, even after earlier retries), or a
// *MaxRetriesExceededError wrapping err when the attempts ran out, the interval function
// returned a negative wait, the wait would pass MaxDuration or the Budget refused the retry
// (ERROR; failed with retry). An err marked by Permanent ends the call at once with the mark
// removed (IGNORED_ERROR). A nil err records nothing and returns false.
func (c *Context) OnError(err error) (wait time.Duration, retry bool) {
	r := c.r
	if r.unset() || c.state != running || err == nil {
		return 0, false
	}
	r.totalCalls.Add(1)
	retryable, ends, perr := c.classify(err)
	if perr != nil {
		c.hookPanicked(perr, err)
		return 0, false
	}
	if !retryable {
		r.failedWithout.Add(1)
		r.publish(EventIgnoredError, c.attempts, ends, 0)
		c.stop(ends)
		return 0, false
	}
	c.lastErr = err
	c.lastResult = nil
	c.attempts++
	if c.attempts >= c.s.maxAttempts {
		r.failedWith.Add(1)
		r.publish(EventError, c.attempts, err, 0)
		c.stop(c.maxRetriesExceeded())
		return 0, false
	}
	wait, perr = c.nextInterval(err, nil)
	if perr != nil {
		c.hookPanicked(perr, err)
		return 0, false
	}
	if wait < 0 {
		// Stopped by the interval function: the same end as running out of attempts.
		r.failedWith.Add(1)
		r.publish(EventError, c.attempts, err, 0)
		c.stop(c.maxRetriesExceeded())
		return 0, false
	}
	if c.reason = c.gate(wait); c.reason != nil {
		// The event carries the ending error, so that its Reason reaches subscribers and logs.
		r.failedWith.Add(1)
		end := c.maxRetriesExceeded()
		r.publish(EventError, c.attempts, end, 0)
		c.stop(end)
		return 0, false
	}
	r.publish(EventRetry, c.attempts, err, wait)
	return wait, true
}

// OnResult offers a value returned without error to RetryOnResultPredicate, as Resilience4j's
// Context.onResult. When retry is true the result matched and a retry is allowed (attempts
// remain, the interval is not negative, MaxDuration and the Budget allow it):
// ConsumeResultBeforeRetryAttempt has seen it, a RETRY event was published, and the caller
// waits wait and makes the next attempt. When retry is false the caller must call OnSuccess,
// which completes the call — as a failure when the result still matched but retrying stopped.
// Without a RetryOnResultPredicate it returns false at once.
func (c *Context) OnResult(result any) (wait time.Duration, retry bool) {
	r := c.r
	if r.unset() || c.state != running || c.s.config.RetryOnResultPredicate == nil {
		return 0, false
	}
	match, perr := c.matchResult(result)
	if perr != nil {
		r.totalCalls.Add(1)
		c.hookPanicked(perr, nil)
		return 0, false
	}
	if !match {
		return 0, false
	}
	c.lastResult = result
	c.attempts++
	if c.attempts >= c.s.maxAttempts {
		c.state = resultStopped
		return 0, false
	}
	if perr := c.consumeResult(result); perr != nil {
		r.totalCalls.Add(1)
		c.hookPanicked(perr, nil)
		return 0, false
	}
	wait, perr = c.nextInterval(nil, result)
	if perr != nil {
		r.totalCalls.Add(1)
		c.hookPanicked(perr, nil)
		return 0, false
	}
	if wait < 0 {
		c.state = resultStopped
		return 0, false
	}
	if c.reason = c.gate(wait); c.reason != nil {
		c.state = resultStopped
		return 0, false
	}
	r.totalCalls.Add(1)
	r.publish(EventRetry, c.attempts, nil, wait)
	return wait, true
}

// OnSuccess completes the call with an accepted outcome, as Resilience4j's Context.onComplete:
// a value RetryOnResultPredicate did not match (or an attempt that returned no value). It counts
// a success without retry (no event) or with retry (SUCCESS). After OnResult stopped on a
// still-matching result it counts a failure with retry (ERROR) instead, and with
// FailAfterMaxAttempts Err then returns a *MaxRetriesExceededError carrying that result;
// otherwise the caller returns the result as it is.
func (c *Context) OnSuccess() {
	r := c.r
	if r.unset() || c.state == stopped {
		return
	}
	r.totalCalls.Add(1)
	switch {
	case c.state == resultStopped:
		r.failedWith.Add(1)
		var err error
		if c.s.config.FailAfterMaxAttempts {
			err = c.maxRetriesExceeded()
		}
		if r.events.Active() {
			// As Resilience4j: the last error, or a MaxRetriesExceeded placeholder when there is
			// none or the call fails with one anyway; also when MaxDuration or the Budget
			// stopped it, so that the Reason is seen.
			evErr := c.lastErr
			if err != nil {
				evErr = err
			} else if evErr == nil || c.reason != nil {
				evErr = c.maxRetriesExceeded()
			}
			r.publish(EventError, c.attempts, evErr, 0)
		}
		c.stop(err)
	case c.attempts > 0:
		r.successWith.Add(1)
		r.publish(EventSuccess, c.attempts, c.lastErr, 0)
		c.stop(nil)
	default:
		r.successWithout.Add(1)
		c.stop(nil)
	}
}

// Err returns the error the call ends with once the Context has stopped (see OnError and
// OnSuccess), and nil while it is running or when the call succeeded.
func (c *Context) Err() error { return c.err }

func (c *Context) stop(err error) {
	c.err = err
	c.state = stopped
}

func (c *Context) maxRetriesExceeded() *MaxRetriesExceededError {
	return &MaxRetriesExceededError{
		Name:        c.r.name,
		Attempts:    c.attempts,
		MaxAttempts: c.s.maxAttempts,
		LastResult:  c.lastResult,
		LastErr:     c.lastErr,
		Reason:      c.reason,
	}
}

// gate decides whether a retry after wait may be made, once the attempts and the interval
// allow it: it returns ErrMaxDurationExceeded when the wait would end after start +
// MaxDuration, ErrServingRetry when NoRetryOfRetries holds and the caller of the request served
// retries it (CallerRetries), ErrCallerDeadline when the wait plus MinAttemptDuration would
// reach the caller's deadline, ErrBudgetExhausted when the budget has no retry to give (a retry allowed is
// withdrawn from it), and nil otherwise.
func (c *Context) gate(wait time.Duration) error {
	s := c.s
	if s.maxDuration > 0 && wait > s.maxDuration-time.Since(c.start) {
		return ErrMaxDurationExceeded
	}
	if c.ctx != nil {
		if s.config.NoRetryOfRetries && CallerRetries(c.ctx) {
			return ErrServingRetry
		}
		if !s.config.IgnoreCallerDeadline {
			if dl, ok := c.ctx.Deadline(); ok {
				need := max(s.config.MinAttemptDuration, c.expect)
				if left := time.Until(dl); wait >= left || need >= left-wait {
					return ErrCallerDeadline
				}
			}
		}
	}
	if s.budget != nil && !s.budget.withdrawRetry() {
		return ErrBudgetExhausted
	}
	return nil
}

// hookPanicked ends the call when a config hook panicked: a failure (with retry when an earlier
// attempt was retried), with an ERROR event, ending with the panic — wrapping the call's own
// error, if any, so that it is not lost.
func (c *Context) hookPanicked(perr *safe.PanicError, attemptErr error) {
	r := c.r
	var err error = perr
	if attemptErr != nil {
		err = fmt.Errorf("retry: Retry '%s' config hook panicked: %w; call error: %w", r.name, perr, attemptErr)
	}
	if c.attempts > 0 {
		r.failedWith.Add(1)
	} else {
		r.failedWithout.Add(1)
	}
	r.publish(EventError, c.attempts, err, 0)
	c.stop(err)
}

// The config hooks below are user code: a panic in one becomes a *safe.PanicError instead of
// unwinding through the caller's call.

// classify reports whether err is retried and, when it is not, the error the call ends with:
// err without the mark of Permanent, or err itself. Matching runs the Is and As methods of err,
// user code too.
func (c *Context) classify(err error) (retry bool, ends error, perr *safe.PanicError) {
	defer func() {
		if v := recover(); v != nil {
			perr = safe.NewPanicError(v)
		}
	}()
	if unmarked, permanent := unmarkPermanent(err); permanent {
		return false, unmarked, nil
	}
	return c.s.shouldRetry(err), err, nil
}

func (c *Context) matchResult(result any) (match bool, perr *safe.PanicError) {
	defer func() {
		if v := recover(); v != nil {
			perr = safe.NewPanicError(v)
		}
	}()
	return c.s.config.RetryOnResultPredicate(result), nil
}

func (c *Context) consumeResult(result any) (perr *safe.PanicError) {
	if c.s.config.ConsumeResultBeforeRetryAttempt == nil {
		return nil
	}
	defer func() {
		if v := recover(); v != nil {
			perr = safe.NewPanicError(v)
		}
	}()
	c.s.config.ConsumeResultBeforeRetryAttempt(c.attempts, result)
	return nil
}

func (c *Context) nextInterval(err error, result any) (wait time.Duration, perr *safe.PanicError) {
	defer func() {
		if v := recover(); v != nil {
			perr = safe.NewPanicError(v)
		}
	}()
	return c.s.interval(c.attempts, err, result), nil
}
