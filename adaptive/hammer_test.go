package adaptive_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/adaptive"
)

// Callers that queue, give up, cancel, fail and time out at random leave no permit and no
// waiter behind, never exceed the limit, and are each counted once as permitted or rejected.
func TestHammerLeavesNothingBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(t, adaptive.Config{InitialLimit: 4, MaxLimit: 6, MaxQueued: 8, MaxWaitDuration: 3 * time.Millisecond})
		var inFlight, peak, attempts atomic.Int64
		var limitSeen sync.Mutex
		maxLimit := 0
		l.Subscribe(func(e adaptive.Event) {
			if e.Type == adaptive.EventLimitChanged {
				limitSeen.Lock()
				maxLimit = max(maxLimit, e.Limit)
				limitSeen.Unlock()
			}
		})
		var wg sync.WaitGroup
		for g := range 32 {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), 2))
				for range 200 {
					ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.IntN(6))*time.Millisecond)
					attempts.Add(1)
					adaptive.Execute(ctx, l, func(ctx context.Context) (int, error) {
						n := inFlight.Add(1)
						defer inFlight.Add(-1)
						for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
						}
						time.Sleep(time.Duration(r.IntN(4)) * time.Millisecond)
						switch r.IntN(4) {
						case 0:
							return 0, errors.New("boom")
						case 1:
							return 0, context.DeadlineExceeded
						}
						return 1, ctx.Err()
					})
					cancel()
				}
			})
		}
		wg.Wait()
		m := l.Metrics()
		assert.Zero(t, m.InFlight)
		assert.Zero(t, m.Queued)
		assert.Equal(t, uint64(attempts.Load()), m.Permitted+m.Rejected)
		assert.LessOrEqual(t, peak.Load(), int64(6), "MaxLimit")
		assert.LessOrEqual(t, maxLimit, 6)
		assert.Positive(t, m.Rejected)
		assert.Positive(t, m.Dropped)
	})
}

func TestEvents(t *testing.T) {
	l := newLimiter(t, adaptive.Config{InitialLimit: 1, MaxLimit: 1})
	ctx, cancel := context.WithCancel(context.Background())
	events, dropped := l.Events(ctx, 4)
	p := acquire(t, l)
	_, err := l.Acquire(context.Background())
	assert.ErrorIs(t, err, adaptive.ErrLimitExceeded)
	p.OnSuccess()
	cancel()
	var got []string
	for e := range events {
		assert.Equal(t, "dependency", e.Name)
		assert.Equal(t, -1, e.Limit)
		got = append(got, e.Type.String())
	}
	assert.Equal(t, []string{"CALL_PERMITTED", "CALL_REJECTED"}, got)
	assert.Zero(t, dropped())

	synctest.Test(t, func(t *testing.T) {
		seq, _ := l.EventSeq(context.Background(), 4)
		var first adaptive.Event
		done := make(chan struct{})
		go func() {
			defer close(done)
			for e := range seq {
				first = e
				break
			}
		}()
		synctest.Wait() // subscribed
		p := acquire(t, l)
		p.OnIgnore()
		<-done
		assert.Equal(t, adaptive.EventCallPermitted, first.Type)
	})
	var nl *adaptive.Limiter
	ch, _ := nl.Events(context.Background(), 1)
	_, open := <-ch
	assert.False(t, open)
}
