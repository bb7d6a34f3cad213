package operators_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/operators"
	"github.com/levee-go/levee/ratelimiter"
)

// A nil pipeline refuses nothing: a rejection the function returns is its error, not a hold
// that nothing could ever end.
func TestPauseWhileOpenNilPipelineFunctionReturnsRejection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var p *levee.Pipeline[int]
		op, err := operators.Map(p, func(_ context.Context, v int) (int, error) {
			if v == 2 {
				return 0, ratelimiter.ErrRequestNotPermitted
			}
			return v * 10, nil
		}, operators.PauseWhileOpen(0), operators.ContinueOnError())
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		got, _ := observeCtx(ctx, op(rxgo.Just(ints(3)...)()))
		assert.Equal(t, []string{"10", "E:" + ratelimiter.ErrRequestNotPermitted.Error(), "30"}, got)
		assert.Equal(t, time.Duration(0), time.Since(start))
	})
}
