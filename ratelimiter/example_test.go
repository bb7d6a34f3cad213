package ratelimiter_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/levee-go/levee/ratelimiter"
)

// Guard calls to a payment service with two calls per hour, refusing at once any call that
// would have to wait.
func Example() {
	rl, err := ratelimiter.New("payments", ratelimiter.Config{
		LimitForPeriod:     2,
		LimitRefreshPeriod: time.Hour,
		TimeoutDuration:    ratelimiter.NoWait,
	})
	if err != nil {
		panic(err)
	}
	for i := 1; i <= 3; i++ {
		receipt, err := ratelimiter.Execute(context.Background(), rl, func(ctx context.Context) (string, error) {
			return fmt.Sprintf("receipt %d", i), nil // the call to the service
		})
		if errors.Is(err, ratelimiter.ErrRequestNotPermitted) {
			fmt.Println("refused:", err)
			continue
		}
		fmt.Println(receipt)
	}
	fmt.Println("available:", rl.Metrics().AvailablePermissions)
	// Output:
	// receipt 1
	// receipt 2
	// refused: ratelimiter: RateLimiter 'payments' does not permit further calls
	// available: 0
}

// ReservePermission takes permissions of later cycles when the wait fits in TimeoutDuration and
// tells the caller how long to wait; available permissions go negative meanwhile.
func ExampleRateLimiter_ReservePermission() {
	rl, _ := ratelimiter.New("reports", ratelimiter.Config{
		LimitForPeriod:     1,
		LimitRefreshPeriod: time.Hour,
		TimeoutDuration:    2 * time.Hour,
	})
	for range 4 {
		wait, err := rl.ReservePermission(1)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println("go in", wait.Round(time.Minute))
	}
	fmt.Println("available:", rl.Metrics().AvailablePermissions)
	// Output:
	// go in 0s
	// go in 1h0m0s
	// go in 2h0m0s
	// ratelimiter: RateLimiter 'reports' does not permit further calls
	// available: -2
}

var errTooManyRequests = errors.New("429 Too Many Requests")

// When the service itself says it is overloaded, drain the rest of the cycle so that no more
// calls are sent to it before the next one.
func ExampleConfig_drainPermissionsOnResult() {
	rl, _ := ratelimiter.New("search", ratelimiter.Config{
		LimitForPeriod:     10,
		LimitRefreshPeriod: time.Hour,
		TimeoutDuration:    ratelimiter.NoWait,
		DrainPermissionsOnResult: func(_ any, err error) bool {
			return errors.Is(err, errTooManyRequests)
		},
	})
	rl.Subscribe(func(e ratelimiter.Event) {
		if e.Type == ratelimiter.EventDrained {
			fmt.Println("drained", e.Permits, "permissions")
		}
	})
	search := func(ctx context.Context) ([]string, error) {
		return nil, errTooManyRequests
	}
	_, err := ratelimiter.Execute(context.Background(), rl, search)
	fmt.Println(err)
	_, err = ratelimiter.Execute(context.Background(), rl, search)
	fmt.Println(err)
	// Output:
	// drained 9 permissions
	// 429 Too Many Requests
	// ratelimiter: RateLimiter 'search' does not permit further calls
}
