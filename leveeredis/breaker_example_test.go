package leveeredis_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeredis"
)

// Two replicas of a service share the breaker of the payment API: the OPEN that the failures
// seen by one decide spares the API the other's calls too. An in-memory Redis stands for the
// one the replicas share; give each replica its own client, as separate processes have.
func ExampleSharedBreaker() {
	store := miniredis.NewMiniRedis()
	defer store.Close()

	replica := func() (*leveeredis.SharedBreaker, func()) {
		client := redis.NewClient(&redis.Options{
			Addr:                  "127.0.0.1:6379",
			Dialer:                func(context.Context, string, string) (net.Conn, error) { return store.Dial() },
			ContextTimeoutEnabled: true,
			MaxRetries:            -1,
			DisableIdentity:       true,
		})
		cb, _ := circuitbreaker.New("payments", circuitbreaker.Config{
			SlidingWindowSize:       4,
			MinimumNumberOfCalls:    4,
			WaitDurationInOpenState: 30 * time.Second,
		})
		sb, err := leveeredis.NewSharedBreaker(cb, client, leveeredis.BreakerConfig{})
		if err != nil {
			panic(err)
		}
		return sb, func() { sb.Close(); client.Close() }
	}
	a, closeA := replica()
	defer closeA()
	b, closeB := replica()
	defer closeB()

	// B's transition comes on B's subscription goroutine, maybe while A is still printing:
	// it is printed once A is done.
	opened := make(chan string, 1)
	b.CircuitBreaker().OnStateChange(func(from, to circuitbreaker.State) {
		select {
		case opened <- fmt.Sprintf("replica B: %v -> %v", from, to):
		default: // only the first transition is shown
		}
	})

	unavailable := errors.New("503 from the payment API")
	for range 4 {
		_, err := leveeredis.Execute(context.Background(), a, func(context.Context) (string, error) {
			return "", unavailable
		})
		fmt.Println("replica A:", err)
	}
	fmt.Println(<-opened) // one publish later, not one polling interval

	_, err := leveeredis.Execute(context.Background(), b, func(context.Context) (string, error) {
		return "paid", nil
	})
	fmt.Println("replica B:", err)
	fmt.Println("shared record version:", b.Version())
	// Output:
	// replica A: 503 from the payment API
	// replica A: 503 from the payment API
	// replica A: 503 from the payment API
	// replica A: 503 from the payment API
	// replica B: CLOSED -> OPEN
	// replica B: circuitbreaker: CircuitBreaker 'payments' is OPEN and does not permit further calls
	// shared record version: 1
}
