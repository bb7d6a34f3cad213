package ratelimiter

import (
	"context"
	"math"
	"math/bits"
	"time"
)

// The permission cursor.
//
// Number the permissions of all cycles one after the other, as slots: with a limit L, cycle 0
// owns slots 0..L−1, cycle 1 owns L..2L−1, and cycle c starts at slot start(c) = c·L. All the
// mutable state of the limiter is one cursor u: the first slot nobody has taken. At cycle c
// the first free slot is f = max(u, start(c)) — the untaken slots of past cycles are gone,
// which is why permissions do not carry over — and the available permissions are
// start(c+1) − f, negative when slots of later cycles are taken. Taking p permits moves the
// cursor to u' = f + p; the caller proceeds when the cycle of its last slot, u'−1, begins.
//
// This is Resilience4j's AtomicRateLimiter, whose state is the permissions π of a stored cycle.
// Read π at cycle c as start(c+1) − max(u, start(c)) = min(start(c+1) − u, L):
//
//   - Refresh. Stored at cycle c' with π' = start(c'+1) − u, Resilience4j refreshes to
//     min(π' + (c−c')·L, L) at cycle c; and start(c+1) − u = π' + (c−c')·L, so both agree.
//   - Take. Resilience4j sets π −= p; the cursor moves from f = start(c+1) − π to f + p, and
//     start(c+1) − (f + p) = π − p.
//   - Wait. Resilience4j waits 0 when π ≥ p: then u'−1 = start(c+1) − π + p − 1 < start(c+1)
//     lies in cycle c. Otherwise it waits fullCycles·period + (start of cycle c+1 − now), with
//     fullCycles = ⌈(p − π − L)/L⌉; the last slot lies in cycle c + 1 + ⌊(p − π − 1)/L⌋, and
//     ⌊(a + L − 1)/L⌋ = ⌈a/L⌉ makes the two equal: both wait until that cycle begins.
//   - Refusal. Resilience4j keeps the refreshed π and reserves nothing; the cursor is not
//     touched, and the refresh is implicit in max(u, start(c)).
//
// A cancelled waiter's slots [u'−p, u') are given back only while u = u' (compare-and-swap back
// to u'−p): after that someone holds later slots and waits for their cycle, and moving the
// cursor back would hand the same permissions out twice. Each slot is held by at most one
// caller, a caller proceeds in the cycle of its last slot, so no cycle admits more callers
// than it has slots.
//
// Changing the limit changes the mapping from slots to cycles. The mapping is held by an
// immutable epoch (limit, cycle0, slot0): start(c) = slot0 + (c − cycle0)·limit from cycle0 on,
// and older epochs, kept in prev, give the mapping before cycle0. A change installs a new epoch
// whose cycle0 is the next cycle, or the last one holding reservations, and whose slot0 is that
// cycle's first slot: the slots taken there count against the new limit, as Resilience4j's
// permissions do, and the cycles before it keep their mapping (see relimited). The word
// holds a generation next to the cursor: a compare-and-swap computed with an old epoch fails.
//
// Slot numbers grow with time (by limit per cycle), so an epoch is re-based — same mapping,
// numbers shifted so that the current cycle starts at slot 0 — before they reach rebaseAt,
// 2⁵⁵ slots: every 11 years at the default rate, every 65µs at the highest rate the
// configuration allows. A re-base allocates one epoch.

const (
	genBits  = 8 // 256 generations: a stale computation must sleep through 256 epoch changes
	slotBits = 64 - genBits
	slotMask = 1<<slotBits - 1
	genMask  = 1<<genBits - 1
	// rebaseAt leaves room above it for every reservation MaxReservablePermissions allows.
	rebaseAt = 1 << (slotBits - 1)
)

// epoch maps slots to cycles; it is never modified once published.
type epoch struct {
	gen    uint64
	limit  int64 // slots per cycle from cycle0 on
	cycle0 int64
	slot0  int64 // the first slot of cycle0
	dmax   int64 // cycles after cycle0 before start() passes rebaseAt
	prev   *epoch
}

func newEpoch(limit, cycle0, slot0 int64, prev *epoch) *epoch {
	return &epoch{limit: limit, cycle0: cycle0, slot0: slot0, dmax: (rebaseAt - slot0) / limit, prev: prev}
}

// start returns the first slot of cycle k.
func (e *epoch) start(k int64) int64 {
	for k < e.cycle0 && e.prev != nil {
		e = e.prev
	}
	return e.slot0 + (k-e.cycle0)*e.limit
}

// cycleOf returns the cycle slot s belongs to.
func (e *epoch) cycleOf(s int64) int64 {
	for s < e.slot0 && e.prev != nil {
		e = e.prev
	}
	return e.cycle0 + floorDiv(s-e.slot0, e.limit)
}

// history returns a copy of e and of the older epochs still needed from cycle c on, with every
// slot number lowered by delta.
func (e *epoch) history(delta, c int64) *epoch {
	h := &epoch{limit: e.limit, cycle0: e.cycle0, slot0: e.slot0 - delta}
	if e.cycle0 > c && e.prev != nil {
		h.prev = e.prev.history(delta, c)
	}
	return h
}

// rebased returns the epoch with e's mapping from cycle c on, numbered so that cycle c starts at
// slot 0, and the cursor u renumbered. It computes start(c) only where it cannot overflow.
func rebased(e *epoch, u, c int64) (*epoch, int64) {
	d := c - e.cycle0
	nu := int64(0) // u is before cycle c: nothing of c or later is taken
	if u >= e.slot0 && d <= (u-e.slot0)/e.limit {
		nu = u - (e.slot0 + d*e.limit)
	}
	return newEpoch(e.limit, c, 0, nil), nu
}

// relimited builds the epoch in which limit applies from the next cycle, as Resilience4j's
// changeLimitForPeriod: the permissions already taken or reserved count against the new limit,
// the first of them in the cycle where the new limit starts. When reservations reach beyond
// the next cycle, the new limit starts in the last cycle holding reservations, and the cycles
// before it keep their mapping: their waiters proceed in them whatever the limit, so counting
// their permissions in an earlier cycle would let a later one admit more than its limit. Slot
// numbers are re-based on the current cycle c; the cursor keeps its place.
func relimited(limit int64) func(e *epoch, u, c int64) (*epoch, int64) {
	return func(e *epoch, u, c int64) (*epoch, int64) {
		base := e.start(c)
		f := max(u, base)
		from := max(c+1, e.cycleOf(f-1)) // f−1 is the last slot taken
		return newEpoch(limit, from, e.start(from)-base, e.history(base, c)), f - base
	}
}

// view is a consistent reading: the word, its epoch and the time.
type view struct {
	w uint64
	e *epoch
	u int64 // the cursor
	t int64 // nanoseconds since the limiter was created
	c int64 // the current cycle
}

// first returns the first free slot.
func (v *view) first() int64 { return max(v.u, v.e.start(v.c)) }

// look reads the word, its epoch and then the clock, in that order: the clock is read after
// the word, so it is never earlier than the time an epoch in the word was computed at.
func (rl *RateLimiter) look() view {
	for {
		w := rl.state.Load()
		e := rl.epoch.Load()
		if w>>slotBits != e.gen {
			// An epoch change is between swapping the word and storing the epoch. It holds mu
			// for both, so waiting for mu waits for it, without spinning.
			rl.mu.Lock()
			rl.mu.Unlock()
			continue
		}
		t := rl.elapsed()
		c := rl.cycle(t)
		u := int64(w & slotMask)
		if d := c - e.cycle0; d >= 0 && (d > e.dmax || u > rebaseAt) {
			rl.install()
			continue
		}
		return view{w: w, e: e, u: u, t: t, c: c}
	}
}

// cycle returns t / period for t ≥ 0 without a division instruction, which takes tens of
// cycles on common processors: recip = ⌊(2⁶⁴−1)/period⌋ ≥ 2⁶⁴/period − 1, so that
// q = ⌊t·recip/2⁶⁴⌋ lies in (t/period − 1, t/period] and is the quotient or one less; the
// remainder tells which.
func (rl *RateLimiter) cycle(t int64) int64 {
	q, _ := bits.Mul64(uint64(t), rl.recip)
	if uint64(t)-q*uint64(rl.period) >= uint64(rl.period) {
		q++
	}
	return int64(q)
}

func (rl *RateLimiter) elapsed() int64 {
	return max(int64(time.Since(rl.created)), 0)
}

// install re-bases the slot numbers, if still due.
func (rl *RateLimiter) install() {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	rl.installLocked(nil)
}

// installLocked publishes a new epoch built by change from the current one, re-basing first
// when the slot numbers are due; with change nil it only re-bases, if still due. Epochs change
// under mu, which also orders the changes of limit and timeout; the word is swapped before the
// epoch is stored, see look.
func (rl *RateLimiter) installLocked(change func(e *epoch, u, c int64) (*epoch, int64)) {
	e := rl.epoch.Load() // under mu the word's generation is e's
	for {
		w := rl.state.Load()
		u := int64(w & slotMask)
		c := rl.cycle(rl.elapsed())
		d := c - e.cycle0
		due := d >= 0 && (d > e.dmax || u > rebaseAt)
		if change == nil && !due {
			return // re-based by another goroutine meanwhile
		}
		ne, nu := e, u
		if due {
			ne, nu = rebased(e, u, c)
		}
		if change != nil {
			ne, nu = change(ne, nu, c)
		}
		ne.gen = (e.gen + 1) & genMask
		if rl.state.CompareAndSwap(w, ne.gen<<slotBits|uint64(nu)) {
			rl.epoch.Store(ne)
			return
		}
	}
}

// grant is a successful take: the wait and the word stored, to give the permits back.
type grant struct {
	wait    int64
	end     uint64
	permits int64
}

// takeFree is the common path of take, reading the clock once: it takes p permits of the
// current cycle when they are free (taken), or reports that they are not (full), in which case
// a request that may not wait is refused without more ado. It reads the word, the epoch and the
// clock in look's order, and leaves every other case (a stale epoch, a re-base due, an invalid
// p, a lost race, a request that may wait) to take. t is the clock reading. A lost race starts
// a spell of contention (see below), during which callers use takeFreeSerial instead.
func (rl *RateLimiter) takeFree(p int64) (taken, full bool, t int64) {
	w := rl.state.Load()
	e := rl.epoch.Load()
	t = rl.elapsed()
	c := rl.cycle(t)
	d := c - e.cycle0
	u := int64(w & slotMask)
	if w>>slotBits != e.gen || d < 0 || d > e.dmax || u > rebaseAt || p < 1 || p > e.limit {
		return false, false, t
	}
	base := e.slot0 + d*e.limit
	end := max(u, base) + p
	if end > base+e.limit {
		return false, true, t
	}
	if rl.state.CompareAndSwap(w, w&^slotMask|uint64(end)) {
		return true, false, t
	}
	rl.contend(t)
	return false, false, t
}

// Contention.
//
// The word's compare-and-swap must follow the clock reading it was computed with (see look):
// swapped before the reading, a permit could be taken in a cycle that has ended, carried into
// the next one. So every acquire holds the word's cache line from its load, across the clock
// reading, to its swap, and when two cores acquire at once each keeps taking the line from the
// other in that span, and each lost swap costs another reading. A mutex avoids that: its
// waiter spins or sleeps while the holder, whose cache keeps both lines, acquires again and
// again. So a lost compare-and-swap, the sign that another core acquires at the same instants,
// sends every acquire through the mutex serial for a spell of contentionSpell; the first
// acquire after the spell goes lock-free again, and only another lost swap starts a new
// spell. Even under contention a swap is seldom lost (the line moves between the load and
// the swap far more often than another acquire's swap lands in that span: 56 to 585 lost
// swaps in 3,000,000 acquires of two goroutines on two cores), about one a millisecond, so a
// spell lasts 10 ms: a 1 ms one covered a fifth to a third of the acquires of such a run.
// Uncontended, an acquire reads one more word (contended, next to the fields it reads
// anyway) and takes no lock. Serial acquires are the lock-free ones in turn: the permissions
// they take, the errors and every wait are the same.
const contentionSpell = int64(10 * time.Millisecond)

// contend starts a spell of contention at t unless one is on: the word sits with fields every
// acquire reads, so it is written once per spell.
func (rl *RateLimiter) contend(t int64) {
	if rl.contended.Load() == 0 {
		rl.contended.Store(t + contentionSpell)
	}
}

// takeFreeSerial is takeFree under serial during a spell of contention, which it ends once its
// clock reading is past it.
func (rl *RateLimiter) takeFreeSerial(p int64) (taken, full bool) {
	rl.serial.Lock()
	taken, full, t := rl.takeFree(p)
	if until := rl.contended.Load(); until != 0 && t >= until {
		rl.contended.Store(0)
	}
	rl.serial.Unlock()
	return taken, full
}

// take takes p permits, or reserves them when the wait for them fits in the timeout (see
// timeoutFor; ctx is nil for a request that does not wait); a single compare-and-swap publishes
// it. It takes nothing when it returns an error. The timeout is only looked at when the
// permits are not free now, so that the common path reads the clock once.
func (rl *RateLimiter) take(p int64, ctx context.Context) (grant, error) {
	for {
		v := rl.look()
		if p < 1 || p > v.e.limit {
			return grant{}, invalidPermits(p, v.e.limit)
		}
		end := v.first() + p
		var wait int64
		if end > v.e.start(v.c+1) { // the last slot is in a later cycle
			timeout := rl.timeoutFor(ctx)
			if timeout == 0 {
				return grant{}, rl.refused // any wait is too long
			}
			k := v.e.cycleOf(end - 1)
			var ok bool
			if wait, ok = waitFor(k-v.c, v.t-v.c*rl.period, rl.period, timeout); !ok {
				return grant{}, rl.refused
			}
		}
		w := v.w&^slotMask | uint64(end)
		if rl.state.CompareAndSwap(v.w, w) {
			return grant{wait: wait, end: w, permits: p}, nil
		}
		rl.contend(v.t)
	}
}

// timeoutFor returns the longest wait a request may be given: TimeoutDuration, shortened to
// end before ctx's deadline when ctx has one. A wait that would outlast ctx would only end in
// ctx.Err(), and its permissions might no longer be given back by then: it is refused now,
// like one beyond the timeout.
func (rl *RateLimiter) timeoutFor(ctx context.Context) int64 {
	timeout := rl.timeout.Load()
	if timeout > 0 && ctx != nil {
		if deadline, ok := ctx.Deadline(); ok {
			timeout = max(min(timeout, int64(time.Until(deadline))-1), 0)
		}
	}
	return timeout
}

// giveBack returns g's permits if nobody took any after them.
func (rl *RateLimiter) giveBack(g grant) bool {
	return rl.state.CompareAndSwap(g.end, g.end-uint64(g.permits))
}

// drainCycle moves the cursor to the end of the current cycle, unless reservations already took
// it further, and returns the number of permissions it removed.
func (rl *RateLimiter) drainCycle() int64 {
	for {
		v := rl.look()
		next, f := v.e.start(v.c+1), v.first()
		if f >= next {
			return 0
		}
		if rl.state.CompareAndSwap(v.w, v.w&^slotMask|uint64(next)) {
			return next - f
		}
	}
}

// waitFor returns the wait until the start of the cycle dk cycles after the current one, r
// nanoseconds into the current one, and whether it fits in timeout, without overflowing.
func waitFor(dk, r, period, timeout int64) (int64, bool) {
	q := timeout / period
	switch {
	case dk <= q:
		return dk*period - r, true
	case dk > q+1:
		return 0, false
	case period-r <= timeout-q*period:
		return q*period + period - r, true
	}
	return 0, false
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// satMul returns a·b, or math.MaxInt64 when that overflows (a, b ≥ 0).
func satMul(a, b int64) int64 {
	if b != 0 && a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}
