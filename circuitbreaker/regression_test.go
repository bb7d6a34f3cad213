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

// TestTenCallersAfterOpenWaitWithTwoPermits: ten callers arriving together just after the open
// wait, with two half-open permits, get exactly two admissions.
func TestTenCallersAfterOpenWaitWithTwoPermits(t *testing.T) {
	for _, auto := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			cfg := small()
			cfg.AutomaticTransitionFromOpenToHalfOpenEnabled = auto
			b := mustNew(t, cfg)
			ev := record(b)
			require.NoError(t, b.TransitionToOpenState())
			time.Sleep(10*time.Second + time.Millisecond)

			var admitted, refused atomic.Int32
			start := make(chan struct{})
			var wg sync.WaitGroup
			for range 10 {
				wg.Go(func() {
					<-start
					_, err := cb.Execute(context.Background(), b, func(context.Context) (int, error) {
						admitted.Add(1)
						time.Sleep(time.Second) // every probe is still running when the others arrive
						return 1, nil
					})
					if err != nil {
						assert.ErrorIs(t, err, cb.ErrCallNotPermitted)
						refused.Add(1)
					}
				})
			}
			close(start)
			wg.Wait()
			assert.Equal(t, int32(2), admitted.Load())
			assert.Equal(t, int32(8), refused.Load())
			assert.Equal(t, cb.Closed, b.State(), "the two probes succeeded")
			assert.Equal(t, []string{"CLOSED>OPEN", "OPEN>HALF_OPEN", "HALF_OPEN>CLOSED"}, ev.transitions(),
				"exactly one OPEN>HALF_OPEN however many callers raced for it")
			n := 0
			for _, e := range ev.list() {
				if e.Type == cb.EventNotPermitted {
					n++
				}
			}
			assert.Equal(t, 8, n, "one NOT_PERMITTED per refused caller")
		})
	}
}

// TestCancelledHalfOpenProbeReturnsItsPermit: a half-open probe whose caller cancels hands its
// permit back, so the breaker is never stuck in HALF_OPEN.
func TestCancelledHalfOpenProbeReturnsItsPermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := small()
		cfg.PermittedNumberOfCallsInHalfOpenState = 1
		b := mustNew(t, cfg)
		require.NoError(t, b.TransitionToOpenState())
		require.NoError(t, b.TransitionToHalfOpenState())

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() {
			_, err := cb.Execute(ctx, b, func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() })
			done <- err
		}()
		synctest.Wait()
		require.ErrorIs(t, try(b), cb.ErrCallNotPermitted, "the probe holds the only permit")
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
		assert.Equal(t, cb.HalfOpen, b.State())
		assert.Equal(t, 0, b.Metrics().NumberOfBufferedCalls, "nothing recorded")

		require.NoError(t, ok(b), "the permit is back")
		assert.Equal(t, cb.Closed, b.State())
	})
}

// TestOutcomeCountedOnce: whichever way a call ends, it is counted exactly once (or, for
// cancellation and ignored errors, not at all) and publishes exactly one event.
func TestOutcomeCountedOnce(t *testing.T) {
	cases := []struct {
		name  string
		call  func(ctx context.Context, cancel func()) (int, error)
		want  counts
		event cb.EventType
	}{
		{"success", func(context.Context, func()) (int, error) { return 1, nil }, counts{buffered: 1, successful: 1}, cb.EventSuccess},
		{"error", func(context.Context, func()) (int, error) { return 0, errBoom }, counts{buffered: 1, failed: 1}, cb.EventError},
		{"panic", func(context.Context, func()) (int, error) { panic(errBoom) }, counts{buffered: 1, failed: 1}, cb.EventError},
		{"ignored", func(context.Context, func()) (int, error) { return 0, errInvalid }, counts{}, cb.EventIgnoredError},
		{"cancelled", func(ctx context.Context, cancel func()) (int, error) { cancel(); return 0, ctx.Err() }, counts{}, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := small()
			cfg.MinimumNumberOfCalls = 3
			cfg.PermittedNumberOfCallsInHalfOpenState = 3
			cfg.IgnoreErrors = []error{errInvalid}
			b := mustNew(t, cfg)
			require.NoError(t, b.TransitionToOpenState())
			require.NoError(t, b.TransitionToHalfOpenState())
			ev := record(b)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, _ = cb.Execute(ctx, b, func(ctx context.Context) (int, error) { return tc.call(ctx, cancel) })

			assert.Equal(t, tc.want, countsOf(b.Metrics()))
			if tc.event < 0 {
				assert.Empty(t, ev.types())
			} else {
				assert.Equal(t, []cb.EventType{tc.event}, ev.types())
			}
			permitsLeft := 0
			for try(b) == nil {
				permitsLeft++
			}
			assert.Equal(t, 3-tc.want.buffered, permitsLeft, "a permit is consumed only by a recorded outcome")
		})
	}
}

// TestLatePermitDoesNotInflateLaterHalfOpenPeriod: a call admitted in one HALF_OPEN period that
// is cancelled after the breaker moved on gives its permit back to that period, not to the
// current one.
func TestLatePermitDoesNotInflateLaterHalfOpenPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, small()) // 2 permits
		require.NoError(t, b.TransitionToOpenState())
		require.NoError(t, b.TransitionToHalfOpenState())
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = cb.Execute(ctx, b, func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() })
		}()
		synctest.Wait()
		require.NoError(t, b.TransitionToOpenState())
		require.NoError(t, b.TransitionToHalfOpenState()) // a new period with 2 permits
		cancel()
		<-done
		require.NoError(t, try(b))
		require.NoError(t, try(b))
		assert.ErrorIs(t, try(b), cb.ErrCallNotPermitted, "still 2, not 3")
	})
}

// TestConsumerCallingBackIntoBreaker: event consumers run outside every lock, so one may read
// and even transition the breaker that published the event.
func TestConsumerCallingBackIntoBreaker(t *testing.T) {
	for _, typ := range []cb.SlidingWindowType{cb.CountBased, cb.TimeBased} {
		t.Run(typ.String(), func(t *testing.T) {
			cfg := small()
			cfg.SlidingWindowType = typ
			cfg.MinimumNumberOfCalls = 2
			b := mustNew(t, cfg)
			var seen []string
			b.Subscribe(func(e cb.Event) {
				m := b.Metrics()
				seen = append(seen, e.Type.String()+"@"+b.State().String()+"/"+m.State.String())
				if e.Type == cb.EventStateTransition && e.To == cb.Open {
					assert.NoError(t, b.TransitionToHalfOpenState())
				}
			})
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = fail(b)
				_ = fail(b)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("deadlock: a consumer calling back into the breaker blocked")
			}
			assert.Equal(t, []string{
				"ERROR@CLOSED/CLOSED",
				"ERROR@CLOSED/CLOSED",             // ERROR is published before the outcome is recorded
				"FAILURE_RATE_EXCEEDED@OPEN/OPEN", // the rest after the state was updated
				"STATE_TRANSITION@OPEN/OPEN",
				"STATE_TRANSITION@HALF_OPEN/HALF_OPEN", // published by the consumer's own call
			}, seen)
			assert.Equal(t, cb.HalfOpen, b.State())
		})
	}
}

// nilCodeError is an error type whose Is method reads its receiver: returned as a typed nil
// pointer (the classic Go mistake), its Is method panics inside errors.Is.
type nilCodeError struct{ code int }

func (e *nilCodeError) Error() string        { return "code error" }
func (e *nilCodeError) Is(target error) bool { return e.code == 404 && target == errInvalid }

// TestErrorWhoseIsMethodPanics: classifying an error runs its Is and As methods, user code. A
// panic there is recorded as a failure instead of crashing the caller with the HALF_OPEN probe
// permit leaked.
func TestErrorWhoseIsMethodPanics(t *testing.T) {
	cfg := small()
	cfg.IgnoreErrors = []error{errInvalid}
	cfg.InitialState = cb.HalfOpen
	b := mustNew(t, cfg)
	var typedNil *nilCodeError
	for range 2 {
		_, err := cb.Execute(context.Background(), b, func(context.Context) (int, error) { return 0, typedNil })
		require.Equal(t, error(typedNil), err, "the call's own error comes back")
	}
	assert.Equal(t, cb.Open, b.State(), "two failed probes of two reopen the breaker")
}
