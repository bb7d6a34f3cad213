package timelimiter_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/timelimiter"
)

func TestCallerCancellationIsNotATimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newLimiter(t, timelimiter.Config{TimeoutDuration: time.Second})
		r := record(tl)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := timelimiter.Execute(ctx, tl, sleeper(5*time.Second, 1, nil))
		assert.Equal(t, 100*time.Millisecond, time.Since(start), "returned at once")
		assert.Equal(t, context.Canceled, err)
		assert.NotErrorIs(t, err, timelimiter.ErrTimeout)
		assert.Empty(t, r.get())
		assert.Equal(t, timelimiter.Metrics{NumberOfAbandonedCalls: 1}, tl.Metrics())
		time.Sleep(5 * time.Second)
		synctest.Wait()
		assert.Equal(t, timelimiter.Metrics{}, tl.Metrics())
	})
}

func TestCallerDeadlineBeforeTimeoutIsNotATimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newLimiter(t, timelimiter.Config{TimeoutDuration: time.Second})
		r := record(tl)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		for _, call := range []func(context.Context) (int, error){
			sleeper(time.Second*2, 1, nil),
			func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() },
		} {
			_, err := timelimiter.Execute(ctx, tl, call)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.NotErrorIs(t, err, timelimiter.ErrTimeout)
		}
		assert.Empty(t, r.get())
		time.Sleep(2 * time.Second)
		synctest.Wait()
		assert.Equal(t, timelimiter.Metrics{}, tl.Metrics())
	})
}

func TestEndedContextDoesNotStartTheCall(t *testing.T) {
	tl := newLimiter(t, timelimiter.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	_, err := timelimiter.Execute(ctx, tl, func(context.Context) (int, error) { called = true; return 1, nil })
	assert.Equal(t, context.Canceled, err)
	assert.False(t, called)
	assert.Equal(t, timelimiter.Metrics{}, tl.Metrics())
}
