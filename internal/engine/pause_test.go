package engine

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// refusedUntil is a pattern that refuses every try before the instant end, and tells so
// through RetryAfter; it records the instants of the tries.
type refusedUntil struct {
	start, end time.Time
	mu         sync.Mutex
	tries      []time.Duration
}

func (r *refusedUntil) try(admitted func()) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tries = append(r.tries, time.Since(r.start))
	refused := time.Now().Before(r.end)
	if !refused {
		admitted()
	}
	return refused
}

func (r *refusedUntil) pause(maxWait time.Duration) *Pause {
	return NewPause(maxWait, func(func()) func() { return func() {} },
		func() time.Duration { return max(time.Until(r.end), 0) })
}

func TestPauseNotRefusedCallsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &refusedUntil{start: time.Now(), end: time.Now()}
		paused, ok := r.pause(0).Call(make(chan struct{}), r.try)
		assert.Equal(t, time.Duration(0), paused)
		assert.True(t, ok)
		assert.Equal(t, []time.Duration{0}, r.tries)
	})
}

func TestPauseRetriesAtRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &refusedUntil{start: time.Now(), end: time.Now().Add(3 * time.Second)}
		paused, ok := r.pause(0).Call(make(chan struct{}), r.try)
		assert.Equal(t, 3*time.Second, paused)
		assert.True(t, ok)
		assert.Equal(t, []time.Duration{0, 3 * time.Second}, r.tries)
	})
}

func TestPauseBoundedByMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &refusedUntil{start: time.Now(), end: time.Now().Add(3 * time.Second)}
		paused, ok := r.pause(time.Second).Call(make(chan struct{}), r.try)
		assert.Equal(t, time.Second, paused)
		assert.True(t, ok)
		assert.Equal(t, []time.Duration{0}, r.tries)
	})
}

// An element refused while another is held waits for it, then retries; done ends both waits.
func TestPauseSecondRefusedWaitsForTheHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &refusedUntil{start: time.Now(), end: time.Now().Add(3 * time.Second)}
		p := r.pause(0)
		first := true
		paused, ok := p.Call(make(chan struct{}), func(admitted func()) bool {
			if first { // another element is refused and held while this one's call runs, to 1s
				first = false
				p.sem <- struct{}{}
				time.AfterFunc(time.Second, func() { <-p.sem })
			}
			return r.try(admitted)
		})
		// refused at 0, waited for the held one until 1s, refused again and held until 3s.
		assert.Equal(t, 3*time.Second, paused)
		assert.True(t, ok)
		assert.Equal(t, []time.Duration{0, time.Second, 3 * time.Second}, r.tries)
	})
}

func TestPauseDoneWhileHeldOrWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &refusedUntil{start: time.Now(), end: time.Now().Add(time.Hour)}
		p := r.pause(0)
		done := make(chan struct{})
		time.AfterFunc(2*time.Second, func() { close(done) })
		var wg sync.WaitGroup
		res := make([]time.Duration, 2)
		oks := make([]bool, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(time.Duration(i) * time.Second)
				res[i], oks[i] = p.Call(done, r.try)
			}()
		}
		wg.Wait()
		assert.Equal(t, []bool{false, false}, oks)
		assert.Equal(t, []time.Duration{2 * time.Second, 0}, res) // the second never got past the gate
		assert.Equal(t, []time.Duration{0}, r.tries)
		assert.Empty(t, p.sem)
	})
}

// The refusal ends by an event that comes while a retry is being refused (a HALF_OPEN breaker
// whose probes are taken closes as the held element asks): with no time by the clock to wait
// for, the element is tried again at once instead of waiting for a later event that may never
// come (it waited MaxWait and was answered as refused).
func TestPauseEventDuringARefusedRetryIsNotLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var wake func()
		tries := 0
		p := NewPause(5*time.Second, func(w func()) func() { wake = w; return func() {} },
			func() time.Duration { return 0 })
		try := func(func()) bool {
			tries++
			if tries == 2 { // the retry is refused, and the refusal ends meanwhile
				wake()
				return true
			}
			return tries < 2
		}
		start := time.Now()
		paused, ok := p.Call(make(chan struct{}), try)
		assert.True(t, ok)
		assert.Equal(t, 3, tries)
		assert.Equal(t, time.Duration(0), paused)
		assert.Equal(t, time.Duration(0), time.Since(start), "not held until MaxWait")
	})
}

// The held element lets the others go as soon as its retry is admitted, not when that call
// ends: an element waiting behind it is tried while the retry's call still runs.
func TestPauseHeldLetsGoOnAdmission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var wake func()
		p := NewPause(0, func(w func()) func() { wake = w; return func() {} },
			func() time.Duration { return 0 })
		var mu sync.Mutex
		free := false // the permit that ends the first element's refusal
		var at []time.Duration
		call := func(admitted func()) bool {
			mu.Lock()
			ok := free
			mu.Unlock()
			if !ok {
				return true
			}
			admitted()
			mu.Lock()
			at = append(at, time.Since(start))
			mu.Unlock()
			time.Sleep(time.Second) // the call runs 1s once admitted
			return false
		}
		first := make(chan time.Duration)
		go func() {
			d, _ := p.Call(make(chan struct{}), call)
			first <- d
		}()
		synctest.Wait() // the first element is refused and held
		second := make(chan time.Duration)
		go func() {
			d, _ := p.Call(make(chan struct{}), call)
			second <- d
		}()
		synctest.Wait() // the second waits behind the held one
		time.Sleep(100 * time.Millisecond)
		mu.Lock()
		free = true
		mu.Unlock()
		wake()
		assert.Equal(t, 100*time.Millisecond, <-first)
		assert.Equal(t, time.Duration(0), <-second)
		assert.Equal(t, []time.Duration{100 * time.Millisecond, 100 * time.Millisecond}, at)
	})
}
