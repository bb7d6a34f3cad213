package circuitbreaker

import (
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func naive(calls []slot, n int) counts {
	var c counts
	for _, s := range calls[max(0, len(calls)-n):] {
		c.add(s.o, s.d, 1)
	}
	return c
}

var durationGen = rapid.Custom(func(t *rapid.T) time.Duration {
	return time.Duration(rapid.Int64Range(0, int64(5*time.Second)).Draw(t, "d"))
})

var outcomeGen = rapid.SampledFrom([]outcome{
	outcomeCall,
	outcomeCall | outcomeFailed,
	outcomeCall | outcomeSlow,
	outcomeCall | outcomeFailed | outcomeSlow,
})

// TestCountWindowHoldsExactlyTheLastN checks the count-based window against a list of every
// outcome: after each record, and in every snapshot, the totals are those of the last n.
func TestCountWindowHoldsExactlyTheLastN(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 12).Draw(t, "n")
		w := newCountWindow(n)
		var all []slot
		for _, o := range rapid.SliceOfN(outcomeGen, 0, 40).Draw(t, "outcomes") {
			d := durationGen.Draw(t, "duration")
			all = append(all, slot{o, d})
			want := naive(all, n)
			if got := w.record(o, d); got != want {
				t.Fatalf("record after %d: got %+v, want %+v", len(all), got, want)
			}
			if got := w.snapshot(); got != want {
				t.Fatalf("snapshot after %d: got %+v, want %+v", len(all), got, want)
			}
		}
	})
}

// TestConcurrentRecordsSeeExactWindows is the regression test for totals that counted
// in-flight outcomes: every total a record returns, under any interleaving, is that of some
// window of exactly min(recorded, n) outcomes, so a window of 4 never reports 5 calls.
func TestConcurrentRecordsSeeExactWindows(t *testing.T) {
	const n, goroutines, each = 4, 8, 2000
	w := newCountWindow(n)
	var bad atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				o := outcomeCall
				if (g+i)%2 == 0 {
					o |= outcomeFailed
				}
				c := w.record(o, 0)
				if c.calls > n || c.failed > c.calls {
					bad.Add(1)
				}
			}
		})
	}
	wg.Wait()
	assert.Zero(t, bad.Load(), "records that saw a window larger than n or with more failures than calls")
	assert.Equal(t, n, w.snapshot().calls)
}

// sinceNow returns a window clock whose epoch is now: inside a synctest bubble it follows the
// bubble's fake clock.
func sinceNow() func() time.Duration {
	epoch := time.Now()
	return func() time.Duration { return time.Since(epoch) }
}

// manualClock is a window clock a test sets by hand: the window reads nothing else.
type manualClock struct{ now atomic.Int64 }

func (c *manualClock) read() time.Duration     { return time.Duration(c.now.Load()) }
func (c *manualClock) set(d time.Duration)     { c.now.Store(int64(d)) }
func (c *manualClock) advance(d time.Duration) { c.now.Add(int64(d)) }

// TestPitfall4_TimeBasedBucketsAreAlignedToTheEpochAndAdvanceOnReads: a call recorded during
// second s of the window's clock is in the window until the clock reaches second s+N, whatever
// its offset in the second, and a read alone moves the window.
func TestPitfall4_TimeBasedBucketsAreAlignedToTheEpochAndAdvanceOnReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newTimeWindow(3, sinceNow())
		time.Sleep(900 * time.Millisecond) // 0.9s into second 0
		w.record(outcomeCall|outcomeFailed, 0)
		time.Sleep(200 * time.Millisecond) // 1.1s: second 1
		w.record(outcomeCall, 0)
		assert.Equal(t, counts{2, 1, 0, 0, 0, 0}, w.snapshot())

		time.Sleep(1800 * time.Millisecond) // 2.9s: seconds 0..2 are in the window
		assert.Equal(t, counts{2, 1, 0, 0, 0, 0}, w.snapshot())
		time.Sleep(100 * time.Millisecond) // 3.0s: second 0 has left, 2.1s after it was recorded
		assert.Equal(t, counts{1, 0, 0, 0, 0, 0}, w.snapshot(), "the read moved the window")
		time.Sleep(999 * time.Millisecond) // 3.999s: second 1 is still in
		assert.Equal(t, counts{1, 0, 0, 0, 0, 0}, w.snapshot())
		time.Sleep(time.Millisecond) // 4.0s: second 1 leaves, 2.9s after it was recorded
		assert.Equal(t, counts{}, w.snapshot())
	})
}

// TestTimeWindowReadsOnlyItsMonotonicClock drives the window with a clock set by hand (no
// synctest, real wall clock running): the window follows that clock alone, so a wall-clock
// step cannot move it. Calls recorded at 10s leave at exactly 10s+N.
func TestTimeWindowReadsOnlyItsMonotonicClock(t *testing.T) {
	var c manualClock
	c.set(10 * time.Second)
	w := newTimeWindow(10, c.read)
	w.record(outcomeCall|outcomeFailed, 0)
	w.record(outcomeCall, 0)
	assert.Equal(t, counts{2, 1, 0, 0, 0, 0}, w.snapshot())

	c.set(20*time.Second - 1)
	assert.Equal(t, counts{2, 1, 0, 0, 0, 0}, w.snapshot(), "still in the window 1ns before 10s+N")
	c.set(20 * time.Second)
	assert.Equal(t, counts{}, w.snapshot(), "gone at exactly 10s+N")

	c.set(25 * time.Second)
	w.record(outcomeCall, 0)
	c.set(24 * time.Second) // a clock that went back (the monotonic clock never does) changes nothing
	assert.Equal(t, counts{2, 0, 1, 0, 0, 0}, w.record(outcomeCall|outcomeSlow, 0), "recorded into the head, second 25")
	c.set(34*time.Second + 999*time.Millisecond)
	assert.Equal(t, counts{2, 0, 1, 0, 0, 0}, w.snapshot())
	c.advance(time.Millisecond) // 35s: second 25 has left
	assert.Equal(t, counts{}, w.snapshot())
}

func TestTimeWindowRecordsIntoTheCurrentSecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newTimeWindow(2, sinceNow())
		w.record(outcomeCall|outcomeSlow, 0)
		w.record(outcomeCall|outcomeSlow|outcomeFailed, 0)
		time.Sleep(time.Second)
		c := w.record(outcomeCall, 0)
		assert.Equal(t, counts{3, 1, 2, 1, 0, 0}, c)
		time.Sleep(time.Second)
		c = w.record(outcomeCall|outcomeFailed, 0)
		assert.Equal(t, counts{2, 1, 0, 0, 0, 0}, c, "second 0 left when second 2 began")
		time.Sleep(100 * time.Second) // a jump longer than the window empties it
		assert.Equal(t, counts{}, w.snapshot())
		c = w.record(outcomeCall, 0)
		assert.Equal(t, counts{1, 0, 0, 0, 0, 0}, c)
	})
}

// TestTimeWindowAgainstModel compares the time window with a list of (second, outcome) pairs.
func TestTimeWindowAgainstModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		rapid.SyncTest(rt, func(rt *rapid.T) {
			n := rapid.IntRange(1, 5).Draw(rt, "n")
			clock := sinceNow()
			w := newTimeWindow(n, clock)
			type rec struct {
				sec int64
				o   outcome
				d   time.Duration
			}
			var all []rec
			model := func() counts {
				now := int64(clock() / time.Second)
				var c counts
				for _, r := range all {
					if r.sec > now-int64(n) {
						c.add(r.o, r.d, 1)
					}
				}
				return c
			}
			for i := range rapid.IntRange(1, 30).Draw(rt, "steps") {
				time.Sleep(time.Duration(rapid.IntRange(0, 2500).Draw(rt, "sleepMs")) * time.Millisecond)
				if rapid.Bool().Draw(rt, "read") {
					require.Equal(rt, model(), w.snapshot(), "read %d", i)
					continue
				}
				o := outcomeGen.Draw(rt, "o")
				d := durationGen.Draw(rt, "d")
				all = append(all, rec{int64(clock() / time.Second), o, d})
				require.Equal(rt, model(), w.record(o, d), "record %d", i)
			}
		})
	})
}

// TestCountWindowTallyIsItsTotals checks what the breaker decides on: the tally that
// recordLocked returns is the calls, failed and slow calls of the last n outcomes, whether the
// outcome replaced an equal one (whose counts do not change) or a different one.
func TestCountWindowTallyIsItsTotals(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 12).Draw(t, "n")
		var mu sync.Mutex
		w := newSharedCountWindow(n, &mu)
		var all []slot
		for _, o := range rapid.SliceOfN(outcomeGen, 0, 60).Draw(t, "outcomes") {
			d := durationGen.Draw(t, "duration")
			all = append(all, slot{o, d})
			want := naive(all, n)
			mu.Lock()
			got := w.recordLocked(o, d, 0)
			mu.Unlock()
			if got != want.tally() {
				t.Fatalf("tally after %d: got %+v, want %+v", len(all), got, want.tally())
			}
			if got := w.snapshot(); got != want {
				t.Fatalf("snapshot after %d: got %+v, want %+v", len(all), got, want)
			}
		}
	})
}
