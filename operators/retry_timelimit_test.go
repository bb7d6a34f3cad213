package operators_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/operators"
	"github.com/levee-go/levee/retry"
)

// As for stream.Subscribe: a time limit expiring while a matching element is being decided
// (a slow ConsumeResultBeforeRetryAttempt, past the 100ms limit) does not count the attempt
// twice: the match ends it, the subscription gets its MaxAttempts, and the element the
// predicate refused is never emitted while attempts are left.
func TestGuardRetryOnResultRacingTheTimeLimit(t *testing.T) {
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
		attempt := 0
		src := func(context.Context) (rxgo.Observable, error) {
			attempt++
			return rxgo.Just(attempt)(), nil // 1 and 2 match, 3 does not
		}
		obs := mustGuard(t)(operators.Guard(levee.Patterns{Retry: rt, TimeLimiter: newTimeLimiter(t, 100*time.Millisecond)},
			nil, src, operators.TimeLimit(operators.BoundStream)))
		got, _ := observeCtx(t.Context(), obs)
		assert.Equal(t, []string{"3"}, got)
		assert.Equal(t, []int{1, 2}, consumed)
		assert.Equal(t, 3, attempt)
	})
}
