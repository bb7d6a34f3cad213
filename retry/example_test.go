package retry_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/retry"
)

var (
	ErrGatewayUnavailable = errors.New("gateway 503")
	ErrInvalidOrder       = errors.New("invalid order (422)")
)

// A payment gateway that fails twice and then answers. The retry waits 1ms, then 2ms, between
// attempts (exponential backoff), and retries only the gateway's transient error.
func Example() {
	backoff, err := retry.ExponentialBackoff(time.Millisecond, 2, 0)
	if err != nil {
		panic(err)
	}
	r, err := retry.New("payment", retry.Config{
		MaxAttempts:      3,
		IntervalFunction: backoff,
		RetryErrors:      []error{ErrGatewayUnavailable},
		IgnoreErrors:     []error{ErrInvalidOrder},
	})
	if err != nil {
		panic(err)
	}

	calls := 0
	charge := func(ctx context.Context) (string, error) {
		calls++
		if calls < 3 {
			return "", ErrGatewayUnavailable
		}
		return "PAID:DH001", nil
	}

	receipt, err := retry.Execute(context.Background(), r, charge)
	fmt.Println(receipt, err, "after", calls, "calls")

	m := r.Metrics()
	fmt.Println("successful with retry:", m.NumberOfSuccessfulCallsWithRetryAttempt, "attempts:", m.NumberOfTotalCalls)
	// Output:
	// PAID:DH001 <nil> after 3 calls
	// successful with retry: 1 attempts: 3
}

// When the attempts run out, the error says so and still holds the dependency's own error.
func ExampleMaxRetriesExceededError() {
	r, _ := retry.New("payment", retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
	_, err := retry.Execute(context.Background(), r, func(context.Context) (string, error) {
		return "", ErrGatewayUnavailable
	})
	fmt.Println(err)
	fmt.Println(errors.Is(err, retry.ErrMaxRetriesExceeded), errors.Is(err, ErrGatewayUnavailable))

	var mre *retry.MaxRetriesExceededError
	if errors.As(err, &mre) {
		fmt.Println("attempts:", mre.Attempts)
	}
	// Output:
	// retry: Retry 'payment' has exhausted all attempts (3): gateway 503
	// true true
	// attempts: 3
}

// An error that is not worth retrying (a customer's invalid order) comes back at once, unchanged.
func ExampleConfig_ignoreErrors() {
	r, _ := retry.New("payment", retry.Config{WaitDuration: retry.NoWait, IgnoreErrors: []error{ErrInvalidOrder}})
	calls := 0
	_, err := retry.Execute(context.Background(), r, func(context.Context) (string, error) {
		calls++
		return "", ErrInvalidOrder
	})
	fmt.Println(err == ErrInvalidOrder, "after", calls, "call")
	// Output:
	// true after 1 call
}

// Retrying on a result: a payment still PENDING is asked again, and with FailAfterMaxAttempts a
// result that stays PENDING becomes an error carrying it.
func ExampleConfig_retryOnResult() {
	r, _ := retry.New("payment-status", retry.Config{
		MaxAttempts:            3,
		WaitDuration:           retry.NoWait,
		RetryOnResultPredicate: func(status any) bool { return status == "PENDING" },
		FailAfterMaxAttempts:   true,
	})
	status := func(context.Context) (string, error) { return "PENDING", nil }

	_, err := retry.Execute(context.Background(), r, status)
	var mre *retry.MaxRetriesExceededError
	if errors.As(err, &mre) {
		fmt.Println(err)
		fmt.Println("last result:", mre.LastResult)
	}
	// Output:
	// retry: Retry 'payment-status' has exhausted all attempts (3)
	// last result: PENDING
}

// An exponential backoff multiplies each interval by the multiplier, to the nanosecond: 4ms
// with multiplier 1.2 grows by 0.8ms, then 0.96ms, where whole milliseconds would stay at 4ms.
func ExampleExponentialBackoff() {
	backoff, _ := retry.ExponentialBackoff(4*time.Millisecond, 1.2, 0)
	capped, _ := retry.ExponentialBackoff(500*time.Millisecond, 1.5, time.Second)
	var plain, withCap []time.Duration
	for attempt := 1; attempt <= 5; attempt++ {
		plain = append(plain, backoff(attempt))
		withCap = append(withCap, capped(attempt))
	}
	fmt.Println(plain)
	fmt.Println(withCap)

	_, err := retry.ExponentialBackoff(4*time.Millisecond, 1.2, 3*time.Millisecond)
	fmt.Println(err)
	// Output:
	// [4ms 4.8ms 5.76ms 6.912ms 8.2944ms]
	// [500ms 750ms 1s 1s 1s]
	// retry: ExponentialBackoff max must be 0 (no cap) or >= interval (4ms), got 3ms
}

// A circuit breaker inside a retry refuses calls while it is open. Those refusals are not
// retried, whatever RetryErrors or RetryOnErrorPredicate say: retrying a call that never
// reached the dependency only delays the caller. Listing the rejection in RetryRejections
// brings back Resilience4j's behaviour of retrying it.
func ExampleConfig_retryRejections() {
	cb, _ := circuitbreaker.New("payment", circuitbreaker.Config{InitialState: circuitbreaker.ForcedOpen})
	notBadRequest := func(err error) bool { return !errors.Is(err, ErrInvalidOrder) }

	for _, rejections := range [][]error{nil, {circuitbreaker.ErrCallNotPermitted}} {
		r, _ := retry.New("payment", retry.Config{
			WaitDuration:          retry.NoWait,
			RetryOnErrorPredicate: notBadRequest,
			RetryRejections:       rejections,
		})
		attempts := 0
		_, err := retry.Execute(context.Background(), r, func(ctx context.Context) (string, error) {
			attempts++
			return circuitbreaker.Execute(ctx, cb, func(context.Context) (string, error) { return "PAID", nil })
		})
		fmt.Println(attempts, "attempt(s):", err)
	}
	// Output:
	// 1 attempt(s): circuitbreaker: CircuitBreaker 'payment' is FORCED_OPEN and does not permit further calls
	// 3 attempt(s): retry: Retry 'payment' has exhausted all attempts (3): circuitbreaker: CircuitBreaker 'payment' is FORCED_OPEN and does not permit further calls
}

// Events tell what a Retry did: a RETRY before each wait, then SUCCESS (or ERROR).
func ExampleRetry_Subscribe() {
	r, _ := retry.New("payment", retry.Config{MaxAttempts: 3, WaitDuration: time.Millisecond})
	unsubscribe := r.Subscribe(func(e retry.Event) {
		fmt.Printf("%s attempts=%d err=%v wait=%v\n", e.Type, e.NumberOfRetryAttempts, e.LastErr, e.WaitInterval)
	})
	defer unsubscribe()

	calls := 0
	_, _ = retry.Execute(context.Background(), r, func(context.Context) (int, error) {
		calls++
		if calls == 1 {
			return 0, ErrGatewayUnavailable
		}
		return 42, nil
	})
	// Output:
	// RETRY attempts=1 err=gateway 503 wait=1ms
	// SUCCESS attempts=1 err=gateway 503 wait=0s
}

// An operator that runs attempts itself drives a Context by hand: it reports each outcome and
// waits as told.
func ExampleRetry_NewContext() {
	r, _ := retry.New("stream", retry.Config{MaxAttempts: 3, WaitDuration: 10 * time.Millisecond})
	outcomes := []error{ErrGatewayUnavailable, ErrGatewayUnavailable, ErrGatewayUnavailable}

	rc := r.NewContext()
	for _, err := range outcomes {
		wait, again := rc.OnError(err)
		fmt.Printf("attempt failed: retry=%v wait=%v\n", again, wait)
		if !again {
			break
		}
		// A real operator waits here (honouring its context) before the next attempt.
	}
	fmt.Println(rc.Err())
	// Output:
	// attempt failed: retry=true wait=10ms
	// attempt failed: retry=true wait=10ms
	// attempt failed: retry=false wait=0s
	// retry: Retry 'stream' has exhausted all attempts (3): gateway 503
}
