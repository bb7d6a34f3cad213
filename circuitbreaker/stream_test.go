package circuitbreaker_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cb "github.com/levee-go/levee/circuitbreaker"
)

func types(evs []cb.Event) []cb.EventType {
	out := make([]cb.EventType, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

func TestEventsChannelInOrderFromTheInitialState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, small())
		ctx, cancel := context.WithCancel(context.Background())
		start := time.Now()
		ch, dropped := b.Events(ctx, 16)
		for range 4 {
			require.ErrorIs(t, fail(b), errBoom)
		}
		require.ErrorIs(t, ok(b), cb.ErrCallNotPermitted)
		cancel()
		synctest.Wait()                                   // the stream is closed by the context
		require.ErrorIs(t, ok(b), cb.ErrCallNotPermitted) // after the context: not in the channel
		var evs []cb.Event
		for e := range ch {
			evs = append(evs, e)
		}
		assert.Equal(t, []cb.EventType{cb.EventInitialState, cb.EventError, cb.EventError, cb.EventError, cb.EventError,
			cb.EventFailureRateExceeded, cb.EventStateTransition, cb.EventNotPermitted}, types(evs))
		assert.Equal(t, cb.Event{Name: "test", Type: cb.EventInitialState, Time: start, From: cb.Closed, To: cb.Closed}, evs[0])
		assert.Equal(t, "CircuitBreaker 'test' is in state CLOSED", evs[0].String())
		assert.Equal(t, cb.Closed, evs[6].From)
		assert.Equal(t, cb.Open, evs[6].To)
		assert.Equal(t, uint64(0), dropped())
	})
}

func TestEventsChannelDropsAndCountsWhenFull(t *testing.T) {
	b := mustNew(t, small())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, dropped := b.Events(ctx, 3)
	for range 4 {
		require.ErrorIs(t, fail(b), errBoom) // never blocks on the full channel
	}
	// INITIAL_STATE, ERROR, ERROR fill the buffer; ERROR, ERROR, FAILURE_RATE_EXCEEDED and
	// STATE_TRANSITION are dropped.
	assert.Equal(t, uint64(4), dropped())
	assert.Equal(t, cb.Open, b.State())
	assert.Equal(t, cb.EventInitialState, (<-ch).Type)
	assert.Equal(t, cb.EventError, (<-ch).Type)
	assert.Equal(t, cb.EventError, (<-ch).Type)
	require.NoError(t, b.TransitionToClosedState())
	e := <-ch
	assert.Equal(t, cb.EventStateTransition, e.Type, "room again after receiving")
	assert.Equal(t, [2]cb.State{cb.Open, cb.Closed}, [2]cb.State{e.From, e.To})
	assert.Equal(t, uint64(4), dropped())
}

func TestEventSeqEndsOnBreakAndStartsFromTheCurrentState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, small())
		require.NoError(t, b.TransitionToForcedOpenState())
		seq, dropped := b.EventSeq(context.Background(), 8)
		var got []string
		done := make(chan struct{})
		go func() {
			defer close(done)
			for e := range seq {
				got = append(got, e.String())
				if e.Type == cb.EventStateTransition {
					break
				}
			}
		}()
		synctest.Wait()
		require.ErrorIs(t, ok(b), cb.ErrCallNotPermitted) // FORCED_OPEN publishes no NOT_PERMITTED
		require.NoError(t, b.TransitionToClosedState())
		<-done
		assert.Equal(t, []string{
			"CircuitBreaker 'test' is in state FORCED_OPEN",
			"CircuitBreaker 'test' changed state from FORCED_OPEN to CLOSED",
		}, got)
		assert.Equal(t, uint64(0), dropped())
		allocs := testing.AllocsPerRun(100, func() { _ = ok(b) })
		assert.Zero(t, allocs, "break removed the subscription: the success path is back to 0 allocations")
	})
}

func TestEventSeqEndsWhenContextIsDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, small())
		ctx, cancel := context.WithCancel(context.Background())
		seq, _ := b.EventSeq(ctx, 8)
		var got []cb.EventType
		done := make(chan struct{})
		go func() {
			defer close(done)
			for e := range seq {
				got = append(got, e.Type)
			}
		}()
		synctest.Wait()
		require.NoError(t, ok(b))
		synctest.Wait()
		cancel()
		<-done
		assert.Equal(t, []cb.EventType{cb.EventInitialState, cb.EventSuccess}, got)
	})
}

func TestOnStateChangeMayCallBackIntoTheBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, small())
		type seen struct {
			from, to, state cb.State
			failed          int
		}
		var got []seen
		unsub := b.OnStateChange(func(from, to cb.State) {
			m := b.Metrics() // reads the breaker from inside the hook: no lock is held
			got = append(got, seen{from, to, b.State(), m.NumberOfFailedCalls})
			if to == cb.Open {
				require.NoError(t, b.TransitionToHalfOpenState()) // even a transition
			}
		})
		for range 4 {
			require.ErrorIs(t, fail(b), errBoom)
		}
		assert.Equal(t, []seen{
			{cb.Closed, cb.Open, cb.Open, 4},       // OPEN shows the window that opened it
			{cb.Open, cb.HalfOpen, cb.HalfOpen, 0}, // HALF_OPEN starts with empty metrics
		}, got)
		unsub()
		unsub() // twice is harmless
		require.NoError(t, b.TransitionToClosedState())
		assert.Len(t, got, 2, "no call after unsubscribe")
		assert.NotPanics(t, func() { b.OnStateChange(nil)() })
	})
}

func TestSubscribeCallbackMayCallBackIntoTheBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, small())
		var got []cb.Metrics
		b.Subscribe(func(e cb.Event) {
			if e.Type == cb.EventStateTransition {
				got = append(got, b.Metrics())
			}
		})
		for range 4 {
			require.ErrorIs(t, run(b, 20*time.Millisecond, errBoom), errBoom)
		}
		require.Len(t, got, 1)
		assert.Equal(t, cb.Metrics{State: cb.Open, FailureRate: 100, SlowCallRate: 0, NumberOfBufferedCalls: 4,
			NumberOfFailedCalls: 4, TotalDuration: 80 * time.Millisecond, AverageDuration: 20 * time.Millisecond},
			got[0], "OPEN shows the window that opened it")
	})
}

func TestNilBreakerStreams(t *testing.T) {
	var b *cb.CircuitBreaker
	ch, dropped := b.Events(context.Background(), 1)
	_, open := <-ch
	assert.False(t, open)
	assert.Equal(t, uint64(0), dropped())
	seq, dropped := b.EventSeq(context.Background(), 1)
	n := 0
	for range seq {
		n++
	}
	assert.Equal(t, 0, n)
	assert.Equal(t, uint64(0), dropped())
	assert.NotPanics(t, func() { b.OnStateChange(func(cb.State, cb.State) {})() })
}

func TestMetricsCarryTheWindowsCallDurations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := small()
		cfg.SlidingWindowSize = 3
		cfg.MinimumNumberOfCalls = 10
		cfg.SlowCallDurationThreshold = 100 * time.Millisecond
		b := mustNew(t, cfg)
		assert.Equal(t, cb.Metrics{State: cb.Closed, FailureRate: -1, SlowCallRate: -1}, b.Metrics())

		require.NoError(t, run(b, 30*time.Millisecond, nil))
		require.ErrorIs(t, run(b, 150*time.Millisecond, errBoom), errBoom) // slow failure
		require.NoError(t, run(b, 200*time.Millisecond, nil))              // slow success
		m := b.Metrics()
		assert.Equal(t, 380*time.Millisecond, m.TotalDuration)
		assert.Equal(t, 380*time.Millisecond/3, m.AverageDuration)
		assert.Equal(t, 350*time.Millisecond, m.SlowCallDuration)

		require.NoError(t, run(b, 50*time.Millisecond, nil)) // evicts the 30ms call
		m = b.Metrics()
		assert.Equal(t, 400*time.Millisecond, m.TotalDuration)
		assert.Equal(t, 400*time.Millisecond/3, m.AverageDuration)
		assert.Equal(t, 350*time.Millisecond, m.SlowCallDuration)

		require.NoError(t, run(b, 10*time.Millisecond, nil)) // evicts the slow failure
		m = b.Metrics()
		assert.Equal(t, 260*time.Millisecond, m.TotalDuration)
		assert.Equal(t, 200*time.Millisecond, m.SlowCallDuration)
		assert.Equal(t, 1, m.NumberOfSlowCalls)
	})
}

func TestTimeBasedMetricsDurationsLeaveWithTheirSecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := small()
		cfg.SlidingWindowType = cb.TimeBased
		cfg.SlidingWindowSize = 2
		cfg.MinimumNumberOfCalls = 10
		cfg.SlowCallDurationThreshold = 100 * time.Millisecond
		b := mustNew(t, cfg)
		require.NoError(t, run(b, 400*time.Millisecond, nil))              // second 0, slow
		require.ErrorIs(t, run(b, 700*time.Millisecond, errBoom), errBoom) // ends in second 1, slow
		m := b.Metrics()
		assert.Equal(t, 1100*time.Millisecond, m.TotalDuration)
		assert.Equal(t, 1100*time.Millisecond, m.SlowCallDuration)
		assert.Equal(t, 550*time.Millisecond, m.AverageDuration)
		time.Sleep(900 * time.Millisecond) // t=2s: second 0 leaves the window of 2 seconds
		m = b.Metrics()
		assert.Equal(t, 700*time.Millisecond, m.TotalDuration)
		assert.Equal(t, 700*time.Millisecond, m.SlowCallDuration)
		assert.Equal(t, 700*time.Millisecond, m.AverageDuration)
		time.Sleep(time.Second)
		assert.Equal(t, time.Duration(0), b.Metrics().TotalDuration)
		assert.Equal(t, time.Duration(0), b.Metrics().AverageDuration)
	})
}

// The body of a range over EventSeq may drive the breaker: the events it causes go into the
// loop's own buffer (never waiting), and it sees them on the next iterations.
func TestEventSeqBodyMayDriveTheBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, small())
		seq, dropped := b.EventSeq(context.Background(), 4)
		var got []string
	loop:
		for e := range seq {
			got = append(got, e.String())
			switch {
			case e.Type == cb.EventInitialState:
				require.NoError(t, b.TransitionToForcedOpenState())
			case e.To == cb.ForcedOpen:
				require.NoError(t, b.TransitionToClosedState())
			default:
				break loop
			}
		}
		assert.Equal(t, []string{
			"CircuitBreaker 'test' is in state CLOSED",
			"CircuitBreaker 'test' changed state from CLOSED to FORCED_OPEN",
			"CircuitBreaker 'test' changed state from FORCED_OPEN to CLOSED",
		}, got)
		assert.Equal(t, uint64(0), dropped())
	})
}
