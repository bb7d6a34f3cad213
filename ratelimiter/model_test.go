package ratelimiter_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/levee-go/levee/ratelimiter"
)

// model is a reference rate limiter written the plain way: an explicit limit per cycle and a
// count of the permissions taken in each cycle. Permissions are taken in order, so the next
// free one is in the first cycle, from now on, that is not full.
type model struct {
	period, timeout int64
	segs            []seg           // limits from a cycle on, in order
	taken           map[int64]int64 // permissions taken per cycle
	admitted        map[int64]int64 // callers proceeding per cycle
	overAdmitted    []int64         // cycles where an admission went past the limit
	gen             int             // bumped by changes of limit, which forbid giving back
}

type seg struct{ from, limit int64 }

type pos struct{ cycle, off int64 }

// reservation is what a caller took: where, for which proceed cycle, and when.
type reservation struct {
	end   pos
	parts map[int64]int64
	last  int64
	gen   int
}

func newModel(limit int64, period, timeout time.Duration) *model {
	if timeout == ratelimiter.NoWait {
		timeout = 0
	}
	return &model{period: int64(period), timeout: int64(timeout), segs: []seg{{0, limit}},
		taken: map[int64]int64{}, admitted: map[int64]int64{}}
}

func (m *model) capOf(k int64) int64 {
	limit := m.segs[0].limit
	for _, s := range m.segs {
		if s.from <= k {
			limit = s.limit
		}
	}
	return limit
}

func (m *model) limit() int64 { return m.segs[len(m.segs)-1].limit }

// first returns the next free permission at cycle c.
func (m *model) first(c int64) pos {
	for m.taken[c] >= m.capOf(c) {
		c++
	}
	return pos{c, m.taken[c]}
}

var (
	errModelInvalid  = errors.New("invalid")
	errModelRejected = errors.New("rejected")
)

// take returns the reservation and the wait for p permissions at time t, or an error.
func (m *model) take(p, t int64) (reservation, int64, error) {
	if p < 1 || p > m.limit() {
		return reservation{}, 0, errModelInvalid
	}
	c := t / m.period
	f := m.first(c)
	r := reservation{parts: map[int64]int64{}, gen: m.gen}
	k, off, rest := f.cycle, f.off, p
	for {
		room := m.capOf(k) - off
		if rest <= room {
			off += rest
			r.parts[k] += rest
			break
		}
		r.parts[k] += room
		rest -= room
		k, off = k+1, 0
	}
	r.last, r.end = k, pos{k, off}
	if off == m.capOf(k) {
		r.end = pos{k + 1, 0}
	}
	var wait int64
	if r.last > c {
		wait = r.last*m.period - t
	}
	if wait > m.timeout {
		return reservation{}, 0, errModelRejected
	}
	for k, n := range r.parts {
		m.taken[k] += n
	}
	m.admitted[r.last]++
	if m.admitted[r.last] > m.capOf(r.last) {
		m.overAdmitted = append(m.overAdmitted, r.last)
	}
	return r, wait, nil
}

// cancel gives r's permissions back when nothing was taken after them; the caller does not
// proceed either way.
func (m *model) cancel(r reservation, c int64) {
	m.admitted[r.last]--
	if r.gen != m.gen || m.first(c) != r.end {
		return
	}
	for k, n := range r.parts {
		m.taken[k] -= n
	}
}

func (m *model) drain(c int64) int64 {
	f := m.first(c)
	if f.cycle > c {
		return 0
	}
	drained := m.capOf(c) - f.off
	m.taken[c] += drained
	return drained
}

// change applies limit as Resilience4j's changeLimitForPeriod: from the next cycle, the
// permissions already taken counting against it, the excess spilling into the cycles after.
// When reservations reach beyond the next cycle, limit applies from the last cycle holding
// them, whose waiters proceed there, and the cycles before it keep their limit.
func (m *model) change(limit, c int64) {
	if limit == m.limit() {
		return
	}
	f := m.first(c)
	last := f.cycle // the last cycle with a permission taken
	if f.off == 0 {
		last--
	}
	from := max(c+1, last)
	for len(m.segs) > 0 && m.segs[len(m.segs)-1].from >= from {
		m.segs = m.segs[:len(m.segs)-1]
	}
	m.segs = append(m.segs, seg{from, limit})
	for k := from; m.taken[k] > limit; k++ {
		m.taken[k+1] += m.taken[k] - limit
		m.taken[k] = limit
	}
	m.gen++
}

func (m *model) metrics(t int64, waiting int) ratelimiter.Metrics {
	c := t / m.period
	f := m.first(c)
	mt := ratelimiter.Metrics{NumberOfWaitingCalls: waiting, Cycle: c}
	if f.cycle == c {
		mt.AvailablePermissions = int(m.capOf(c) - f.off)
	} else {
		avail := -f.off
		for k := c + 1; k < f.cycle; k++ {
			avail -= m.capOf(k)
		}
		mt.AvailablePermissions = int(avail)
		mt.NanosToWait = time.Duration(f.cycle*m.period - t)
	}
	return mt
}

// waiter is an AcquirePermission running in its own goroutine.
type waiter struct {
	res    reservation
	wake   int64 // expected return, nanoseconds since creation
	cancel context.CancelFunc
	done   chan acquired
}

type acquired struct {
	err error
	at  int64
}

func sameOutcome(got, want error) bool {
	switch want {
	case nil:
		return got == nil
	case errModelInvalid:
		return errors.Is(got, ratelimiter.ErrInvalidPermits)
	case errModelRejected:
		return errors.Is(got, ratelimiter.ErrRequestNotPermitted)
	}
	return false
}

// The limiter against the model over random sequences of time, reservations, waiting
// acquisitions, cancellations, drains and changes of limit, with exact values after each step.
func TestRateLimiterMatchesReferenceModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		rapid.SyncTest(rt, func(rt *rapid.T) {
			limit := rapid.Int64Range(1, 4).Draw(rt, "limit")
			timeout := rapid.SampledFrom([]time.Duration{ratelimiter.NoWait, 500 * time.Millisecond,
				time.Second, 2500 * time.Millisecond, 4 * time.Second}).Draw(rt, "timeout")
			const period = time.Second
			rl, err := ratelimiter.New("model", ratelimiter.Config{
				LimitForPeriod: int(limit), LimitRefreshPeriod: period, TimeoutDuration: timeout})
			if err != nil {
				rt.Fatal(err)
			}
			created := time.Now()
			now := func() int64 { return int64(time.Since(created)) }
			m := newModel(limit, period, timeout)
			var drained int
			rl.Subscribe(func(e ratelimiter.Event) {
				if e.Type == ratelimiter.EventDrained {
					drained = e.Permits
				}
			})
			var waiting []*waiter
			rt.Cleanup(func() {
				for _, w := range waiting {
					w.cancel()
				}
				synctest.Wait()
			})

			rt.Repeat(map[string]func(*rapid.T){
				"advance": func(rt *rapid.T) {
					dt := rapid.SampledFrom([]time.Duration{time.Nanosecond, 250 * time.Millisecond,
						time.Second, 3 * time.Second, -1}).Draw(rt, "dt")
					if dt < 0 {
						dt = time.Duration(int64(period) - now()%int64(period)) // to the next cycle
					}
					time.Sleep(dt)
					synctest.Wait()
					kept := waiting[:0]
					for _, w := range waiting {
						if w.wake > now() {
							kept = append(kept, w)
							continue
						}
						got := <-w.done
						if got.err != nil || got.at != w.wake {
							rt.Fatalf("waiter: got (%v, %v), want (nil, %v)", got.err, got.at, w.wake)
						}
						w.cancel()
					}
					waiting = kept
				},
				"contend": func(rt *rapid.T) {
					// A spell of contention serialises the acquires; they must take exactly
					// what the lock-free ones take.
					ratelimiter.StartContentionSpell(rl)
				},
				"reserve": func(rt *rapid.T) {
					n := rapid.Int64Range(1, 5).Draw(rt, "n")
					_, wantWait, wantErr := m.take(n, now())
					wait, err := rl.ReservePermission(int(n))
					if !sameOutcome(err, wantErr) || int64(wait) != wantWait {
						rt.Fatalf("ReservePermission(%d): got (%v, %v), want (%v, %v)", n, wait, err, wantWait, wantErr)
					}
				},
				"acquire": func(rt *rapid.T) {
					n := rapid.Int64Range(1, 5).Draw(rt, "n")
					res, wantWait, wantErr := m.take(n, now())
					ctx, cancel := context.WithCancel(context.Background())
					w := &waiter{res: res, wake: now() + wantWait, cancel: cancel, done: make(chan acquired, 1)}
					go func() {
						err := rl.AcquirePermission(ctx, int(n))
						w.done <- acquired{err, int64(time.Since(created))}
					}()
					synctest.Wait()
					if wantErr == nil && wantWait > 0 {
						select {
						case got := <-w.done:
							rt.Fatalf("AcquirePermission(%d) returned %v, want a wait of %v", n, got.err, wantWait)
						default:
						}
						waiting = append(waiting, w)
						return
					}
					got := <-w.done
					cancel()
					if !sameOutcome(got.err, wantErr) || got.at != now() {
						rt.Fatalf("AcquirePermission(%d): got %v, want %v at once", n, got.err, wantErr)
					}
				},
				"cancel": func(rt *rapid.T) {
					if len(waiting) == 0 {
						rt.Skip("nobody waits")
					}
					i := rapid.IntRange(0, len(waiting)-1).Draw(rt, "waiter")
					w := waiting[i]
					waiting = append(waiting[:i], waiting[i+1:]...)
					w.cancel()
					got := <-w.done
					if !errors.Is(got.err, context.Canceled) || got.at != now() {
						rt.Fatalf("cancelled waiter: got (%v, %v), want context.Canceled at %v", got.err, got.at, now())
					}
					m.cancel(w.res, now()/int64(period))
				},
				"drain": func(rt *rapid.T) {
					want := m.drain(now() / int64(period))
					rl.DrainPermissions()
					if int64(drained) != want {
						rt.Fatalf("drained %d, want %d", drained, want)
					}
				},
				"change": func(rt *rapid.T) {
					n := rapid.Int64Range(1, 5).Draw(rt, "limit")
					m.change(n, now()/int64(period))
					if err := rl.ChangeLimitForPeriod(int(n)); err != nil {
						rt.Fatal(err)
					}
				},
				"": func(rt *rapid.T) {
					if got, want := rl.Metrics(), m.metrics(now(), len(waiting)); got != want {
						rt.Fatalf("Metrics: got %+v, want %+v", got, want)
					}
					// A cycle may hold more waiters than a lowered limit (they were admitted
					// under the old one); a new admission never takes it past its limit.
					if len(m.overAdmitted) > 0 {
						rt.Fatalf("cycles %v admitted a caller past their limit", m.overAdmitted)
					}
				},
			})
		})
	})
}
