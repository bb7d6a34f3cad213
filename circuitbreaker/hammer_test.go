package circuitbreaker_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cb "github.com/levee-go/levee/circuitbreaker"
)

const (
	hammerGoroutines = 64
	hammerOps        = 300
)

// TestHammerCountsAddUp records from 64 goroutines at once and checks that every snapshot taken
// meanwhile is consistent and that, once they stop, the window holds exactly what was recorded.
func TestHammerCountsAddUp(t *testing.T) {
	total := hammerGoroutines * hammerOps
	windows := []struct {
		name string
		cfg  cb.Config
		size int // expected buffered calls at the end
	}{
		{"lock-free count window larger than the load", cb.Config{SlidingWindowSize: 32768}, total},
		{"lock-free count window smaller than the load", cb.Config{SlidingWindowSize: 50}, 50},
		{"locked count window", cb.Config{SlidingWindowSize: 40000}, total},
		{"time window", cb.Config{SlidingWindowType: cb.TimeBased, SlidingWindowSize: 3600}, total},
	}
	for _, w := range windows {
		t.Run(w.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := w.cfg
				cfg.InitialState = cb.MetricsOnly // records everything, never opens
				cfg.SlowCallDurationThreshold = time.Second
				b := mustNew(t, cfg)
				var want counts
				var mu sync.Mutex
				stop := make(chan struct{})
				var readers sync.WaitGroup
				readers.Go(func() {
					for {
						select {
						case <-stop:
							return
						case <-time.After(100 * time.Millisecond):
						}
						m := b.Metrics()
						// every single snapshot is consistent, even while recorders race
						if m.NumberOfFailedCalls < 0 || m.NumberOfSuccessfulCalls < 0 || m.NumberOfSlowFailedCalls < 0 ||
							m.NumberOfSlowSuccessfulCalls < 0 || m.NumberOfSlowFailedCalls > m.NumberOfFailedCalls ||
							m.NumberOfSlowCalls > m.NumberOfBufferedCalls || m.NumberOfBufferedCalls > w.size+hammerGoroutines {
							t.Errorf("inconsistent snapshot %+v", m)
							return
						}
					}
				})
				var wg sync.WaitGroup
				for g := range hammerGoroutines {
					wg.Go(func() {
						var mine counts
						for i := range hammerOps {
							slow := (g+i)%3 == 0
							p := acquire(t, b)
							if slow {
								time.Sleep(2 * time.Second)
							}
							if (g*7+i)%4 == 0 {
								p.OnError(errBoom)
								mine.failed++
								if slow {
									mine.slowFailed++
								}
							} else {
								p.OnSuccess()
								mine.successful++
								if slow {
									mine.slowSuccessful++
								}
							}
							mine.buffered++
							if slow {
								mine.slow++
							}
						}
						mu.Lock()
						want.buffered += mine.buffered
						want.failed += mine.failed
						want.successful += mine.successful
						want.slow += mine.slow
						want.slowFailed += mine.slowFailed
						want.slowSuccessful += mine.slowSuccessful
						mu.Unlock()
					})
				}
				wg.Wait()
				close(stop)
				readers.Wait()
				m := b.Metrics()
				assert.Equal(t, w.size, m.NumberOfBufferedCalls)
				assert.Equal(t, m.NumberOfBufferedCalls, m.NumberOfSuccessfulCalls+m.NumberOfFailedCalls)
				assert.Equal(t, m.NumberOfSlowCalls, m.NumberOfSlowSuccessfulCalls+m.NumberOfSlowFailedCalls)
				if w.size == total {
					assert.Equal(t, want, countsOf(m), "every outcome counted exactly once")
				}
			})
		})
	}
}

// TestHammerHalfOpenPermitsAreNeverLostOrDuplicated: 64 goroutines compete for 5 probe
// permits with outcomes that hand them back (ignored errors, cancellations) while another
// goroutine keeps replacing the HALF_OPEN period. When everything has stopped, every call was
// either admitted or refused, and the last period has exactly its 5 permits: none lost, none
// added by a call that started in an earlier period.
func TestHammerHalfOpenPermitsAreNeverLostOrDuplicated(t *testing.T) {
	const permitted = 5
	b := mustNew(t, cb.Config{PermittedNumberOfCallsInHalfOpenState: permitted, IgnoreErrors: []error{errInvalid}})
	require.NoError(t, b.TransitionToOpenState())
	require.NoError(t, b.TransitionToHalfOpenState())

	var admitted, refused atomic.Int64
	stop := make(chan struct{})
	var transitions sync.WaitGroup
	transitions.Go(func() {
		for {
			select {
			case <-stop:
				assert.NoError(t, b.TransitionToHalfOpenState()) // a last, untouched period
				return
			default:
			}
			assert.NoError(t, b.TransitionToHalfOpenState())
		}
	})
	var wg sync.WaitGroup
	for g := range hammerGoroutines {
		wg.Go(func() {
			for i := range hammerOps {
				ctx, cancel := context.WithCancel(context.Background())
				_, err := cb.Execute(ctx, b, func(ctx context.Context) (int, error) {
					admitted.Add(1)
					if (g+i)%2 == 0 {
						cancel()
						return 0, ctx.Err()
					}
					return 0, errInvalid
				})
				cancel()
				if err != nil && err != errInvalid && err != context.Canceled {
					assert.ErrorIs(t, err, cb.ErrCallNotPermitted)
					refused.Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	transitions.Wait()

	assert.Equal(t, int64(hammerGoroutines*hammerOps), admitted.Load()+refused.Load())
	assert.Positive(t, admitted.Load())
	assert.Equal(t, cb.HalfOpen, b.State())
	assert.Equal(t, counts{}, countsOf(b.Metrics()))
	for i := range permitted {
		require.NoError(t, try(b), "permit %d", i+1)
	}
	assert.ErrorIs(t, try(b), cb.ErrCallNotPermitted, "exactly %d permits", permitted)
}

// TestHammerSamePeriodPermits: without period changes, concurrency never exceeds the permits
// and the refusals counted by the breaker are exactly those the callers saw.
func TestHammerSamePeriodPermits(t *testing.T) {
	const permitted = 3
	b := mustNew(t, cb.Config{PermittedNumberOfCallsInHalfOpenState: permitted, IgnoreErrors: []error{errInvalid}})
	require.NoError(t, b.TransitionToOpenState())
	require.NoError(t, b.TransitionToHalfOpenState())
	var inFlight, peak, refused atomic.Int64
	var wg sync.WaitGroup
	for g := range hammerGoroutines {
		wg.Go(func() {
			for i := range hammerOps {
				if (g+i)%3 == 0 { // the low-level API: take, then hand back
					permit, err := b.Acquire()
					if err != nil {
						refused.Add(1)
						continue
					}
					n := inFlight.Add(1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					inFlight.Add(-1)
					permit.Release()
					continue
				}
				_, err := cb.Execute(context.Background(), b, func(context.Context) (int, error) {
					n := inFlight.Add(1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					inFlight.Add(-1)
					return 0, errInvalid
				})
				if err != errInvalid {
					assert.ErrorIs(t, err, cb.ErrCallNotPermitted)
					refused.Add(1)
				}
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, peak.Load(), int64(permitted))
	assert.Equal(t, int(refused.Load()), b.Metrics().NumberOfNotPermittedCalls)
	for range permitted {
		require.NoError(t, try(b))
	}
	assert.Error(t, try(b))
}

// TestHammerMixedOutcomesAndTransitions throws every kind of outcome and transition at one
// breaker from 64 goroutines; afterwards its metrics must be self-consistent and it must still
// work normally.
func TestHammerMixedOutcomesAndTransitions(t *testing.T) {
	for _, typ := range []cb.SlidingWindowType{cb.CountBased, cb.TimeBased} {
		t.Run(typ.String(), func(t *testing.T) {
			b := mustNew(t, cb.Config{SlidingWindowType: typ, SlidingWindowSize: 20, MinimumNumberOfCalls: 10,
				PermittedNumberOfCallsInHalfOpenState: 4, WaitDurationInOpenState: time.Millisecond,
				IgnoreErrors: []error{errInvalid}, SlowCallDurationThreshold: time.Millisecond})
			var published atomic.Int64
			b.Subscribe(func(e cb.Event) { published.Add(1); _ = b.Metrics() })
			var wg sync.WaitGroup
			for g := range hammerGoroutines {
				wg.Go(func() {
					for i := range hammerOps {
						switch (g + i) % 11 {
						case 0:
							_ = b.TransitionToOpenState()
						case 1:
							_ = b.TransitionToHalfOpenState()
						case 2:
							if i%5 == 0 {
								b.Reset()
							}
						case 3:
							_, _ = cb.Execute(context.Background(), b, func(context.Context) (int, error) { panic("x") })
						case 4:
							_ = run(b, 0, errInvalid)
						case 5:
							ctx, cancel := context.WithCancel(context.Background())
							_, _ = cb.Execute(ctx, b, func(ctx context.Context) (int, error) { cancel(); return 0, ctx.Err() })
						case 6, 7:
							_ = fail(b)
						default:
							_ = ok(b)
							if p, err := b.Acquire(); err == nil {
								p.OnResult(i, nil)
							}
						}
					}
				})
			}
			wg.Wait()
			m := b.Metrics()
			assert.Equal(t, m.NumberOfBufferedCalls, m.NumberOfSuccessfulCalls+m.NumberOfFailedCalls)
			assert.Equal(t, m.NumberOfSlowCalls, m.NumberOfSlowSuccessfulCalls+m.NumberOfSlowFailedCalls)
			assert.LessOrEqual(t, m.NumberOfBufferedCalls, 20)
			assert.GreaterOrEqual(t, m.NumberOfFailedCalls, m.NumberOfSlowFailedCalls)
			assert.Positive(t, published.Load())

			// still a working breaker
			b.Reset()
			for range 10 {
				_ = fail(b)
			}
			assert.Equal(t, cb.Open, b.State())
		})
	}
}
