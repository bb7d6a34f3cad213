package adaptive

import (
	"context"
	"time"

	"github.com/levee-go/levee/internal/waiters"
)

// wait is the slow path of Acquire, entered with l.mu held: queue up and wait for a permit,
// MaxWaitDuration or ctx, whichever comes first.
func (l *Limiter) wait(ctx context.Context) (Permit, error) {
	w := l.queue.Push()
	l.mu.Unlock()

	p, res := l.queue.Await(ctx, w, l.cfg.MaxWaitDuration, &l.mu, nil)
	switch res {
	case waiters.Granted:
		l.publish(EventCallPermitted, -1)
		return p, nil
	case waiters.TimedOut:
		l.reject()
		return Permit{}, l.fullErr
	case waiters.CancelledGranted:
		l.giveBack(p)
	}
	l.reject()
	return Permit{}, ctx.Err()
}

// giveBack returns the permit of a caller whose context ended as it was granted: the caller
// counts as rejected, not permitted.
func (l *Limiter) giveBack(p Permit) {
	l.mu.Lock()
	l.permitted--
	l.mu.Unlock()
	p.OnIgnore()
}

// grantLocked hands free slots to the queued callers in arrival order. l.mu must be held.
func (l *Limiter) grantLocked() {
	for !l.queue.Empty() && l.inFlight < l.limit {
		l.inFlight++
		l.permitted++
		l.queue.Grant(Permit{l: l, started: time.Now(), round: l.round, inFlight: l.inFlight})
	}
}
