package bench

import (
	"context"
	"time"

	"github.com/failsafe-go/failsafe-go"
	fstimeout "github.com/failsafe-go/failsafe-go/timeout"

	"github.com/levee-go/levee/timelimiter"
)

// TimeLimiterCases returns one attempt of work under a deadline of timeout: levee's
// timelimiter.Execute (the call runs in a goroutine of its own and the caller gets
// ErrTimeout at the deadline), failsafe-go's timeout policy (an executor built once; the call
// runs in the caller's goroutine, so the caller waits for it) and a bare context.WithTimeout
// around a direct call.
func TimeLimiterCases(work Work, timeout time.Duration) ([]Case, error) {
	lv, err := timelimiter.New("bench", timelimiter.Config{TimeoutDuration: timeout})
	if err != nil {
		return nil, err
	}
	fs := failsafe.With[int](fstimeout.New[int](timeout))

	call, plain := work.Call, work.Plain
	return []Case{
		{Impl: "levee", Do: func(ctx context.Context) error {
			_, err := timelimiter.Execute(ctx, lv, call)
			return err
		}},
		{Impl: "failsafe", Do: func(context.Context) error {
			_, err := fs.Get(plain)
			return err
		}},
		{Impl: "ctxtimeout", Do: func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			_, err := call(ctx)
			return err
		}},
	}, nil
}

// Hang returns a call that ignores its context and returns ErrBoom only after d, like a client
// without deadline support.
func Hang(d time.Duration) Work {
	return Work{
		Call:  func(context.Context) (int, error) { time.Sleep(d); return 0, ErrBoom },
		Plain: func() (int, error) { time.Sleep(d); return 0, ErrBoom },
	}
}

// Late runs c once and returns how long after the deadline, timeout after the start, the
// caller got its answer back, with that answer.
func Late(ctx context.Context, c Case, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	err := c.Do(ctx)
	return time.Since(start) - timeout, err
}
