package ratelimiter_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/ratelimiter"
)

// The paths that take a free permission allocate nothing when nobody subscribes. The limiter
// has enough permissions for every run within its hour-long cycle, so no call waits.
func TestNoAllocationsWithoutWaiting(t *testing.T) {
	var rl *ratelimiter.RateLimiter
	ctx := context.Background()
	local := 0 // captured by the call: a call that escaped would be heap-allocated
	call := func(context.Context) (int, error) { local++; return local, nil }
	deadlineCtx, cancel := context.WithTimeout(ctx, time.Hour)
	defer cancel()

	for name, f := range map[string]func(){
		"AcquirePermission":       func() { _ = rl.AcquirePermission(ctx, 1) },
		"ReservePermission":       func() { _, _ = rl.ReservePermission(2) },
		"Execute":                 func() { _, _ = ratelimiter.Execute(ctx, rl, call) },
		"Execute with a deadline": func() { _, _ = ratelimiter.Execute(deadlineCtx, rl, call) },
		"Execute with a stack closure": func() {
			n := 0
			_, _ = ratelimiter.Execute(ctx, rl, func(context.Context) (int, error) { n++; return n, nil })
		},
		"Metrics":          func() { _ = rl.Metrics() },
		"DrainPermissions": func() { rl.DrainPermissions() },
	} {
		rl = newLimiter(t, 1<<20, time.Hour, ratelimiter.NoWait) // a fresh cycle for each
		assert.Zero(t, testing.AllocsPerRun(100, f), name)
	}
	assert.Positive(t, local)
}

// A refusal returns the limiter's one *RequestNotPermittedError: it allocates nothing, names the
// limiter and matches the sentinel, whether the cycle is exhausted or the wait is too long.
func TestRefusalDoesNotAllocate(t *testing.T) {
	rl, err := ratelimiter.New("payments", ratelimiter.Config{
		LimitForPeriod: 1, LimitRefreshPeriod: time.Hour, TimeoutDuration: ratelimiter.NoWait})
	assert.NoError(t, err)
	ctx := context.Background()
	assert.NoError(t, rl.AcquirePermission(ctx, 1))
	var last error
	for name, f := range map[string]func(){
		"AcquirePermission": func() { last = rl.AcquirePermission(ctx, 1) },
		"ReservePermission": func() { _, last = rl.ReservePermission(1) },
		"Execute": func() {
			_, last = ratelimiter.Execute(ctx, rl, func(context.Context) (int, error) { return 1, nil })
		},
	} {
		assert.Zero(t, testing.AllocsPerRun(100, f), name)
		assert.EqualError(t, last, "ratelimiter: RateLimiter 'payments' does not permit further calls", name)
		assert.ErrorIs(t, last, ratelimiter.ErrRequestNotPermitted, name)
		var rnp *ratelimiter.RequestNotPermittedError
		if assert.ErrorAs(t, last, &rnp, name) {
			assert.Equal(t, "payments", rnp.Name, name)
		}
	}
}
