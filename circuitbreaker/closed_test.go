package circuitbreaker_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cb "github.com/levee-go/levee/circuitbreaker"
)

// TestPitfall1_FailureRateIsMinusOneBelowMinimumAndThresholdsAreInclusive: -1 (not 0) until the
// minimum is reached; a rate equal to the threshold opens.
func TestPitfall1_FailureRateIsMinusOneBelowMinimumAndThresholdsAreInclusive(t *testing.T) {
	b := mustNew(t, cb.Config{SlidingWindowSize: 10, MinimumNumberOfCalls: 4, FailureRateThreshold: 50})
	m := b.Metrics()
	assert.Equal(t, float32(-1), m.FailureRate, "empty window")
	assert.Equal(t, float32(-1), m.SlowCallRate)
	require.NoError(t, ok(b))
	require.NoError(t, ok(b))
	require.ErrorIs(t, fail(b), errBoom)
	m = b.Metrics()
	assert.Equal(t, float32(-1), m.FailureRate, "3 calls < minimum 4")
	assert.Equal(t, float32(-1), m.SlowCallRate)
	assert.Equal(t, counts{buffered: 3, failed: 1, successful: 2}, countsOf(m))
	assert.Equal(t, cb.Closed, b.State())

	require.ErrorIs(t, fail(b), errBoom) // 2 of 4 = 50% = threshold
	m = b.Metrics()
	assert.Equal(t, cb.Open, b.State(), "50% >= 50% opens")
	assert.Equal(t, float32(50), m.FailureRate)
	assert.Equal(t, float32(0), m.SlowCallRate)
}

func TestRatesAreJavaFloats(t *testing.T) {
	b := mustNew(t, cb.Config{SlidingWindowSize: 3, MinimumNumberOfCalls: 3, FailureRateThreshold: 100})
	require.ErrorIs(t, fail(b), errBoom)
	require.NoError(t, ok(b))
	require.NoError(t, ok(b))
	m := b.Metrics()
	assert.Equal(t, float32(33.333332), m.FailureRate, "1*100f/3 in Java is 33.333332")
	require.ErrorIs(t, fail(b), errBoom) // window: ok ok fail
	require.ErrorIs(t, fail(b), errBoom) // window: ok fail fail
	assert.Equal(t, float32(66.666664), b.Metrics().FailureRate)
	assert.Equal(t, cb.Closed, b.State(), "66.7% < 100%")
}

func TestBelowThresholdStaysClosed(t *testing.T) {
	b := mustNew(t, cb.Config{SlidingWindowSize: 4, MinimumNumberOfCalls: 4, FailureRateThreshold: 50.5})
	require.ErrorIs(t, fail(b), errBoom)
	require.ErrorIs(t, fail(b), errBoom)
	require.NoError(t, ok(b))
	require.NoError(t, ok(b))
	assert.Equal(t, cb.Closed, b.State(), "50% < 50.5%")
	assert.Equal(t, float32(50), b.Metrics().FailureRate)
}

// TestPitfall2_CountBasedMinimumIsCappedByWindowSize: with the default minimum of 100 and a
// window of 2, the breaker opens after 2 calls; a TIME_BASED window is not capped.
func TestPitfall2_CountBasedMinimumIsCappedByWindowSize(t *testing.T) {
	t.Run("COUNT_BASED", func(t *testing.T) {
		b := mustNew(t, cb.Config{SlidingWindowSize: 2})
		require.ErrorIs(t, fail(b), errBoom)
		assert.Equal(t, float32(-1), b.Metrics().FailureRate)
		require.ErrorIs(t, fail(b), errBoom)
		assert.Equal(t, cb.Open, b.State())
		assert.Equal(t, float32(100), b.Metrics().FailureRate)
	})
	t.Run("TIME_BASED", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := mustNew(t, cb.Config{SlidingWindowType: cb.TimeBased, SlidingWindowSize: 2, MinimumNumberOfCalls: 5})
			for range 4 {
				require.ErrorIs(t, fail(b), errBoom)
			}
			assert.Equal(t, cb.Closed, b.State())
			assert.Equal(t, float32(-1), b.Metrics().FailureRate, "4 calls < 5, window size does not cap")
			require.ErrorIs(t, fail(b), errBoom)
			assert.Equal(t, cb.Open, b.State())
		})
	})
	t.Run("TIME_BASED never opens on fewer calls per window than the minimum", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := mustNew(t, cb.Config{SlidingWindowType: cb.TimeBased, SlidingWindowSize: 2, MinimumNumberOfCalls: 3})
			for range 10 {
				require.ErrorIs(t, fail(b), errBoom)
				time.Sleep(time.Second) // one failure per second: never 3 in 2 seconds
			}
			assert.Equal(t, cb.Closed, b.State())
			assert.Equal(t, 1, b.Metrics().NumberOfFailedCalls)
		})
	})
}

// TestPitfall2_HalfOpenDecidesAfterMinOfMinimumAndPermitted: HALF_OPEN decides after
// min(MinimumNumberOfCalls, PermittedNumberOfCallsInHalfOpenState) outcomes.
func TestPitfall2_HalfOpenDecidesAfterMinOfMinimumAndPermitted(t *testing.T) {
	tests := []struct {
		name              string
		minCalls, permits int
		decideAfter       int
	}{
		{"minimum smaller", 2, 5, 2},
		{"permitted smaller", 100, 3, 3},
		{"equal", 4, 4, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustNew(t, cb.Config{MinimumNumberOfCalls: tt.minCalls, PermittedNumberOfCallsInHalfOpenState: tt.permits})
			require.NoError(t, b.TransitionToOpenState())
			require.NoError(t, b.TransitionToHalfOpenState())
			for i := 1; i < tt.decideAfter; i++ {
				require.NoError(t, ok(b))
				require.Equal(t, cb.HalfOpen, b.State(), "after %d", i)
				assert.Equal(t, float32(-1), b.Metrics().FailureRate)
			}
			require.NoError(t, ok(b))
			assert.Equal(t, cb.Closed, b.State())
		})
	}
}

// TestPitfall3_SlowIsStrictlyGreaterAndSlowErrorsCountAsFailedAndSlow.
func TestPitfall3_SlowIsStrictlyGreaterAndSlowErrorsCountAsFailedAndSlow(t *testing.T) {
	t.Run("measured by the permit", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := mustNew(t, cb.Config{SlidingWindowSize: 10, MinimumNumberOfCalls: 10, SlowCallDurationThreshold: time.Second})
			report(t, b, time.Second, nil)       // equal: not slow
			report(t, b, time.Second+1, nil)     // slow success
			report(t, b, time.Second, errBoom)   // not slow failure
			report(t, b, 2*time.Second, errBoom) // slow failure
			p := acquire(t, b)
			time.Sleep(3 * time.Second)
			p.OnResult("x", nil) // slow success through OnResult
			assert.Equal(t, counts{buffered: 5, failed: 2, successful: 3, slow: 3, slowSuccessful: 2, slowFailed: 1}, countsOf(b.Metrics()))
		})
	})

	t.Run("measured by Execute", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := mustNew(t, cb.Config{SlidingWindowSize: 10, MinimumNumberOfCalls: 10, SlowCallDurationThreshold: time.Second})
			require.NoError(t, run(b, time.Second, nil))
			require.NoError(t, run(b, time.Second+time.Nanosecond, nil))
			require.ErrorIs(t, run(b, 1500*time.Millisecond, errBoom), errBoom)
			assert.Equal(t, counts{buffered: 3, failed: 1, successful: 2, slow: 2, slowSuccessful: 1, slowFailed: 1}, countsOf(b.Metrics()))
		})
	})
}

func TestSlowCallRateOpens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, cb.Config{SlidingWindowSize: 4, MinimumNumberOfCalls: 4,
			SlowCallDurationThreshold: 100 * time.Millisecond, SlowCallRateThreshold: 75})
		ev := record(b)
		for range 3 {
			require.NoError(t, run(b, 200*time.Millisecond, nil))
		}
		require.NoError(t, run(b, 0, nil))
		assert.Equal(t, cb.Open, b.State())
		m := b.Metrics()
		assert.Equal(t, float32(75), m.SlowCallRate)
		assert.Equal(t, float32(0), m.FailureRate)
		assert.Equal(t, []cb.EventType{cb.EventSuccess, cb.EventSuccess, cb.EventSuccess, cb.EventSuccess,
			cb.EventSlowCallRateExceeded, cb.EventStateTransition}, ev.types())
		evs := ev.list()
		assert.Equal(t, float32(75), evs[4].SlowCallRate)
	})
}

func TestBothRatesExceededPublishesBothEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, cb.Config{SlidingWindowSize: 2, SlowCallDurationThreshold: time.Millisecond})
		ev := record(b)
		report(t, b, time.Second, errBoom)
		report(t, b, time.Second, errBoom)
		assert.Equal(t, []cb.EventType{cb.EventError, cb.EventError, cb.EventFailureRateExceeded,
			cb.EventSlowCallRateExceeded, cb.EventStateTransition}, ev.types())
		evs := ev.list()
		assert.Equal(t, float32(100), evs[2].FailureRate)
		assert.Equal(t, float32(100), evs[3].SlowCallRate)
	})
}

func TestCountWindowSlides(t *testing.T) {
	b := mustNew(t, cb.Config{SlidingWindowSize: 3, MinimumNumberOfCalls: 3, FailureRateThreshold: 100})
	require.ErrorIs(t, fail(b), errBoom)
	require.ErrorIs(t, fail(b), errBoom)
	require.NoError(t, ok(b))
	assert.Equal(t, counts{buffered: 3, failed: 2, successful: 1}, countsOf(b.Metrics()))
	require.NoError(t, ok(b))
	require.NoError(t, ok(b))
	assert.Equal(t, counts{buffered: 3, successful: 3}, countsOf(b.Metrics()), "the failures have left")
	assert.Equal(t, float32(0), b.Metrics().FailureRate)
}

func TestLargeCountWindow(t *testing.T) {
	// Larger than the lock-free window's capacity: the same semantics through a mutex.
	const n = 40000
	b := mustNew(t, cb.Config{SlidingWindowSize: n, MinimumNumberOfCalls: n})
	for range n - 1 {
		acquire(t, b).OnError(errBoom)
	}
	assert.Equal(t, cb.Closed, b.State())
	assert.Equal(t, float32(-1), b.Metrics().FailureRate)
	acquire(t, b).OnSuccess()
	assert.Equal(t, cb.Open, b.State())
	m := b.Metrics()
	assert.Equal(t, n, m.NumberOfBufferedCalls)
	assert.Equal(t, float32(float32(n-1)*100)/float32(n), m.FailureRate)
}

func TestMetricsOnlyRecordsButNeverOpens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { metricsOnlyRecordsButNeverOpens(t) })
}

func metricsOnlyRecordsButNeverOpens(t *testing.T) {
	b := mustNew(t, cb.Config{InitialState: cb.MetricsOnly, SlidingWindowSize: 2, SlowCallDurationThreshold: time.Millisecond})
	ev := record(b)
	for range 5 {
		report(t, b, time.Second, errBoom)
		require.NoError(t, try(b))
	}
	assert.Equal(t, cb.MetricsOnly, b.State())
	m := b.Metrics()
	assert.Equal(t, counts{buffered: 2, failed: 2, slow: 2, slowFailed: 2}, countsOf(m))
	assert.Equal(t, float32(100), m.FailureRate)
	// each *_RATE_EXCEEDED once per METRICS_ONLY period
	assert.Equal(t, []cb.EventType{cb.EventError, cb.EventError, cb.EventFailureRateExceeded, cb.EventSlowCallRateExceeded,
		cb.EventError, cb.EventError, cb.EventError}, ev.types())
	require.NoError(t, b.TransitionToMetricsOnlyState())
	ev.reset()
	report(t, b, time.Second, errBoom)
	report(t, b, time.Second, errBoom)
	assert.Equal(t, []cb.EventType{cb.EventError, cb.EventError, cb.EventFailureRateExceeded, cb.EventSlowCallRateExceeded}, ev.types(),
		"a new METRICS_ONLY period publishes them again")
}

func TestDisabledAndForcedOpenRecordNothing(t *testing.T) {
	b := mustNew(t, cb.Config{InitialState: cb.Disabled, SlidingWindowSize: 2})
	for range 5 {
		require.ErrorIs(t, fail(b), errBoom)
	}
	assert.Equal(t, cb.Disabled, b.State())
	assert.Equal(t, counts{}, countsOf(b.Metrics()))
	assert.Equal(t, float32(-1), b.Metrics().FailureRate)

	late := acquire(t, b) // a call permitted while DISABLED
	require.NoError(t, b.TransitionToForcedOpenState())
	for range 3 {
		err := fail(b)
		require.ErrorIs(t, err, cb.ErrCallNotPermitted)
		var cnp *cb.CallNotPermittedError
		require.ErrorAs(t, err, &cnp)
		assert.Equal(t, cb.ForcedOpen, cnp.State)
	}
	late.OnError(errBoom) // a late outcome is dropped
	assert.Equal(t, counts{notPermitted: 3}, countsOf(b.Metrics()))
}

// TestPitfall4_TimeBasedBreakerForgetsOldCallsOnRead: the breaker's metrics move with the clock
// even when no call is recorded, and calls leave at whole seconds since New.
func TestPitfall4_TimeBasedBreakerForgetsOldCallsOnRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, cb.Config{SlidingWindowType: cb.TimeBased, SlidingWindowSize: 2, MinimumNumberOfCalls: 2, FailureRateThreshold: 100})
		time.Sleep(700 * time.Millisecond)
		require.ErrorIs(t, fail(b), errBoom) // second 0
		time.Sleep(600 * time.Millisecond)
		require.NoError(t, ok(b)) // second 1
		m := b.Metrics()
		assert.Equal(t, counts{buffered: 2, failed: 1, successful: 1}, countsOf(m))
		assert.Equal(t, float32(50), m.FailureRate)
		time.Sleep(700 * time.Millisecond) // 2.0s: second 0 has left
		m = b.Metrics()
		assert.Equal(t, counts{buffered: 1, successful: 1}, countsOf(m))
		assert.Equal(t, float32(-1), m.FailureRate, "1 call is below the minimum again")
		time.Sleep(time.Second) // 3.0s: second 1 has left
		assert.Equal(t, counts{}, countsOf(b.Metrics()))
	})
}
