package levee_test

import (
	"context"
	"fmt"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/retry"
)

// A decorator of one's own in a pipeline: here it logs each attempt the retry makes, because
// it was added before the retry and so runs inside it.
func ExamplePipeline_With() {
	attempt := 0
	logAttempt := func(ctx context.Context, next func(context.Context) (string, error)) (string, error) {
		attempt++
		v, err := next(ctx)
		fmt.Printf("attempt %d: %q %v\n", attempt, v, err)
		return v, err
	}
	r := levee.Must(retry.New("quotes", retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait}))
	p := levee.Compose[string]().With(logAttempt).WithRetry(r)

	calls := 0
	quote := func(context.Context) (string, error) {
		calls++
		if calls < 2 {
			return "", fmt.Errorf("quotes: timeout")
		}
		return "EUR/USD 1.09", nil
	}
	v, err := p.Execute(context.Background(), quote)
	fmt.Println(v, err)
	// Output:
	// attempt 1: "" quotes: timeout
	// attempt 2: "EUR/USD 1.09" <nil>
	// EUR/USD 1.09 <nil>
}
