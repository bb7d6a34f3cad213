package circuitbreaker

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	errHammerIgnored = errors.New("ignored")
	errHammerFailed  = errors.New("failed")
)

// TestHammerNoHalfOpenPeriodAdmitsMoreThanItsBudget: 32 goroutines take permits, hold them for
// a random time and complete them in every way, a few of them twice (OnSuccess, a recorded
// failure, an ignored error, Release, a second completion), while others run Execute with a
// caller cancellation at a random moment and one goroutine keeps opening and half-opening the
// breaker, so that permits granted in CLOSED and in earlier HALF_OPEN periods complete in
// later ones. No HALF_OPEN period ever has more than PermittedNumberOfCallsInHalfOpenState
// probes in flight, and once everything has stopped every period's books balance: no slot is
// still taken, and the permits left plus the probes that reported an outcome are exactly the
// budget.
func TestHammerNoHalfOpenPeriodAdmitsMoreThanItsBudget(t *testing.T) {
	const (
		budget     = 3
		goroutines = 32
		ops        = 400
	)
	b, err := New("hammer", Config{PermittedNumberOfCallsInHalfOpenState: budget, SlidingWindowSize: 4,
		MinimumNumberOfCalls: 4, IgnoreErrors: []error{errHammerIgnored}})
	require.NoError(t, err)
	require.NoError(t, b.TransitionToOpenState())
	require.NoError(t, b.TransitionToHalfOpenState())

	var mu sync.Mutex
	inFlight := map[*circuitState]*atomic.Int64{}
	counter := func(st *circuitState) *atomic.Int64 {
		mu.Lock()
		defer mu.Unlock()
		c := inFlight[st]
		if c == nil {
			c = new(atomic.Int64)
			inFlight[st] = c
		}
		return c
	}
	var over, admittedInHalfOpen atomic.Int64

	stop := make(chan struct{})
	var periods sync.WaitGroup
	periods.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_ = b.TransitionToOpenState()
			_ = b.TransitionToHalfOpenState()
			if i%3 == 2 {
				runtime.Gosched()
				_ = b.TransitionToClosedState()
			}
			runtime.Gosched()
		}
	})

	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 42))
			// At least ops each, and on until 100 probes have been admitted in all.
			for i := 0; i < ops || admittedInHalfOpen.Load() < 100; i++ {
				if g%4 == 3 { // a caller that cancels at a random moment
					ctx, cancel := context.WithCancel(context.Background())
					before, during := r.IntN(4), r.IntN(4)
					cancelled := make(chan struct{})
					go func() {
						defer close(cancelled)
						for range before {
							runtime.Gosched()
						}
						cancel()
					}()
					_, _ = Execute(ctx, b, func(ctx context.Context) (int, error) {
						for range during {
							runtime.Gosched()
						}
						return 0, ctx.Err()
					})
					<-cancelled
					continue
				}
				p, err := b.Acquire()
				if err != nil {
					continue
				}
				var c *atomic.Int64
				if p.st.kind == HalfOpen {
					admittedInHalfOpen.Add(1)
					c = counter(p.st)
					if c.Add(1) > budget {
						over.Add(1)
					}
				}
				for range r.IntN(8) {
					runtime.Gosched()
				}
				if c != nil {
					c.Add(-1) // before the permit can be handed back and granted again
				}
				complete := func(k int) {
					switch k {
					case 0:
						p.OnSuccess()
					case 1:
						p.OnError(errHammerFailed)
					case 2:
						p.OnError(errHammerIgnored)
					case 3:
						p.OnResult(nil, nil)
					default:
						p.Release()
					}
				}
				complete(r.IntN(5))
				if r.IntN(4) == 0 { // a mistaken second completion
					complete(r.IntN(5))
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	periods.Wait()

	assert.Zero(t, over.Load(), "probes in flight beyond the budget of their period")
	assert.GreaterOrEqual(t, admittedInHalfOpen.Load(), int64(100))
	mu.Lock()
	defer mu.Unlock()
	for st := range inFlight {
		var taken, done int64
		for i := range st.slots {
			switch st.slots[i].Load() & slotState {
			case slotTaken:
				taken++
			case slotDone:
				done++
			}
		}
		require.Zero(t, taken, "a probe still held after every caller returned")
		require.Equal(t, int64(budget), st.permits.Load()+done, "permits left + probes reported = budget")
	}
}

// TestOpenRefusalsReadTheClockOnlyNearTheEnd: for all but the last second of a long OPEN wait,
// a timer tells refusals that the wait cannot be over, so they read no clock; from then on
// they compare the clock with the deadline, which keeps the end exact. A wait of 2s or less
// reads the clock throughout.
func TestOpenRefusalsReadTheClockOnlyNearTheEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := New("open", Config{WaitDurationInOpenState: time.Minute})
		require.NoError(t, err)
		require.NoError(t, b.TransitionToOpenState())
		open := b.state.Load()
		time.Sleep(59*time.Second - 1)
		synctest.Wait()
		assert.False(t, open.ending.Load(), "1ns before the last second")
		_, err = b.Acquire()
		assert.ErrorIs(t, err, ErrCallNotPermitted)
		time.Sleep(1)
		synctest.Wait()
		assert.True(t, open.ending.Load(), "the last second: refusals read the clock")
		time.Sleep(time.Second)
		_, err = b.Acquire()
		assert.ErrorIs(t, err, ErrCallNotPermitted, "at the deadline")
		time.Sleep(1)
		_, err = b.Acquire()
		assert.NoError(t, err, "1ns after it")
		assert.Equal(t, int64(2), open.metrics.notPermitted.load())

		require.NoError(t, b.TransitionToOpenStateFor(2*time.Second))
		assert.True(t, b.state.Load().ending.Load(), "a 2s wait reads the clock from the start")
	})
}
