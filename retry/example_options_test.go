package retry_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/levee-go/levee/retry"
)

// ErrCardDeclined is a decline the gateway reports in its answer: no retry will change it.
var ErrCardDeclined = errors.New("card declined")

// A call that learns, from the dependency's answer, that retrying is pointless marks its error
// with Permanent: the retry stops at once and returns the error without the mark.
func ExamplePermanent() {
	r, _ := retry.New("payment", retry.Config{MaxAttempts: 5, WaitDuration: retry.NoWait})
	calls := 0
	_, err := retry.Execute(context.Background(), r, func(context.Context) (string, error) {
		calls++
		if calls == 1 {
			return "", ErrGatewayUnavailable // retried
		}
		return "", retry.Permanent(ErrCardDeclined)
	})
	fmt.Println(err == ErrCardDeclined, "after", calls, "calls")
	fmt.Println("failed without retry:", r.Metrics().NumberOfFailedCallsWithoutRetryAttempt)
	// Output:
	// true after 2 calls
	// failed without retry: 1
}

// A budget shared by every call to the inventory service lets retries add at most half the
// calls (Ratio 0.5), with no reserve: two calls that succeed earn one retry, a failing call
// earns half a retry more, and after one retry the budget refuses the next.
func ExampleNewBudget() {
	budget, err := retry.NewBudget(retry.BudgetConfig{Ratio: 0.5, MinRetriesPerSecond: retry.NoBudgetMinimum})
	if err != nil {
		panic(err)
	}
	r, _ := retry.New("inventory", retry.Config{MaxAttempts: 5, WaitDuration: retry.NoWait, Budget: budget})
	ctx := context.Background()
	for range 2 {
		_, _ = retry.Execute(ctx, r, func(context.Context) (int, error) { return 7, nil })
	}
	fmt.Printf("%+v\n", budget.Metrics())

	calls := 0
	_, err = retry.Execute(ctx, r, func(context.Context) (int, error) {
		calls++
		return 0, ErrGatewayUnavailable
	})
	fmt.Println(err)
	fmt.Println(errors.Is(err, retry.ErrBudgetExhausted), errors.Is(err, ErrGatewayUnavailable), "after", calls, "calls")
	fmt.Printf("%+v\n", budget.Metrics())
	// Output:
	// {AvailableRetries:1 NumberOfDeposits:2 NumberOfWithdrawals:0 NumberOfRefusedRetries:0}
	// retry: Retry 'inventory' stopped after 2 of 5 attempts (retry budget exhausted): gateway 503
	// true true after 2 calls
	// {AvailableRetries:0 NumberOfDeposits:3 NumberOfWithdrawals:1 NumberOfRefusedRetries:1}
}

// MaxDuration bounds a call's attempts and waits together: a retry whose wait would end after
// it is not made. Here the first wait, 2s, would already pass the 1s allowed, so the call stops
// after one attempt, with the usual error saying why.
func ExampleConfig_maxDuration() {
	r, _ := retry.New("payment", retry.Config{MaxAttempts: 10, WaitDuration: 2 * time.Second, MaxDuration: time.Second})
	_, err := retry.Execute(context.Background(), r, func(context.Context) (string, error) {
		return "", ErrGatewayUnavailable
	})
	fmt.Println(err)
	fmt.Println(errors.Is(err, retry.ErrMaxDurationExceeded), errors.Is(err, retry.ErrMaxRetriesExceeded))
	// Output:
	// retry: Retry 'payment' stopped after 1 of 10 attempts (max duration exceeded): gateway 503
	// true true
}

// Full jitter spreads the retries of many callers over [0, base × 2^(attempt−1)], capped at
// max; an absolute jitter spreads any interval function's waits by ± a duration. Given a
// source with a fixed state, as a test would, the waits are the same on every run; give nil
// in production.
func ExampleFullJitterBackoff() {
	full, _ := retry.FullJitterBackoff(100*time.Millisecond, time.Second, rand.NewPCG(1, 2))
	var waits []time.Duration
	for attempt := 1; attempt <= 6; attempt++ {
		waits = append(waits, full(attempt).Round(time.Millisecond))
	}
	fmt.Println(waits)

	backoff, _ := retry.ExponentialBackoff(time.Second, 2, 0)
	jittered, _ := retry.WithJitter(backoff, 100*time.Millisecond, rand.NewPCG(1, 2))
	fmt.Println(jittered(1).Round(time.Millisecond), jittered(2).Round(time.Millisecond))

	_, err := retry.DecorrelatedJitterBackoff(100*time.Millisecond, 0, nil)
	fmt.Println(err)
	// Output:
	// [68ms 92ms 203ms 344ms 798ms 388ms]
	// 1.035s 1.992s
	// retry: DecorrelatedJitterBackoff max must be >= interval (100ms), got 0s
}

// A retry never sleeps into its caller's deadline: with 250ms left and a wait of 1s, the call
// ends at once with the last real error and the reason, not with context.DeadlineExceeded.
func ExampleConfig_callerDeadline() {
	rt, _ := retry.New("pricing", retry.Config{MaxAttempts: 3, WaitDuration: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
	defer cancel()
	_, err := retry.Execute(ctx, rt, func(context.Context) (string, error) {
		return "", errors.New("503 Service Unavailable")
	})
	fmt.Println(err)
	fmt.Println(errors.Is(err, retry.ErrCallerDeadline), errors.Is(err, context.DeadlineExceeded))
	// Output:
	// retry: Retry 'pricing' stopped after 1 of 3 attempts (the next attempt could not finish before the caller's deadline): 503 Service Unavailable
	// true false
}

// A service whose own retry serves a request from a caller that retries makes one attempt
// (Config.NoRetryOfRetries), so that retries happen at the outermost layer only: leveehttp's
// Middleware and leveegrpc's interceptors put the attempt number a retrying caller sends in
// the request's context. A request with no number (a caller that does not retry) is retried.
func ExampleConfig_noRetryOfRetries() {
	rt, _ := retry.New("inventory", retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait, NoRetryOfRetries: true})
	for _, incoming := range []int{0, 1, 2} {
		ctx := context.Background()
		if incoming > 0 {
			ctx = retry.WithIncomingAttempt(ctx, incoming)
		}
		attempts := 0
		_, err := retry.Execute(ctx, rt, func(context.Context) (int, error) {
			attempts++
			return 0, errors.New("unavailable")
		})
		fmt.Printf("serving attempt %d: %d attempts, caller retries: %v, ErrServingRetry: %v\n",
			incoming, attempts, retry.CallerRetries(ctx), errors.Is(err, retry.ErrServingRetry))
	}
	// Output:
	// serving attempt 0: 3 attempts, caller retries: false, ErrServingRetry: false
	// serving attempt 1: 1 attempts, caller retries: true, ErrServingRetry: true
	// serving attempt 2: 1 attempts, caller retries: true, ErrServingRetry: true
}
