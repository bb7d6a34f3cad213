package leveeredis

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// localShare is the limiter of FallbackToLocal: Resilience4j's cycle algorithm, as the shared
// Cycles script, holding this replica's share of the limit per cycle. Its cycles are the
// shared ones: multiples of the period since the Unix epoch on Redis's clock, estimated from
// the answers (now plus the learned offset), so that an episode starts and ends on the fleet's
// cycle boundaries.
//
// It also keeps what the fleet's budget must learn when Redis answers again: owed, the
// permissions it granted from the current cycle on (the current cycle's and those reserved in
// later ones).
type localShare struct {
	period int64 // µs

	mu    sync.Mutex
	share int64 // permissions per cycle; 0: none (the replica count is unknown)
	c     int64 // the cycle p belongs to
	p     int64 // permissions left in cycle c, negative while later cycles are reserved
	owed  int64 // permissions granted from cycle c on
	seq   int64 // grants so far
	// from is the first cycle in which the share may grant: every cycle before it was
	// promised to Redis (see contact), which counts this replica's permissions there.
	from int64

	degraded *atomic.Bool // the limiter's: an episode is on
	guard    atomic.Int64 // µs at the end of each cycle in which nothing is granted
	waiting  atomic.Int64
}

// contact is called before each round trip to Redis at now (µs, Redis's clock), whose script
// may not run after deadline (µs, Redis's clock; 0: no deadline). Outside an episode, with a
// deadline, the round trip carries a promise: this replica grants nothing locally in the
// cycle Redis runs it in (at the latest deadline's) and the next, which Redis records so that
// no other replica counts on this replica's share then. It returns the debt to report (as
// debt) and whether to promise. The decision and the debt are taken under the lock the
// grants take, so that no local grant slips in between unreported and unpromised. A round
// trip that cannot report the debt (a heartbeat: reports is false) promises only when there
// is none: Redis stops holding this replica's share back once it has its promise, so the
// local grants of the cycle must reach it with the promise.
func (l *localShare) contact(now, deadline int64, reports bool) (cycle, owed, share int64, promise bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refresh(now / l.period)
	if deadline > 0 && !l.degraded.Load() && (reports || l.owed == 0) {
		promise = true
		l.from = max(l.from, deadline/l.period+2)
	}
	return l.c, l.owed, l.share, promise
}

// refresh brings the state to cycle cur. Callers hold mu.
func (l *localShare) refresh(cur int64) {
	if cur <= l.c {
		return
	}
	d := cur - l.c
	if l.share > 0 && d > (1<<62)/l.share {
		d = (1 << 62) / max(l.share, 1)
	}
	l.p = min(l.p+d*l.share, l.share)
	l.owed = max(l.owed-d*l.share, 0)
	l.c = cur
}

// block spends what is left of the cycle of now: an episode starts in a cycle Redis was
// counting, whose admissions this replica does not know, so the share engages from the next
// cycle on.
func (l *localShare) block(now int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refresh(now / l.period)
	l.p = min(l.p, 0)
}

// setShare changes the permissions per cycle from the next cycle on; the current cycle keeps
// at most the new share.
func (l *localShare) setShare(share int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.share = share
	l.p = min(l.p, share)
}

func (l *localShare) getShare() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.share
}

// take grants n permissions at now (µs, Redis's clock) when they are free or come due within
// timeout µs: granted, the wait before using them, and the grant's sequence number. A refusal
// returns the wait it would have needed (0 when the share can never grant n).
func (l *localShare) take(now, n, timeout int64) (ok bool, wait, seq int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refresh(now / l.period)
	if n > l.share {
		return false, 0, 0
	}
	if cur := now / l.period; cur < l.from {
		// a promised cycle: Redis counts on this replica taking nothing locally
		return false, l.from*l.period - now, 0
	}
	if end := (l.c + 1) * l.period; end-now <= l.guard.Load() {
		// so close to the cycle's end that Redis's clock may be in the next cycle already
		return false, end - now, 0
	}
	if l.p < n {
		k := l.c + 1 + (n-l.p-1)/l.share
		wait = max(k*l.period-now, 0)
		if wait > timeout {
			return false, wait, 0
		}
	}
	l.p -= n
	l.owed += n
	l.seq++
	return true, wait, l.seq
}

// giveBack returns a grant when no grant followed it.
func (l *localShare) giveBack(n, seq int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seq == seq {
		l.p += n
		l.owed = max(l.owed-n, 0)
	}
}

// nanosToWait is how long one permission asked at now would wait.
func (l *localShare) nanosToWait(now int64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refresh(now / l.period)
	if l.c < l.from {
		return time.Duration(l.from*l.period-now) * time.Microsecond
	}
	if l.p >= 1 || l.share == 0 {
		return 0
	}
	k := l.c + 1 + (-l.p)/l.share
	return time.Duration(max(k*l.period-now, 0)) * time.Microsecond
}

// acquire is take for AcquirePermission: it waits for a reserved grant, giving it back when
// ctx ends first.
func (l *localShare) acquire(ctx context.Context, now, n, timeout int64) (bool, error) {
	ok, wait, seq := l.take(now, n, timeout)
	if !ok || wait == 0 {
		return ok, nil
	}
	l.waiting.Add(1)
	defer l.waiting.Add(-1)
	timer := time.NewTimer(time.Duration(wait) * time.Microsecond)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true, nil
	case <-ctx.Done():
		l.giveBack(n, seq)
		return false, ctx.Err()
	}
}
