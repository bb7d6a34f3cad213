package levee_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
)

// A decorator may run next several times at once (a hedge waiting for every run): under
// ExecuteOutcome the runs must not race on the outcome of the fallback inside.
func TestOutcomeOfADecoratorRunningNextConcurrently(t *testing.T) {
	hedge := func(ctx context.Context, next func(context.Context) (string, error)) (string, error) {
		var wg sync.WaitGroup
		vs := make([]string, 4)
		for i := range vs {
			wg.Go(func() { vs[i], _ = next(ctx) })
		}
		wg.Wait()
		return vs[0], nil
	}
	p := levee.Compose[string]().WithFallback(newFallback(t, "stale")).With(hedge)
	failing := func(context.Context) (string, error) { return "", errBackend }
	for range 50 {
		v, out, err := p.ExecuteOutcome(context.Background(), failing)
		require.NoError(t, err)
		assert.Equal(t, "stale", v)
		assert.True(t, out.Fallback)
	}
}
