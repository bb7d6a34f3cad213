package throttle_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/levee-go/levee/throttle"
)

// A backend that rejects every request: after a few requests the client sheds most calls
// itself, and its own refusals do not count as the backend's.
func Example() {
	n := 0.0
	t, err := throttle.New("backend", throttle.Config{
		K:      2,
		Random: func() float64 { n += 0.1; return n - float64(int(n)) }, // 0.1, 0.2, ... for a stable output
	})
	if err != nil {
		panic(err)
	}
	overloaded := func(context.Context) (string, error) { return "", errors.New("503") }
	sent, shed := 0, 0
	for range 100 {
		_, err := throttle.Execute(context.Background(), t, overloaded)
		if errors.Is(err, throttle.ErrThrottled) {
			shed++
		} else {
			sent++
		}
	}
	m := t.Metrics()
	fmt.Printf("sent %d, shed %d, probability %.2f\n", sent, shed, m.RejectionProbability)
	// Output:
	// sent 14, shed 86, probability 0.93
}
