package circuitbreaker_test

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"github.com/levee-go/levee/circuitbreaker"
)

// Logging through log/slog: transitions into OPEN at Warn, the rate that opened the breaker
// at Info, refused calls at Debug. The failed calls themselves are not logged: their errors
// go back to the callers.
func ExampleConfig_logger() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{} // drop the time, for a deterministic output
			}
			return a
		},
	}))
	breaker, err := circuitbreaker.New("payment", circuitbreaker.Config{
		SlidingWindowSize:    2,
		MinimumNumberOfCalls: 2,
		Logger:               logger,
	})
	if err != nil {
		panic(err)
	}
	down := errors.New("gateway down")
	for range 3 {
		_, _ = circuitbreaker.Execute(context.Background(), breaker, func(context.Context) (string, error) {
			return "", down
		})
	}
	// Output:
	// level=INFO msg="circuit breaker failure rate exceeded" pattern=circuitbreaker name=payment event=FAILURE_RATE_EXCEEDED failure_rate=100 slow_call_rate=0
	// level=WARN msg="circuit breaker state transition" pattern=circuitbreaker name=payment event=STATE_TRANSITION from=CLOSED to=OPEN
	// level=DEBUG msg="circuit breaker call not permitted" pattern=circuitbreaker name=payment event=NOT_PERMITTED err="circuitbreaker: CircuitBreaker 'payment' is OPEN and does not permit further calls"
}
