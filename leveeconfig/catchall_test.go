package leveeconfig_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/retry"
)

// Java's catch-all classes stand for every error with no Options.Errors entry, and leave
// levee's rejections out.
func TestCatchAllExceptionClasses(t *testing.T) {
	ctx := context.Background()
	for _, class := range []string{"java.lang.Exception", "java.lang.RuntimeException", "java.lang.Throwable"} {
		t.Run(class, func(t *testing.T) {
			c, err := load(t, fmt.Sprintf(`resilience4j:
  retry:
    instances:
      payment:
        maxAttempts: 3
        waitDuration: 0
        retryExceptions: [%[1]s]
  circuitbreaker:
    instances:
      payment:
        slidingWindowSize: 10
        minimumNumberOfCalls: 10
        recordExceptions: [%[1]s]
      stock:
        slidingWindowSize: 10
        minimumNumberOfCalls: 10
        ignoreExceptions: [%[1]s]
`, class))
			require.NoError(t, err)
			reg, err := c.Registry()
			require.NoError(t, err)

			rt, ok := reg.FindRetry("payment")
			require.True(t, ok)
			for _, e := range []error{errors.New("plain"), fmt.Errorf("wrapped: %w", context.DeadlineExceeded)} {
				calls := 0
				_, err = retry.Execute(ctx, rt, func(context.Context) (int, error) { calls++; return 0, e })
				assert.ErrorIs(t, err, e)
				assert.Equal(t, 3, calls, "every error is retried: %v", e)
			}
			calls := 0
			_, err = retry.Execute(ctx, rt, func(context.Context) (int, error) {
				calls++
				return 0, circuitbreaker.ErrCallNotPermitted
			})
			assert.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
			assert.Equal(t, 1, calls, "a rejection is not retried")

			pay, ok := reg.FindCircuitBreaker("payment")
			require.True(t, ok)
			_, _ = circuitbreaker.Execute(ctx, pay, func(context.Context) (int, error) { return 0, errors.New("plain") })
			_, _ = circuitbreaker.Execute(ctx, pay, func(context.Context) (int, error) { return 0, bulkhead.ErrBulkheadFull })
			_, _ = circuitbreaker.Execute(ctx, pay, func(context.Context) (int, error) { return 1, nil })
			m := pay.Metrics()
			assert.Equal(t, 2, m.NumberOfBufferedCalls, "the rejection is not recorded")
			assert.Equal(t, 1, m.NumberOfFailedCalls)

			stock, ok := reg.FindCircuitBreaker("stock")
			require.True(t, ok)
			_, _ = circuitbreaker.Execute(ctx, stock, func(context.Context) (int, error) { return 0, errors.New("plain") })
			_, _ = circuitbreaker.Execute(ctx, stock, func(context.Context) (int, error) { return 1, nil })
			m = stock.Metrics()
			assert.Equal(t, 1, m.NumberOfBufferedCalls, "the error is ignored")
			assert.Equal(t, 0, m.NumberOfFailedCalls)
		})
	}
}

func TestShortCatchAllNamesNeedAnEntry(t *testing.T) {
	_, err := load(t, instance("retry", "retryExceptions: [Exception]"))
	assert.EqualError(t, err, `app.yml:5: resilience4j.retry.instances.x.retryExceptions[0]: unknown exception class "Exception": map it in Options.Errors to a Go error (a sentinel, matched with errors.Is) or to levee.ErrorType[*T]() (a type, matched with errors.As), write a built-in class (java.io.IOException, java.net.ConnectException, ...: see the package documentation), or skip it with ignoreClassBindingExceptions: true`)
}
