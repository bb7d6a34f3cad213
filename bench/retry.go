package bench

import (
	"context"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/retrypolicy"

	"github.com/levee-go/levee/retry"
)

// Retry settings shared by every implementation: three attempts, a constant wait between them.
const (
	RetryAttempts = 3
	RetryWait     = time.Millisecond
)

// RetryCases returns a call run under levee's retry.Execute, failsafe-go's retry policy (an
// executor built once and reused), backoff/v5's Retry (its options built once) and a direct
// call, each allowing RetryAttempts attempts RetryWait apart. The benchmarks run Succeed: the
// first attempt succeeds.
func RetryCases(work Work) ([]Case, error) {
	lv, err := retry.New("bench", retry.Config{MaxAttempts: RetryAttempts, WaitDuration: RetryWait})
	if err != nil {
		return nil, err
	}
	fs := failsafe.With[int](retrypolicy.NewBuilder[int]().
		WithMaxAttempts(RetryAttempts).
		WithDelay(RetryWait).
		Build())
	opts := []backoff.RetryOption{
		backoff.WithMaxTries(RetryAttempts),
		backoff.WithBackOff(backoff.NewConstantBackOff(RetryWait)),
	}

	call, plain := work.Call, work.Plain
	return []Case{
		{Impl: "levee", Do: func(ctx context.Context) error {
			_, err := retry.Execute(ctx, lv, call)
			return err
		}},
		{Impl: "failsafe", Do: func(context.Context) error {
			_, err := fs.Get(plain)
			return err
		}},
		{Impl: "backoff", Do: func(ctx context.Context) error {
			_, err := backoff.Retry(ctx, plain, opts...)
			return err
		}},
		{Impl: "direct", Do: func(ctx context.Context) error {
			_, err := call(ctx)
			return err
		}},
	}, nil
}
