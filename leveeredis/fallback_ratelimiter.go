package leveeredis

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee/ratelimiter"
)

// counters are the limiter's decisions since New.
type counters struct {
	permitted, refused, givenBack        atomic.Uint64
	storeFailures, breakerRejections     atomic.Uint64
	localPermitted, localRefused         atomic.Uint64
	failOpenPermitted, failClosedRefused atomic.Uint64
	episodes, heartbeats                 atomic.Uint64
}

// unavailable decides a request while Redis cannot be asked, by the FailureMode.
func (rl *RateLimiter) unavailable(ctx context.Context, n int, cause error) error {
	rl.degrade(cause)
	switch rl.cfg.FailureMode {
	case FailOpen:
		rl.counts.failOpenPermitted.Add(1)
		return nil
	case FailClosed:
		rl.counts.failClosedRefused.Add(1)
		return rl.storeError(cause)
	}
	err := rl.local.Load().AcquirePermission(ctx, n)
	switch {
	case err == nil:
		rl.counts.localPermitted.Add(1)
	case errors.Is(err, ratelimiter.ErrInvalidPermits):
		// more than this replica's share: refused like any request beyond the share
		rl.counts.localRefused.Add(1)
		return rl.refused
	case errors.Is(err, ratelimiter.ErrRequestNotPermitted):
		rl.counts.localRefused.Add(1)
		return rl.refused
	}
	return err
}

// unavailableReserve is unavailable for ReservePermission.
func (rl *RateLimiter) unavailableReserve(n int, cause error) (time.Duration, error) {
	rl.degrade(cause)
	switch rl.cfg.FailureMode {
	case FailOpen:
		rl.counts.failOpenPermitted.Add(1)
		return 0, nil
	case FailClosed:
		rl.counts.failClosedRefused.Add(1)
		return 0, rl.storeError(cause)
	}
	wait, err := rl.local.Load().ReservePermission(n)
	if err != nil {
		rl.counts.localRefused.Add(1)
		return 0, rl.refused
	}
	rl.counts.localPermitted.Add(1)
	return wait, nil
}

func (rl *RateLimiter) storeError(cause error) error {
	if errors.Is(cause, rl.closedErr.Err) {
		return rl.closedErr // the breaker is open: one preallocated error
	}
	return &StoreError{Name: rl.name, Err: cause}
}

// degrade counts a request Redis could not decide and logs the start of an episode once.
func (rl *RateLimiter) degrade(cause error) {
	if errors.Is(cause, rl.closedErr.Err) {
		rl.counts.breakerRejections.Add(1)
	} else {
		rl.counts.storeFailures.Add(1)
	}
	if rl.degraded.Load() || !rl.degraded.CompareAndSwap(false, true) {
		return
	}
	rl.counts.episodes.Add(1)
	if l := rl.cfg.Logger; l != nil && l.Enabled(context.Background(), slog.LevelWarn) {
		attrs := []slog.Attr{
			slog.String("pattern", "ratelimiter"), slog.String("name", rl.name),
			slog.String("failure_mode", rl.cfg.FailureMode.String()), slog.Any("err", cause),
		}
		if rl.cfg.FailureMode == FallbackToLocal {
			attrs = append(attrs, slog.Int("fallback_limit_for_period", rl.local.Load().Config().LimitForPeriod))
		}
		l.LogAttrs(context.Background(), slog.LevelWarn, "rate limiter store unavailable", attrs...)
	}
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

// share returns this replica's share of the limit.
func (rl *RateLimiter) share() int {
	if rl.cfg.FallbackLimitForPeriod > 0 {
		return rl.cfg.FallbackLimitForPeriod
	}
	limit, replicas := rl.limit.Load(), max(rl.replicas.Load(), 1)
	return int((limit + replicas - 1) / replicas)
}

// newLocal builds the local limiter of FallbackToLocal at the current share.
func (rl *RateLimiter) newLocal() (*ratelimiter.RateLimiter, error) {
	timeout := time.Duration(rl.timeout.Load()) * time.Microsecond
	if timeout == 0 {
		timeout = ratelimiter.NoWait
	}
	return ratelimiter.New(rl.name, ratelimiter.Config{
		LimitForPeriod:     rl.share(),
		LimitRefreshPeriod: rl.cfg.LimitRefreshPeriod,
		TimeoutDuration:    timeout,
	})
}

// updateShare applies a new limit or replica count to the local limiter: while Redis answers,
// the local limiter is idle and is replaced, so that the share holds from the first call of
// the next outage; during an outage the share changes from the next cycle on, as
// ChangeLimitForPeriod.
func (rl *RateLimiter) updateShare() {
	local := rl.local.Load()
	if local == nil {
		return
	}
	rl.shareMu.Lock()
	defer rl.shareMu.Unlock()
	share := rl.share()
	if local.Config().LimitForPeriod == share {
		return
	}
	if !rl.degraded.Load() {
		if fresh, err := rl.newLocal(); err == nil {
			rl.local.Store(fresh)
			return
		}
	}
	_ = local.ChangeLimitForPeriod(share) // share ≥ 1 and bounded like the shared limit
}

// heartbeat records the replica in Redis every HeartbeatInterval and learns the number of
// live replicas and the limit from the answer; a failed beat keeps the last values.
func (rl *RateLimiter) heartbeat() {
	defer close(rl.done)
	ticker := time.NewTicker(rl.cfg.HeartbeatInterval)
	defer ticker.Stop()
	stale := 3 * rl.cfg.HeartbeatInterval.Microseconds()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), rl.cfg.StoreTimeout)
		vals, err := scriptHeartbeat.Run(ctx, rl.client, rl.heartKeys, rl.cfg.ReplicaID, stale, rl.cfg.LimitForPeriod).Int64Slice()
		cancel()
		if err == nil && len(vals) == 2 {
			rl.counts.heartbeats.Add(1)
			rl.replicas.Store(max(vals[0], 1))
			rl.limit.Store(vals[1])
			rl.updateShare()
		}
		select {
		case <-rl.stop:
			return
		case <-ticker.C:
		}
	}
}

// Metrics is a snapshot of a shared limiter's decisions at this replica since New. Every
// request is counted in exactly one of Permitted, Refused, LocalPermitted, LocalRefused,
// FailOpenPermitted and FailClosedRefused, unless its context ended or n was invalid.
type Metrics struct {
	// Permitted and Refused are Redis's decisions (a reservation counts as permitted).
	Permitted, Refused uint64
	// GivenBack counts reservations given back by waiters whose context ended.
	GivenBack uint64
	// StoreFailures counts checks Redis did not answer in StoreTimeout or answered with an
	// error; BreakerRejections those the open store breaker kept from Redis.
	StoreFailures, BreakerRejections uint64
	// LocalPermitted and LocalRefused are the local share's decisions (FallbackToLocal).
	LocalPermitted, LocalRefused uint64
	// FailOpenPermitted counts requests admitted unchecked (FailOpen), as Envoy's
	// failure_mode_allowed; FailClosedRefused those refused (FailClosed).
	FailOpenPermitted, FailClosedRefused uint64
	// Episodes counts the times Redis became unavailable; Degraded is true during one.
	Episodes uint64
	Degraded bool
	// Heartbeats counts successful heartbeats; Replicas is the last count of live replicas
	// (1 until known).
	Heartbeats uint64
	Replicas   int
	// LimitForPeriod is the shared limit as last reported by Redis; FallbackLimitForPeriod
	// the local share (0 unless FallbackToLocal).
	LimitForPeriod, FallbackLimitForPeriod int
	// AvailablePermissions is the shared permissions left after the last check Redis
	// answered, negative while later cycles are reserved, as Resilience4j's
	// getAvailablePermissions.
	AvailablePermissions int
	// NumberOfWaitingCalls is the number of AcquirePermission calls of this replica waiting for
	// a reservation (Resilience4j's getNumberOfWaitingThreads).
	NumberOfWaitingCalls int
}

// Metrics returns a snapshot of the counts now.
func (rl *RateLimiter) Metrics() Metrics {
	m := Metrics{
		Permitted:            rl.counts.permitted.Load(),
		Refused:              rl.counts.refused.Load(),
		GivenBack:            rl.counts.givenBack.Load(),
		StoreFailures:        rl.counts.storeFailures.Load(),
		BreakerRejections:    rl.counts.breakerRejections.Load(),
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
	if local := rl.local.Load(); local != nil {
		m.FallbackLimitForPeriod = local.Config().LimitForPeriod
		m.NumberOfWaitingCalls += local.Metrics().NumberOfWaitingCalls
	}
	return m
}
