package ratelimiter_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/ratelimiter"
)

// 64 goroutines acquire various numbers of permissions with various deadlines, reserve and
// drain, all at once; afterwards every outcome is accounted for and no permission is lost.
func TestHammer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			limit      = 5
			period     = time.Second
			goroutines = 64
			rounds     = 30
		)
		rl := newLimiter(t, limit, period, 2*period)
		var successEvents, failedEvents, drainedEvents atomic.Int64
		rl.Subscribe(func(e ratelimiter.Event) {
			switch e.Type {
			case ratelimiter.EventSuccessfulAcquire:
				successEvents.Add(1)
			case ratelimiter.EventFailedAcquire:
				failedEvents.Add(1)
			case ratelimiter.EventDrained:
				drainedEvents.Add(1)
			}
		})

		a := newAdmissions(period)
		var reserved, reserveRefused, drains atomic.Int64
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(g), 7))
				for range rounds {
					switch op := rng.IntN(20); {
					case op == 0:
						rl.DrainPermissions()
						drains.Add(1)
					case op == 1:
						if _, err := rl.ReservePermission(1 + rng.IntN(limit)); err == nil {
							reserved.Add(1)
						} else {
							assert.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)
							reserveRefused.Add(1)
						}
					default:
						ctx, cancel := context.Background(), context.CancelFunc(func() {})
						switch d := time.Duration(rng.IntN(3)+1) * 700 * time.Millisecond; rng.IntN(3) {
						case 1:
							ctx, cancel = context.WithTimeout(ctx, d)
						case 2:
							ctx, cancel = cancelAfter(ctx, d)
						}
						a.acquire(ctx, rl, 1+rng.IntN(limit))
						cancel()
					}
					time.Sleep(time.Duration(rng.IntN(4)) * 150 * time.Millisecond)
				}
			})
		}
		wg.Wait()

		acquired := int64(sum(a.callers))
		total := int64(goroutines * rounds)
		assert.Equal(t, total, acquired+int64(a.refused+a.canceled)+reserved.Load()+reserveRefused.Load()+drains.Load(),
			"every request has one outcome")
		assert.Equal(t, acquired+reserved.Load(), successEvents.Load())
		assert.Equal(t, int64(a.refused+a.canceled)+reserveRefused.Load(), failedEvents.Load())
		assert.Equal(t, drains.Load(), drainedEvents.Load())
		assert.Positive(t, acquired)
		assert.Positive(t, a.refused)
		assert.Positive(t, a.canceled)

		var cumulative int
		last := int64(0)
		for c := range a.callers {
			last = max(last, c)
		}
		for c := range last + 1 {
			assert.LessOrEqual(t, a.callers[c], limit, "callers proceeding in cycle %d", c)
			cumulative += a.permits[c]
			assert.LessOrEqual(t, cumulative, int(c+1)*limit, "permits proceeding by cycle %d", c)
		}

		// Quiescence: nobody waits, and once the reservations' cycles have passed, a cycle has
		// all its permissions again.
		assert.Zero(t, rl.Metrics().NumberOfWaitingCalls)
		time.Sleep(3 * period)
		m := rl.Metrics()
		assert.Equal(t, limit, m.AvailablePermissions)
		assert.Zero(t, m.NumberOfWaitingCalls)
		for range limit {
			wait, err := rl.ReservePermission(1)
			require.NoError(t, err)
			assert.Zero(t, wait)
		}
		wait, err := rl.ReservePermission(1)
		require.NoError(t, err)
		assert.Equal(t, period-time.Duration(int64(time.Since(a.created))%int64(period)), wait)
	})
}
