package timelimiter_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/levee-go/levee/timelimiter"
)

// A lookup that hangs is cut off at the deadline; its context is cancelled so that it stops,
// and the caller gets ErrTimeout, which is also a context.DeadlineExceeded.
func Example() {
	tl, err := timelimiter.New("inventory", timelimiter.Config{TimeoutDuration: 20 * time.Millisecond})
	if err != nil {
		panic(err)
	}
	stopped := make(chan error, 1)
	hangingLookup := func(ctx context.Context) (int, error) {
		<-ctx.Done() // the dependency hangs until the attempt's context ends
		stopped <- ctx.Err()
		return 0, ctx.Err()
	}

	_, err = timelimiter.Execute(context.Background(), tl, hangingLookup)
	fmt.Println(err)
	fmt.Println("timeout:", errors.Is(err, timelimiter.ErrTimeout))
	fmt.Println("deadline exceeded:", errors.Is(err, context.DeadlineExceeded))
	fmt.Println("the lookup saw:", <-stopped)

	stock, err := timelimiter.Execute(context.Background(), tl, func(context.Context) (int, error) {
		return 12, nil // a quick answer comes back unchanged
	})
	fmt.Println(stock, err)
	// Output:
	// timelimiter: TimeLimiter 'inventory' recorded a timeout exception
	// timeout: true
	// deadline exceeded: true
	// the lookup saw: context deadline exceeded
	// 12 <nil>
}

// Events report each outcome with its duration, for logging or metrics.
func ExampleTimeLimiter_Subscribe() {
	tl, _ := timelimiter.New("pricing", timelimiter.Config{TimeoutDuration: time.Second})
	tl.Subscribe(func(e timelimiter.Event) { fmt.Println(e.Name, e.Type, e.Err) })

	_, _ = timelimiter.Execute(context.Background(), tl, func(context.Context) (int, error) { return 1, nil })
	_, _ = timelimiter.Execute(context.Background(), tl, func(context.Context) (int, error) {
		return 0, errors.New("price not found")
	})
	fmt.Printf("%+v\n", tl.Metrics())
	// Output:
	// pricing SUCCESS <nil>
	// pricing ERROR price not found
	// {NumberOfAbandonedCalls:0 NumberOfSuccessfulCalls:1 NumberOfFailedCalls:1 NumberOfTimedOutCalls:0}
}
