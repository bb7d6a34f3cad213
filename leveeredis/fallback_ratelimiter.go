package leveeredis

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee/circuitbreaker"
)

// localGrantHook, set by the package's tests only, learns of every grant of the local share
// to AcquirePermission, with the request's ctx.
var localGrantHook func(ctx context.Context)

// counters are the limiter's decisions since New.
type counters struct {
	permitted, refused, givenBack        atomic.Uint64
	storeFailures, breakerRejections     atomic.Uint64
	localPermitted, localRefused         atomic.Uint64
	failOpenPermitted, failClosedRefused atomic.Uint64
	episodes, heartbeats                 atomic.Uint64
	storeRefused, reclaimed              atomic.Uint64
}

// unavailable decides a request Redis could not decide, by the FailureMode. With
// FallbackToLocal the local share answers only during an episode (the store breaker OPEN); a
// single failed check outside one is refused, since Redis may still count it.
func (rl *RateLimiter) unavailable(ctx context.Context, n int, cause error) error {
	episode := rl.degrade(cause)
	switch rl.cfg.FailureMode {
	case FailOpen:
		rl.counts.failOpenPermitted.Add(1)
		return nil
	case FailClosed:
		rl.counts.failClosedRefused.Add(1)
		return rl.storeError(cause)
	}
	if !episode {
		rl.counts.storeRefused.Add(1)
		return rl.storeError(cause)
	}
	ok, err := rl.local.acquire(ctx, rl.redisNow(), int64(n), rl.timeoutFor(ctx))
	switch {
	case err != nil:
		return err
	case ok:
		rl.counts.localPermitted.Add(1)
		if localGrantHook != nil {
			localGrantHook(ctx)
		}
		return nil
	}
	rl.counts.localRefused.Add(1)
	return rl.refused
}

// unavailableReserve is unavailable for ReservePermission.
func (rl *RateLimiter) unavailableReserve(n int, cause error) (time.Duration, error) {
	episode := rl.degrade(cause)
	switch rl.cfg.FailureMode {
	case FailOpen:
		rl.counts.failOpenPermitted.Add(1)
		return 0, nil
	case FailClosed:
		rl.counts.failClosedRefused.Add(1)
		return 0, rl.storeError(cause)
	}
	if !episode {
		rl.counts.storeRefused.Add(1)
		return 0, rl.storeError(cause)
	}
	ok, wait, _ := rl.local.take(rl.redisNow(), int64(n), rl.timeout.Load())
	d := time.Duration(wait) * time.Microsecond
	if !ok {
		rl.counts.localRefused.Add(1)
		return d, rl.refused
	}
	rl.counts.localPermitted.Add(1)
	return d, nil
}

func (rl *RateLimiter) storeError(cause error) error {
	if errors.Is(cause, rl.closedErr.Err) {
		return rl.closedErr // the breaker is open: one preallocated error
	}
	return &StoreError{Name: rl.name, Err: cause}
}

// degrade counts a request Redis could not decide and reports whether an episode of
// unavailability is on: the store breaker refused the check or is OPEN after it. The first
// request of an episode logs it and spends what is left of the current cycle of the local
// share (Redis was counting that cycle).
func (rl *RateLimiter) degrade(cause error) bool {
	if errors.Is(cause, rl.closedErr.Err) {
		rl.counts.breakerRejections.Add(1)
	} else {
		rl.counts.storeFailures.Add(1)
		// An episode lasts until Redis answers again: a HALF_OPEN probe that failed is in it.
		if st := rl.breaker.State(); !rl.degraded.Load() && st != circuitbreaker.Open && st != circuitbreaker.ForcedOpen {
			return false
		}
	}
	if rl.degraded.Load() || !rl.degraded.CompareAndSwap(false, true) {
		return true
	}
	rl.counts.episodes.Add(1)
	if rl.local != nil {
		rl.local.block(rl.redisNow())
	}
	if l := rl.cfg.Logger; l != nil && l.Enabled(context.Background(), slog.LevelWarn) {
		attrs := []slog.Attr{
			slog.String("pattern", "ratelimiter"), slog.String("name", rl.name),
			slog.String("failure_mode", rl.cfg.FailureMode.String()), slog.Any("err", cause),
		}
		if rl.local != nil {
			attrs = append(attrs, slog.Int("fallback_limit_for_period", int(rl.local.getShare())))
		}
		l.LogAttrs(context.Background(), slog.LevelWarn, "rate limiter store unavailable", attrs...)
	}
	return true
}

// recovered ends an episode, logging it once.
func (rl *RateLimiter) recovered() {
	if !rl.degraded.Load() || !rl.degraded.CompareAndSwap(true, false) {
		return
	}
	if l := rl.cfg.Logger; l != nil && l.Enabled(context.Background(), slog.LevelInfo) {
		l.LogAttrs(context.Background(), slog.LevelInfo, "rate limiter store available again",
			slog.String("pattern", "ratelimiter"), slog.String("name", rl.name),
			slog.String("failure_mode", rl.cfg.FailureMode.String()))
	}
}

// share returns this replica's share of the limit: FallbackLimitForPeriod when set, else
// max(1, ⌊limit / live replicas⌋), or 0 (refuse) while the count of replicas is unknown.
func (rl *RateLimiter) share() int {
	if rl.cfg.FallbackLimitForPeriod > 0 {
		return rl.cfg.FallbackLimitForPeriod
	}
	limit, replicas := rl.limit.Load(), rl.replicas.Load()
	if replicas < 1 {
		return 0
	}
	return int(max(1, limit/replicas))
}

// updateShare applies a new limit or replica count to the local share, from the next cycle on.
func (rl *RateLimiter) updateShare() {
	if rl.local != nil {
		rl.local.setShare(int64(rl.share()))
	}
}

// heartbeat records the replica in Redis every HeartbeatInterval and learns the number of
// live replicas and the limit from the answer; a failed beat keeps the last values.
//
// A rise in the count is believed at once (it makes the share smaller). A drop is believed
// only when every heartbeat of a whole window of ten intervals succeeded, and the largest
// count they saw is the new one; and never during an episode. A Redis restarted empty, or reached again after an outage, has heard only from the
// replicas that beat since: believing its first answers would enlarge this replica's share
// (up to the whole limit, as if it were alone) while the others still take theirs.
func (rl *RateLimiter) heartbeat() {
	defer close(rl.done)
	ticker := time.NewTicker(rl.cfg.HeartbeatInterval)
	defer ticker.Stop()
	stale := 3 * rl.cfg.HeartbeatInterval.Microseconds()
	window := 10 * rl.cfg.HeartbeatInterval
	var w dropWindow
	for {
		// A heartbeat waits longer than a check (half an interval): a slow Redis must not make
		// the replicas drop out of each other's count, which would enlarge their shares.
		wait := max(rl.cfg.StoreTimeout, rl.cfg.HeartbeatInterval/2)
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		// An idle replica promises by its heartbeats, as a busy one by its checks, that it
		// grants nothing locally now and in the next cycle (see localShare.contact).
		var deadline int64
		if d, ok := ctx.Deadline(); ok && rl.offsetOK.Load() {
			deadline = d.UnixMicro() + rl.offset.Load() - wait.Microseconds()/2
		}
		_, _, share, promise := rl.local.contact(rl.redisNow(), deadline, false)
		vals, err := scriptHeartbeat.Run(ctx, rl.client, rl.heartKeys, rl.cfg.ReplicaID, stale, rl.cfg.LimitForPeriod,
			rl.periodUs, boolArg(promise), deadline, share, rl.keep).Int64Slice()
		cancel()
		if err == nil && len(vals) == 3 {
			if vals[0] == 0 {
				err = errExpired // ran after its deadline: wrote nothing
			} else if !rl.offsetOK.Load() {
				rl.learnOffset(vals[2] - time.Now().UnixMicro())
			}
		}
		// The count is known from the second heartbeat on, one interval after this replica
		// registered: replicas started with it have registered by then, so that a fleet
		// starting together does not take its first count (each replica alone) for the truth.
		if err == nil && len(vals) == 3 {
			most, full := w.add(time.Now(), vals[0], window)
			if rl.counts.heartbeats.Add(1) > 1 {
				cur := rl.replicas.Load()
				next := max(cur, vals[0], 1)
				if cur == 0 || (full && most < cur && !rl.degraded.Load()) {
					next = max(most, 1)
				}
				rl.replicas.Store(next)
			}
			rl.limit.Store(vals[1])
			rl.updateShare()
		} else {
			w.reset()
		}
		select {
		case <-rl.stop:
			return
		case <-ticker.C:
		}
	}
}

// dropWindow holds the counts seen by the successful heartbeats since the last failed one,
// for the last window.
type dropWindow struct {
	since time.Time // the first success since the last failure; zero after a failure
	beats []beatCount
}

type beatCount struct {
	at    time.Time
	count int64
}

func (w *dropWindow) reset() {
	w.since = time.Time{}
	w.beats = w.beats[:0]
}

// add records a successful heartbeat at now and returns the largest count seen within the
// last window, and whether the heartbeats succeeded for the whole window.
func (w *dropWindow) add(now time.Time, count int64, window time.Duration) (most int64, full bool) {
	if w.since.IsZero() {
		w.since = now
	}
	w.beats = append(w.beats, beatCount{at: now, count: count})
	keep := 0
	for keep < len(w.beats)-1 && now.Sub(w.beats[keep].at) > window {
		keep++
	}
	w.beats = append(w.beats[:0], w.beats[keep:]...)
	for _, b := range w.beats {
		most = max(most, b.count)
	}
	return most, now.Sub(w.since) >= window
}

// Metrics is a snapshot of a shared limiter's decisions at this replica since New. Every
// request is counted in exactly one of Permitted, Refused, StoreRefused, LocalPermitted,
// LocalRefused, FailOpenPermitted and FailClosedRefused, unless its context ended or n was
// invalid.
type Metrics struct {
	// Permitted and Refused are Redis's decisions (a reservation counts as permitted).
	Permitted, Refused uint64
	// GivenBack counts reservations given back by waiters whose context ended.
	GivenBack uint64
	// Reclaimed counts permissions Redis had counted for checks whose answers never arrived
	// (StoreTimeout passed on the way back), given back when Redis answered again within the
	// same cycle.
	Reclaimed uint64
	// StoreFailures counts checks Redis did not answer in StoreTimeout or answered with an
	// error; BreakerRejections those the open store breaker kept from Redis.
	StoreFailures, BreakerRejections uint64
	// StoreRefused counts the requests of FallbackToLocal refused because their check failed
	// outside an episode (the store breaker not OPEN): one slow answer is not an outage, and
	// Redis may still count the check, so the local share does not admit it.
	StoreRefused uint64
	// LocalPermitted and LocalRefused are the local share's decisions (FallbackToLocal),
	// made only during an episode.
	LocalPermitted, LocalRefused uint64
	// FailOpenPermitted counts requests admitted unchecked (FailOpen), as Envoy's
	// failure_mode_allowed; FailClosedRefused those refused (FailClosed).
	FailOpenPermitted, FailClosedRefused uint64
	// Episodes counts the times Redis became unavailable (the store breaker opened, or refused
	// a check); Degraded is true from then until Redis answers again.
	Episodes uint64
	Degraded bool
	// Heartbeats counts successful heartbeats; Replicas is the last count of live replicas
	// Redis reported, this one included (0 until known: a check or a heartbeat answered).
	Heartbeats uint64
	Replicas   int
	// LimitForPeriod is the shared limit as last reported by Redis; FallbackLimitForPeriod
	// the local share (0 unless FallbackToLocal, and 0 while the replica count is unknown).
	LimitForPeriod, FallbackLimitForPeriod int
	// AvailablePermissions is the shared permissions left after the last check Redis
	// answered, negative while later cycles are reserved, as Resilience4j's
	// getAvailablePermissions.
	AvailablePermissions int
	// NumberOfWaitingCalls is the number of AcquirePermission calls of this replica waiting for
	// a reservation (Resilience4j's getNumberOfWaitingThreads).
	NumberOfWaitingCalls int
	// NanosToWait is how long a request for one permission made now would wait, as the core
	// limiter's (Resilience4j's getNanosToWait), in µs precision: from the last answer of
	// Redis (the next cycle's start on Redis's clock when the current one is spent), or from
	// the local share during an episode. For Retry-After and gRPC pushback.
	NanosToWait time.Duration
}

// Metrics returns a snapshot of the counts now.
func (rl *RateLimiter) Metrics() Metrics {
	m := Metrics{
		Permitted:            rl.counts.permitted.Load(),
		Refused:              rl.counts.refused.Load(),
		GivenBack:            rl.counts.givenBack.Load(),
		Reclaimed:            rl.counts.reclaimed.Load(),
		StoreFailures:        rl.counts.storeFailures.Load(),
		BreakerRejections:    rl.counts.breakerRejections.Load(),
		StoreRefused:         rl.counts.storeRefused.Load(),
		LocalPermitted:       rl.counts.localPermitted.Load(),
		LocalRefused:         rl.counts.localRefused.Load(),
		FailOpenPermitted:    rl.counts.failOpenPermitted.Load(),
		FailClosedRefused:    rl.counts.failClosedRefused.Load(),
		Episodes:             rl.counts.episodes.Load(),
		Degraded:             rl.degraded.Load(),
		Heartbeats:           rl.counts.heartbeats.Load(),
		Replicas:             int(rl.replicas.Load()),
		LimitForPeriod:       int(rl.limit.Load()),
		AvailablePermissions: int(rl.available.Load()),
		NumberOfWaitingCalls: int(rl.waiting.Load()),
	}
	m.NanosToWait = rl.RetryAfter()
	if rl.local != nil {
		m.FallbackLimitForPeriod = int(rl.local.getShare())
		m.NumberOfWaitingCalls += int(rl.local.waiting.Load())
	}
	return m
}
