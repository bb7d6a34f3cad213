package timelimiter_test

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

	"github.com/levee-go/levee/internal/safe"
	"github.com/levee-go/levee/timelimiter"
)

// 64 goroutines execute calls around the deadline: in time, late, honouring or ignoring their
// context, failing, panicking, cancelled by their caller. After quiescence the counters and the
// events add up to the executions and no call is left abandoned.
func TestHammerCountsAddUpAndNothingIsLeftRunning(t *testing.T) {
	for _, disable := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			const timeout = 100 * time.Microsecond
			tl := newLimiter(t, timelimiter.Config{TimeoutDuration: timeout, DisableCancelRunningFuture: disable})
			var evSuccess, evError, evTimeout atomic.Int64
			tl.Subscribe(func(e timelimiter.Event) {
				switch e.Type {
				case timelimiter.EventSuccess:
					evSuccess.Add(1)
				case timelimiter.EventError:
					evError.Add(1)
				case timelimiter.EventTimeout:
					evTimeout.Add(1)
				}
			})
			var ok, failed, timedOut, cancelled atomic.Int64
			var wg sync.WaitGroup
			for g := range 64 {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(uint64(g), 2))
					for range 100 {
						d := time.Duration(r.IntN(200)) * time.Microsecond
						honours, mode := r.IntN(2) == 0, r.IntN(10)
						ctx, cancel := context.Background(), context.CancelFunc(func() {})
						if r.IntN(5) == 0 {
							ctx, cancel = context.WithTimeout(ctx, time.Duration(r.IntN(150))*time.Microsecond)
						}
						_, err := timelimiter.Execute(ctx, tl, func(ctx context.Context) (int, error) {
							if honours {
								select {
								case <-time.After(d):
								case <-ctx.Done():
									return 0, ctx.Err()
								}
							} else {
								time.Sleep(d)
							}
							switch mode {
							case 0:
								panic("hammer")
							case 1:
								return 0, errBoom
							}
							return 1, nil
						})
						cancel()
						switch {
						case err == nil:
							ok.Add(1)
						case errors.Is(err, timelimiter.ErrTimeout):
							timedOut.Add(1)
						case errors.Is(err, errBoom), errors.As(err, new(*safe.PanicError)):
							failed.Add(1)
						case errors.Is(err, context.DeadlineExceeded):
							cancelled.Add(1)
						default:
							t.Errorf("unexpected error %v", err)
						}
					}
				})
			}
			wg.Wait()
			time.Sleep(time.Second) // every abandoned call returns
			synctest.Wait()
			assert.Equal(t, int64(64*100), ok.Load()+failed.Load()+timedOut.Load()+cancelled.Load())
			assert.Equal(t, timelimiter.Metrics{
				NumberOfSuccessfulCalls: ok.Load(),
				NumberOfFailedCalls:     failed.Load(),
				NumberOfTimedOutCalls:   timedOut.Load(),
			}, tl.Metrics())
			assert.Equal(t, ok.Load(), evSuccess.Load())
			assert.Equal(t, failed.Load(), evError.Load())
			assert.Equal(t, timedOut.Load(), evTimeout.Load())
			assert.Positive(t, timedOut.Load())
			assert.Positive(t, cancelled.Load())
		})
	}
}
