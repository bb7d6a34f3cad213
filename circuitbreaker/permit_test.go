package circuitbreaker_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cb "github.com/levee-go/levee/circuitbreaker"
)

// TestPermitMeasuresFromItsGrant: the elapsed time of every outcome is measured by the permit,
// from Acquire, on the monotonic clock.
func TestPermitMeasuresFromItsGrant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, cb.Config{SlidingWindowSize: 10, SlowCallDurationThreshold: 2 * time.Second, IgnoreErrors: []error{errInvalid}})
		ev := record(b)
		p1, p2, p3 := acquire(t, b), acquire(t, b), acquire(t, b)
		time.Sleep(time.Second)
		p1.OnSuccess()
		time.Sleep(1500 * time.Millisecond)
		p2.OnError(errBoom)
		p3.OnError(errInvalid)
		p4 := acquire(t, b)
		time.Sleep(250 * time.Millisecond)
		p4.OnResult("v", nil)
		var got []time.Duration
		for _, e := range ev.list() {
			got = append(got, e.Duration)
		}
		assert.Equal(t, []time.Duration{time.Second, 2500 * time.Millisecond, 2500 * time.Millisecond, 250 * time.Millisecond}, got)
		assert.Equal(t, counts{buffered: 3, failed: 1, successful: 2, slow: 1, slowFailed: 1}, countsOf(b.Metrics()))
	})
}

// TestHalfOpenProbeCompletesOnce: a HALF_OPEN probe's second completion records nothing and
// gives nothing back, whatever the two completions are.
func TestHalfOpenProbeCompletesOnce(t *testing.T) {
	type step func(p cb.Permit)
	success := func(p cb.Permit) { p.OnSuccess() }
	failure := func(p cb.Permit) { p.OnError(errBoom) }
	ignored := func(p cb.Permit) { p.OnError(errInvalid) }
	release := func(p cb.Permit) { p.Release() }
	tests := []struct {
		name          string
		first, second step
		want          counts
		permitsLeft   int
	}{
		{"success twice", success, success, counts{buffered: 1, successful: 1}, 2},
		{"failure then success", failure, success, counts{buffered: 1, failed: 1}, 2},
		{"success then release", success, release, counts{buffered: 1, successful: 1}, 2},
		{"release twice", release, release, counts{}, 3},
		{"release then failure", release, failure, counts{}, 3},
		{"ignored then ignored", ignored, ignored, counts{}, 3},
		{"ignored then success", ignored, success, counts{}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustNew(t, cb.Config{InitialState: cb.HalfOpen, PermittedNumberOfCallsInHalfOpenState: 3,
				IgnoreErrors: []error{errInvalid}})
			p := acquire(t, b)
			tt.first(p)
			tt.second(p)
			assert.Equal(t, tt.want, countsOf(b.Metrics()))
			left := 0
			for try(b) == nil {
				left++
			}
			assert.Equal(t, tt.permitsLeft, left)
			assert.Equal(t, cb.HalfOpen, b.State())
		})
	}
}

// A permit granted in CLOSED is not tracked: a second outcome is recorded again (documented),
// a second Release does nothing.
func TestClosedPermitSecondOutcomeIsRecordedAgain(t *testing.T) {
	b := mustNew(t, cb.Config{SlidingWindowSize: 10})
	p := acquire(t, b)
	p.OnSuccess()
	p.OnSuccess()
	p.Release()
	assert.Equal(t, counts{buffered: 2, successful: 2}, countsOf(b.Metrics()))
}

// TestPitfallC1_TimeBasedWindowDropsCallsAtExactlyTheirWindow: the window is keyed on the
// monotonic time since New, so calls recorded at 3s (a whole second since New) leave at exactly
// 3s + 10s, and no wall-clock reading is involved.
func TestPitfallC1_TimeBasedWindowDropsCallsAtExactlyTheirWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, cb.Config{SlidingWindowType: cb.TimeBased, SlidingWindowSize: 10, MinimumNumberOfCalls: 5})
		time.Sleep(3 * time.Second)
		require.ErrorIs(t, fail(b), errBoom)
		require.ErrorIs(t, fail(b), errBoom)
		time.Sleep(10*time.Second - 1)
		assert.Equal(t, counts{buffered: 2, failed: 2}, countsOf(b.Metrics()), "1ns before 13s")
		time.Sleep(1)
		assert.Equal(t, counts{}, countsOf(b.Metrics()), "gone at exactly 13s")
	})
}
