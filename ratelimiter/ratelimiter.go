package ratelimiter

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee/internal/event"
	"github.com/levee-go/levee/internal/logging"
	"github.com/levee-go/levee/internal/reject"
	"github.com/levee-go/levee/internal/safe"
)

// RateLimiter admits at most LimitForPeriod permissions per cycle of LimitRefreshPeriod, cycles
// counted from its creation, as Resilience4j's AtomicRateLimiter (see the package comment for
// the model and for levee's differences). It is safe for concurrent use and meant to be shared
// by every call to the dependency it protects, whatever their result types. Create it with New.
//
// Build one with New. The zero value, like nil, is not usable: every method and function
// answers it exactly as it answers a nil pointer (ErrNilRateLimiter, a zero answer or a no-op),
// never with a panic.
type RateLimiter struct {
	// Every acquire reads the fields up to events and swaps state. state has a cache line of
	// its own, so that a swap on one core does not evict the fields the other cores only read:
	// with two cores acquiring at once, sharing the line cost 70 % more per acquire.
	epoch     atomic.Pointer[epoch]
	timeout   atomic.Int64 // nanoseconds; 0 for NoWait
	contended atomic.Int64 // the end of a spell of contention (elapsed ns), 0 for none; see slots.go
	period    int64
	recip     uint64 // ⌊(2⁶⁴−1)/period⌋, see cycle
	created   time.Time
	name      string
	refused   *RequestNotPermittedError // returned for every refusal: refusing allocates nothing
	drain     func(result any, err error) bool
	logger    *slog.Logger
	events    event.Publisher[Event]

	_     [cacheLine]byte
	state atomic.Uint64 // generation and permission cursor, see slots.go
	// serial orders the acquires during a spell of contention (see slots.go). It shares the
	// word's cache line: its holder swaps the word too.
	serial sync.Mutex
	_      [cacheLine - 16]byte

	waiting atomic.Int64
	mu      sync.Mutex // serialises epoch changes and the Change methods
}

// cacheLine is the cache line size of common 64-bit processors.
const cacheLine = 64

// New returns a rate limiter named name (the name appears in its errors and events)
// configured by cfg, whose zero fields take their defaults. It returns an error naming the
// first field out of range; it never panics. The first cycle begins now, full.
func New(name string, cfg Config) (*RateLimiter, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	rl := &RateLimiter{
		period:  int64(cfg.LimitRefreshPeriod),
		recip:   math.MaxUint64 / uint64(cfg.LimitRefreshPeriod),
		created: time.Now(),
		name:    name,
		refused: &RequestNotPermittedError{Name: name},
		drain:   cfg.DrainPermissionsOnResult,
		logger:  cfg.Logger,
	}
	logging.Subscribe(&rl.events, cfg.Logger, logging.RateLimiter, name, logRecord)
	rl.epoch.Store(newEpoch(int64(cfg.LimitForPeriod), 0, 0, nil))
	rl.timeout.Store(timeoutNanos(cfg.TimeoutDuration))
	return rl, nil
}

// Name returns the limiter's name.
func (rl *RateLimiter) Name() string {
	if rl.unset() {
		return ""
	}
	return rl.name
}

// Config returns the limiter's configuration with its defaults filled in and the latest
// ChangeLimitForPeriod and ChangeTimeoutDuration applied. A timeout of zero is reported as
// NoWait, so that the result can be passed to New again.
func (rl *RateLimiter) Config() Config {
	if rl.unset() {
		return Config{}
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	timeout := time.Duration(rl.timeout.Load())
	if timeout == 0 {
		timeout = NoWait
	}
	return Config{
		LimitForPeriod:           int(rl.epoch.Load().limit),
		LimitRefreshPeriod:       time.Duration(rl.period),
		TimeoutDuration:          timeout,
		DrainPermissionsOnResult: rl.drain,
		Logger:                   rl.logger,
	}
}

// AcquirePermission obtains n permissions, as Resilience4j's RateLimiter.acquirePermission(n):
//
//   - when the current cycle has n free permissions it takes them and returns nil at once;
//   - otherwise, when the cycle of the n-th next free permission begins within
//     TimeoutDuration, and before ctx's deadline if it has one, it reserves them, waits until
//     then and returns nil;
//   - otherwise it takes nothing and returns rl's *RequestNotPermittedError (errors.Is
//     ErrRequestNotPermitted) at once, without waiting.
//
// When ctx is cancelled while it waits, it returns ctx.Err() and gives the reservation back if
// no later reservation, drain or change of limit happened meanwhile (otherwise those
// permissions stay unused, see the package comment). When ctx has already ended it returns
// ctx.Err() and takes nothing. n must be in [1, LimitForPeriod], else the error matches
// ErrInvalidPermits. A nil ctx is Background. A SuccessfulAcquire or FailedAcquire event
// reports the outcome. Taking a free permission reads the clock once and allocates nothing.
func (rl *RateLimiter) AcquirePermission(ctx context.Context, n int) error {
	if rl.unset() {
		return ErrNilRateLimiter
	}
	ctx = safe.Ctx(ctx)
	if err := ctx.Err(); err != nil {
		return err
	}
	var taken, full bool
	if rl.contended.Load() == 0 {
		taken, full, _ = rl.takeFree(int64(n))
	} else {
		taken, full = rl.takeFreeSerial(int64(n))
	}
	switch {
	case taken:
		if rl.events.Active() {
			rl.publish(EventSuccessfulAcquire, n, 0, nil)
		}
		return nil
	case full && rl.timeout.Load() == 0:
		rl.publishRefusal(n, rl.refused)
		return rl.refused
	}
	g, err := rl.take(int64(n), ctx)
	if err != nil {
		rl.publishRefusal(n, err)
		return err
	}
	if g.wait == 0 {
		if rl.events.Active() {
			rl.publish(EventSuccessfulAcquire, n, 0, nil)
		}
		return nil
	}
	return rl.await(ctx, g, n)
}

// await waits for a reservation to come due, or for ctx to end.
func (rl *RateLimiter) await(ctx context.Context, g grant, n int) error {
	rl.waiting.Add(1)
	timer := time.NewTimer(time.Duration(g.wait))
	select {
	case <-timer.C:
		rl.waiting.Add(-1)
		if rl.events.Active() {
			rl.publish(EventSuccessfulAcquire, n, time.Duration(g.wait), nil)
		}
		return nil
	case <-ctx.Done():
		timer.Stop()
		rl.giveBack(g)
		rl.waiting.Add(-1)
		err := ctx.Err()
		if rl.events.Active() {
			rl.publish(EventFailedAcquire, n, 0, err)
		}
		return err
	}
}

// ReservePermission takes n permissions like AcquirePermission but does not wait: it returns 0
// when they are available now, the positive time the caller must wait before using them when
// they were reserved in a later cycle, or an error (*RequestNotPermittedError, ErrInvalidPermits)
// when it took nothing. Resilience4j's RateLimiter.reservePermission(n), whose −1 is the
// error. A reservation cannot be given back. It publishes SuccessfulAcquire (with the wait) or
// FailedAcquire at once.
func (rl *RateLimiter) ReservePermission(n int) (time.Duration, error) {
	if rl.unset() {
		return 0, ErrNilRateLimiter
	}
	g, err := rl.take(int64(n), nil)
	if err != nil {
		rl.publishRefusal(n, err)
		return 0, err
	}
	if rl.events.Active() {
		rl.publish(EventSuccessfulAcquire, n, time.Duration(g.wait), nil)
	}
	return time.Duration(g.wait), nil
}

// DrainPermissions takes every permission left in the current cycle, as Resilience4j's
// drainPermissions, so that no further call starts before the next cycle; that cycle starts
// full again. Reservations already made are kept: their callers proceed in their cycles. It
// publishes a Drained event whose Permits is the number of permissions removed.
func (rl *RateLimiter) DrainPermissions() {
	if rl.unset() {
		return
	}
	drained := rl.drainCycle()
	if rl.events.Active() {
		rl.publish(EventDrained, int(drained), 0, nil)
	}
}

// OnResult reports the result of a call made with a permission: when
// Config.DrainPermissionsOnResult returns true for (result, nil) the current cycle is drained.
// Execute calls it; callers of AcquirePermission may. Resilience4j's RateLimiter.onResult.
func (rl *RateLimiter) OnResult(result any) {
	if rl != nil && rl.drain != nil && rl.drains(result, nil) {
		rl.DrainPermissions()
	}
}

// OnError reports the error of a call made with a permission: when
// Config.DrainPermissionsOnResult returns true for (nil, err) the current cycle is drained.
// A levee rejection (levee.IsRejection: an inner bulkhead or breaker refused the call) is
// not offered to it and drains nothing. Resilience4j's RateLimiter.onError.
func (rl *RateLimiter) OnError(err error) {
	// A rejection by another levee pattern (an inner bulkhead or breaker) says nothing about
	// the dependency, which was never called: it never reaches the user's predicate.
	if rl != nil && rl.drain != nil && !reject.Is(err) && rl.drains(nil, err) {
		rl.DrainPermissions()
	}
}

// drains asks the user's predicate; one that panics drains nothing rather than crashing the
// caller.
func (rl *RateLimiter) drains(result any, err error) (drain bool) {
	defer func() {
		if recover() != nil {
			drain = false
		}
	}()
	return rl.drain(result, err)
}

// ChangeLimitForPeriod sets the permissions per cycle to n from the next cycle on, as
// Resilience4j's changeLimitForPeriod: the current cycle keeps the permissions it has, and the
// permissions already reserved in the next cycle count against n, so that cycle admits n in all,
// or only its waiters when they are more than n (the excess counts against the cycles after).
// When reservations reach beyond the next cycle, n applies from the last cycle holding them and
// the cycles before it keep their limit, because their waiters proceed in them whatever n is.
// Requests for more than n permissions are refused at once as invalid. n must be at least 1 and
// keep n × (TimeoutDuration/LimitRefreshPeriod + 2) within MaxReservablePermissions; otherwise
// the error names LimitForPeriod and nothing changes.
func (rl *RateLimiter) ChangeLimitForPeriod(n int) error {
	if rl.unset() {
		return ErrNilRateLimiter
	}
	if err := checkLimit(n); err != nil {
		return err
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if err := checkReservable(int64(n), time.Duration(rl.period), rl.timeout.Load()); err != nil {
		return err
	}
	if int64(n) != rl.epoch.Load().limit {
		rl.installLocked(relimited(int64(n)))
	}
	return nil
}

// ChangeTimeoutDuration sets TimeoutDuration for the requests that start from now on; d may be
// zero or NoWait, both meaning no wait. Requests already waiting keep their wait. The error
// names TimeoutDuration when d is negative (other than NoWait) or would exceed
// MaxReservablePermissions, and nothing changes. Resilience4j's changeTimeoutDuration.
func (rl *RateLimiter) ChangeTimeoutDuration(d time.Duration) error {
	if rl.unset() {
		return ErrNilRateLimiter
	}
	if err := checkTimeout(d); err != nil {
		return err
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if err := checkReservable(rl.epoch.Load().limit, time.Duration(rl.period), timeoutNanos(d)); err != nil {
		return err
	}
	rl.timeout.Store(timeoutNanos(d))
	return nil
}

// unset reports whether rl is nil or a zero RateLimiter that New never built: every exported
// method answers both as it answers nil.
func (rl *RateLimiter) unset() bool { return rl == nil || rl.epoch.Load() == nil }
