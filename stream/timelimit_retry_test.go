package stream_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/stream"
	"github.com/levee-go/levee/timelimiter"
)

// A time limit expiring while a matching element is being decided (here a slow
// ConsumeResultBeforeRetryAttempt, past the 100ms limit) does not count the attempt twice:
// the match ends it, the stream gets its MaxAttempts, and the element the predicate refused
// is never delivered while attempts are left.
func TestSubscribeRetryOnResultRacingTheTimeLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var consumed []int
		rt := newRetry(t, retry.Config{
			MaxAttempts: 3, WaitDuration: retry.NoWait,
			RetryOnResultPredicate: func(v any) bool { return v.(int) < 3 },
			ConsumeResultBeforeRetryAttempt: func(attempt int, _ any) {
				consumed = append(consumed, attempt)
				time.Sleep(200 * time.Millisecond) // the limit expires meanwhile
			},
		})
		tl := newTimeLimiter(t, timelimiter.Config{TimeoutDuration: 100 * time.Millisecond})
		attempt := 0
		items, err := stream.Subscribe(t.Context(), levee.Patterns{Retry: rt, TimeLimiter: tl},
			stream.Source[int](func(ctx context.Context, emit func(int) error) error {
				attempt++
				return emit(attempt) // 1 and 2 match, 3 does not
			}), stream.TimeLimit(stream.BoundStream))
		require.NoError(t, err)
		assert.Equal(t, []stream.Item[int]{{Value: 3, Attempt: 3}}, drain(items))
		assert.Equal(t, []int{1, 2}, consumed)
		assert.Equal(t, 3, attempt)
	})
}
