package timelimiter_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/levee-go/levee/timelimiter"
)

// bubbleTB hides *testing.T from rapid, which would otherwise call t.Deadline, a call
// testing forbids inside a synctest bubble.
type bubbleTB struct{ testing.TB }

// TestTimeLimiterMatchesModel runs executions with random call durations, calls that honour
// or ignore their context, errors, caller cancellations and pauses, and checks each outcome,
// the time it took, the counters and the number of abandoned calls still running against a
// model computed from the instants involved. Ties between instants are left to the dedicated
// exactly-at-deadline test.
func TestTimeLimiterMatchesModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rapid.Check(bubbleTB{t}, func(rt *rapid.T) {
			ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
			timeout := ms(rapid.IntRange(10, 100).Draw(rt, "timeoutMs"))
			cancelRunning := rapid.Bool().Draw(rt, "cancelRunning")
			tl, err := timelimiter.New("model", timelimiter.Config{TimeoutDuration: timeout, DisableCancelRunningFuture: !cancelRunning})
			if err != nil {
				rt.Fatal(err)
			}
			var want timelimiter.Metrics
			var running []time.Time // when each abandoned call will return
			var cancels []context.CancelFunc
			defer func() {
				for _, c := range cancels {
					c()
				}
				time.Sleep(time.Second)
				synctest.Wait()
			}()

			steps := rapid.IntRange(1, 20).Draw(rt, "steps")
			for range steps {
				d := ms(rapid.IntRange(0, 250).Draw(rt, "callMs"))
				honours := rapid.Bool().Draw(rt, "honours")
				fails := rapid.Bool().Draw(rt, "fails")
				cancelAt := time.Duration(-1)
				if rapid.Bool().Draw(rt, "cancels") {
					cancelAt = ms(rapid.IntRange(1, 250).Draw(rt, "cancelMs"))
				}
				if d == timeout || cancelAt == timeout || cancelAt == d {
					continue // a tie: either outcome would be right
				}

				ctx, cancel := context.WithCancel(context.Background())
				cancels = append(cancels, cancel)
				if cancelAt >= 0 {
					time.AfterFunc(cancelAt, cancel)
				}
				call := func(ctx context.Context) (int, error) {
					if honours {
						select {
						case <-time.After(d):
						case <-ctx.Done():
							return 0, ctx.Err()
						}
					} else {
						time.Sleep(d)
					}
					if fails {
						return 0, errBoom
					}
					return 1, nil
				}

				start := time.Now()
				v, err := timelimiter.Execute(ctx, tl, call)
				took := time.Since(start)

				// The model: the caller wakes at the first of the call's return, the deadline
				// and its own cancellation.
				cancelled := cancelAt >= 0 && cancelAt < min(d, timeout)
				var wantTook, callEnds time.Duration
				switch {
				case cancelled:
					wantTook, callEnds = cancelAt, d
					if honours {
						callEnds = cancelAt
					}
					if !errors.Is(err, context.Canceled) || errors.Is(err, timelimiter.ErrTimeout) {
						rt.Fatalf("cancelled: got %v", err)
					}
				case d < timeout:
					wantTook, callEnds = d, d
					if fails {
						want.NumberOfFailedCalls++
						if err != errBoom {
							rt.Fatalf("failing call: got %v", err)
						}
					} else {
						want.NumberOfSuccessfulCalls++
						if err != nil || v != 1 {
							rt.Fatalf("call in time: got %v, %v", v, err)
						}
					}
				default:
					wantTook, callEnds = timeout, d
					switch {
					case honours && cancelRunning:
						callEnds = timeout
					case honours && cancelAt >= 0:
						callEnds = min(d, cancelAt)
					}
					want.NumberOfTimedOutCalls++
					if !errors.Is(err, timelimiter.ErrTimeout) {
						rt.Fatalf("late call: got %v", err)
					}
				}
				if took != wantTook {
					rt.Fatalf("took %v, model %v", took, wantTook)
				}
				if callEnds > wantTook {
					running = append(running, start.Add(callEnds))
				}

				time.Sleep(ms(rapid.IntRange(0, 100).Draw(rt, "pauseMs")))
				synctest.Wait()
				now, still := time.Now(), running[:0]
				for _, end := range running {
					if end.After(now) {
						still = append(still, end)
					}
				}
				running = still
				want.NumberOfAbandonedCalls = len(running)
				if got := tl.Metrics(); got != want {
					rt.Fatalf("metrics %+v, model %+v", got, want)
				}
			}
		})
	})
}
