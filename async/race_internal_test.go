package async

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An attempt that reported before the caller cancelled is received, not dropped for the
// cancellation: FirstSuccess returns its success. Choosing between the two at random, as a
// bare select does, failed about half of the rounds.
func TestRaceReceivesAResultThatCameBeforeTheCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for round := range 100 {
			ctx, cancel := context.WithCancel(context.Background())
			r := newRace(ctx, 1, func(context.Context, int) Result[int] { return Result[int]{Value: round} })
			r.start(0)
			synctest.Wait() // the attempt has reported
			cancel()
			a, ok := r.receive()
			require.True(t, ok, "round %d", round)
			assert.Equal(t, round, a.Value)
			assert.Equal(t, 0, r.running)
			r.finish()
		}
	})
}
