package ratelimiter_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/ratelimiter"
)

func newLimiter(t *testing.T, limit int, period, timeout time.Duration) *ratelimiter.RateLimiter {
	t.Helper()
	rl, err := ratelimiter.New("test", ratelimiter.Config{
		LimitForPeriod:     limit,
		LimitRefreshPeriod: period,
		TimeoutDuration:    timeout,
	})
	require.NoError(t, err)
	return rl
}

// recorder collects a limiter's events.
type recorder struct {
	mu     sync.Mutex
	events []ratelimiter.Event
}

func record(t *testing.T, rl *ratelimiter.RateLimiter) *recorder {
	r := &recorder{}
	t.Cleanup(rl.Subscribe(func(e ratelimiter.Event) {
		r.mu.Lock()
		r.events = append(r.events, e)
		r.mu.Unlock()
	}))
	return r
}

func (r *recorder) take() []ratelimiter.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.events
	r.events = nil
	return e
}

// available returns the limiter's available permissions now.
func available(rl *ratelimiter.RateLimiter) int { return rl.Metrics().AvailablePermissions }

// cancelAfter returns a context cancelled after d — not a deadline, which AcquirePermission
// would see ahead and refuse at once.
func cancelAfter(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	timer := time.AfterFunc(d, cancel)
	return ctx, func() { timer.Stop(); cancel() }
}
