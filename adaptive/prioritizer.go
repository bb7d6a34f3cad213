package adaptive

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee/internal/event"
	"github.com/levee-go/levee/internal/safe"
	"github.com/levee-go/levee/priority"
)

// PrioritizerConfig configures a Prioritizer. The zero value of each field means its default.
type PrioritizerConfig struct {
	// QueueStart is the queue, in multiples of the limit, at which shedding starts: with the
	// callers queued at the limiters (summed over the registered ones, or the call's own,
	// whichever is fuller) at QueueStart × limit, nothing is shed; at QueueFull × limit,
	// everything below Critical is; in between, the lowest fraction (queued − start) /
	// (full − start) of the levels recently seen. In (0, 1e6], or NoQueueStart for 0
	// (shedding from the first queued caller on), since the zero field means the default, 1.
	QueueStart float64
	// QueueFull is the queue, in multiples of the limit, at which every call below Critical
	// that would queue is shed, > QueueStart. Default 2. A limiter's MaxQueued should exceed
	// QueueFull × its limit, so that its own queue does not fill first.
	QueueFull float64
	// CalibrationInterval is how often the prioritizer renews the distribution of levels it
	// sheds from and the queue of its registered limiters, > 0. Default 1 s. Calibration
	// happens on a caller's goroutine: a prioritizer starts none.
	CalibrationInterval time.Duration
	// Logger, when set, receives the calls the prioritizer shed and those their limiter
	// refused as log/slog records at Debug: messages "prioritizer call shed" and
	// "prioritizer call rejected", attributes pattern "prioritizer", name, event (CALL_SHED,
	// CALL_REJECTED) and err, the error the caller received (a *ShedError names the call's
	// priority). Nil, the default, logs nothing and costs nothing.
	Logger *slog.Logger
}

// Prioritizer defaults; failsafe-go's prioritizer starts at 2 and sheds all at 3 times the
// limit, levee sheds sooner so that the calls it keeps wait less.
// NoQueueStart, as PrioritizerConfig.QueueStart, starts shedding at an empty queue: a
// QueueStart of 0, which the zero field cannot say (it means DefaultQueueStart). Config
// returns it as given.
const NoQueueStart float64 = -math.MaxFloat64

const (
	DefaultQueueStart          float64 = 1
	DefaultQueueFull           float64 = 2
	DefaultCalibrationInterval         = time.Second
)

// ErrShed is the sentinel a call shed by a Prioritizer matches with errors.Is; the error also
// matches ErrLimitExceeded, and is a levee rejection.
var ErrShed error = &rejection{"adaptive: call shed by priority"}

// ShedError is the error of a call a Prioritizer shed. Name is the prioritizer's name and
// Priority the call's. It matches ErrShed and ErrLimitExceeded. One value per priority is
// returned for every shed call: treat it as read-only.
type ShedError struct {
	Name     string
	Priority priority.Priority
}

// Error returns "adaptive: Prioritizer '<name>' shed a <priority> call".
func (e *ShedError) Error() string {
	return "adaptive: Prioritizer '" + e.Name + "' shed a " + e.Priority.String() + " call"
}

// Is reports whether target is ErrShed or ErrLimitExceeded.
func (e *ShedError) Is(target error) bool { return target == ErrShed || target == ErrLimitExceeded }

// LeveeRejection marks the error as a levee rejection.
func (e *ShedError) LeveeRejection() bool { return true }

// Prioritizer decides, for the calls of several Limiters, which to shed when the limiters
// fill: a call that finds a free permit is admitted whatever its priority; one that would
// queue is shed when its level (priority.LevelFromContext) is among the lowest of the levels
// recently seen, in the fraction the queueing calls for (see PrioritizerConfig.QueueStart).
// The threshold thus rises from the lowest level up as queueing grows, and falls as it
// drains. Critical calls are never shed by the prioritizer, only refused by a limiter whose
// own queue is full or whose wait ended: the lower priorities that would queue ahead of them
// are the ones shed, so their wait stays short. This is failsafe-go's prioritizer, with the
// limiters' queue as its signal and calibration done by the callers instead of a goroutine.
//
// Use it with Acquire, ExecutePrioritized or PrioritizedDecorator, giving the limiter each
// time; Register the limiters it serves so that calibration sums their queues. The limiters
// need MaxQueued > 0: without a queue there is nothing to measure and nothing to shed, the
// limiter refuses whoever finds it full. It is safe for concurrent use; create it with
// NewPrioritizer.
//
// The zero value, like nil, is not usable: every method and function
// answers it exactly as it answers a nil pointer (ErrNilLimiter, a zero answer or a no-op),
// never with a panic.
type Prioritizer struct {
	name    string
	cfg     PrioritizerConfig
	start   time.Time
	shedErr [priority.Count]*ShedError

	next     atomic.Int64 // nanoseconds since start of the next calibration
	arrivals [int(priority.MaxLevel) + 1]atomic.Uint32
	cdf      atomic.Pointer[[int(priority.MaxLevel) + 1]float32] // nil before the first calibration
	shared   atomic.Uint64                                       // math.Float64bits of the registered limiters' rate

	counts [priority.Count]priorityCounts
	events event.Publisher[PrioritizerEvent]

	mu       sync.Mutex // guards limiters and calibration
	limiters []*Limiter
}

type priorityCounts struct {
	admitted, shed, rejected atomic.Uint64
	queued                   atomic.Int64
}

// NewPrioritizer returns a prioritizer named name, or an error naming the field and its
// allowed range, for example
//
//	adaptive: QueueFull must be in (QueueStart (1), 1e6], got 0.5
func NewPrioritizer(name string, cfg PrioritizerConfig) (*Prioritizer, error) {
	if cfg.QueueStart == 0 {
		cfg.QueueStart = DefaultQueueStart
	}
	if cfg.QueueFull == 0 {
		cfg.QueueFull = DefaultQueueFull
	}
	if cfg.CalibrationInterval == 0 {
		cfg.CalibrationInterval = DefaultCalibrationInterval
	}
	qs := queueStart(cfg)
	switch {
	case !(qs >= 0) || qs > 1e6:
		return nil, fmt.Errorf("adaptive: QueueStart must be in (0, 1e6] or NoQueueStart, got %v", cfg.QueueStart)
	case !(cfg.QueueFull > qs) || cfg.QueueFull > 1e6:
		return nil, fmt.Errorf("adaptive: QueueFull must be in (QueueStart (%v), 1e6], got %v", qs, cfg.QueueFull)
	case cfg.CalibrationInterval < 0:
		return nil, fmt.Errorf("adaptive: CalibrationInterval must be > 0, got %v", cfg.CalibrationInterval)
	}
	p := &Prioritizer{name: name, cfg: cfg, start: time.Now()}
	for i := range p.shedErr {
		p.shedErr[i] = &ShedError{Name: name, Priority: priority.Priority(i)}
	}
	p.next.Store(int64(cfg.CalibrationInterval))
	p.subscribeLogger(cfg.Logger)
	return p, nil
}

// Name returns the name given to NewPrioritizer, or "" for a nil p.
func (p *Prioritizer) Name() string {
	if p.unset() {
		return ""
	}
	return p.name
}

// Config returns the configuration with its defaults filled in.
func (p *Prioritizer) Config() PrioritizerConfig {
	if p.unset() {
		return PrioritizerConfig{}
	}
	return p.cfg
}

// Register adds limiters to those whose queues the calibration sums. A limiter registered
// twice counts once; nil ones are skipped.
func (p *Prioritizer) Register(limiters ...*Limiter) {
	if p.unset() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range limiters {
		if l != nil && !containsLimiter(p.limiters, l) {
			p.limiters = append(p.limiters, l)
		}
	}
}

func containsLimiter(ls []*Limiter, l *Limiter) bool {
	for _, x := range ls {
		if x == l {
			return true
		}
	}
	return false
}

// state returns l's calls in flight, limit and queued callers.
func (l *Limiter) state() (inFlight, limit, queued int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inFlight, l.limit, l.queue.Len()
}

// tryAcquire takes a permit when one is free at once, as Acquire's fast path, and otherwise
// returns the limit and the queued callers, all under one lock.
func (l *Limiter) tryAcquire() (p Permit, ok bool, limit, queued int) {
	l.mu.Lock()
	if l.admitLocked() {
		p = Permit{l: l, started: time.Now(), round: l.round, inFlight: l.inFlight}
		l.mu.Unlock()
		l.publish(EventCallPermitted, -1)
		return p, true, 0, 0
	}
	limit, queued = l.limit, l.queue.Len()
	l.mu.Unlock()
	return Permit{}, false, limit, queued
}

// rate maps a queue of queued callers over limit to the fraction of levels to shed.
func (p *Prioritizer) rate(queued, limit int) float64 {
	if limit <= 0 {
		return 0
	}
	q := float64(queued) / float64(limit)
	qs := queueStart(p.cfg)
	return min(1, max(0, (q-qs)/(p.cfg.QueueFull-qs)))
}

// queueStart returns cfg's QueueStart with NoQueueStart read as 0.
func queueStart(cfg PrioritizerConfig) float64 {
	if cfg.QueueStart == NoQueueStart {
		return 0
	}
	return cfg.QueueStart
}

// calibrate renews the distribution of levels and the registered limiters' rate, once per
// CalibrationInterval, on whichever caller finds the interval over first.
func (p *Prioritizer) calibrate(now int64) {
	next := p.next.Load()
	if now < next || !p.next.CompareAndSwap(next, now+int64(p.cfg.CalibrationInterval)) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var cdf [int(priority.MaxLevel) + 1]float32
	total := uint64(0)
	for i := range p.arrivals {
		total += uint64(p.arrivals[i].Swap(0))
		cdf[i] = float32(total)
	}
	if total > 0 {
		for i := range cdf {
			cdf[i] /= float32(total)
		}
		p.cdf.Store(&cdf)
	}
	queued, limit := 0, 0
	for _, l := range p.limiters {
		_, lim, q := l.state()
		queued, limit = queued+q, limit+lim
	}
	p.shared.Store(uint64(p.rate(queued, limit) * 1e9))
}

// shed reports whether a call at level is among the lowest fraction r of recent levels.
func (p *Prioritizer) shed(level priority.Level, r float64) bool {
	if r <= 0 || level >= priority.Critical.MinLevel() {
		return false
	}
	if cdf := p.cdf.Load(); cdf != nil {
		return float64(cdf[level]) <= r
	}
	return float64(level+1)/float64(priority.Critical.MinLevel()) <= r
}

// Acquire takes a permit of l for a call at the level ctx carries (priority.LevelFromContext:
// Normal when none): at once when l has a free permit; else, unless the call is shed (then
// p's *ShedError for its priority), by queueing at l as l.Acquire does, with l's errors. A
// nil p is l.Acquire(ctx); a nil l returns ErrNilLimiter. It allocates nothing unless it
// queues.
func (p *Prioritizer) Acquire(ctx context.Context, l *Limiter) (Permit, error) {
	if l.unset() {
		return Permit{}, ErrNilLimiter
	}
	if p.unset() {
		return l.Acquire(ctx)
	}
	ctx = safe.Ctx(ctx)
	level := priority.LevelFromContext(ctx)
	c := &p.counts[level.Priority()]
	p.arrivals[level].Add(1)
	if ctx.Err() == nil {
		// The clock is read once: the permit's start times the calibration too.
		permit, ok, limit, queued := l.tryAcquire()
		if ok {
			p.calibrate(int64(permit.started.Sub(p.start)))
			c.admitted.Add(1)
			return permit, nil
		}
		p.calibrate(int64(time.Since(p.start)))
		if r := max(float64(p.shared.Load())/1e9, p.rate(queued, limit)); p.shed(level, r) {
			c.shed.Add(1)
			err := p.shedErr[level.Priority()]
			p.publish(PrioritizerCallShed, l, level, err)
			return Permit{}, err
		}
	}
	c.queued.Add(1)
	defer c.queued.Add(-1)
	permit, err := l.Acquire(ctx)
	if err != nil {
		c.rejected.Add(1)
		p.publish(PrioritizerCallRejected, l, level, err)
		return permit, err
	}
	c.admitted.Add(1)
	return permit, nil
}

// ExecutePrioritized runs call under a permit p.Acquire(ctx, l) took, as Execute does. A nil
// call returns levee.ErrNilCall without taking a permit.
func ExecutePrioritized[T any](ctx context.Context, p *Prioritizer, l *Limiter, call func(context.Context) (T, error)) (T, error) {
	var zero T
	if l.unset() {
		return zero, ErrNilLimiter
	}
	if call == nil {
		return zero, safe.ErrNilCall
	}
	ctx = safe.Ctx(ctx)
	permit, err := p.Acquire(ctx, l)
	if err != nil {
		return zero, err
	}
	return runPermit(ctx, permit, call)
}

// PriorityMetrics counts the calls of one priority through a prioritizer.
type PriorityMetrics struct {
	// Priority is the priority counted.
	Priority priority.Priority
	// Admitted, Shed and Rejected count, since NewPrioritizer, the calls that got a permit,
	// those the prioritizer shed, and those the limiter refused (its queue full, the wait or
	// the context ended).
	Admitted, Shed, Rejected uint64
	// Queued is the number of its calls waiting at a limiter now.
	Queued int64
}

// PrioritizerMetrics is a snapshot of a prioritizer.
type PrioritizerMetrics struct {
	// RejectionRate is the fraction of recent levels the registered limiters' queue calls to
	// shed, as of the last calibration; the call's own limiter may call for more.
	RejectionRate float64
	// Priorities are the counts of each priority, Sheddable first.
	Priorities [priority.Count]PriorityMetrics
}

// Metrics returns a snapshot of p, or the zero value for a nil p. It allocates nothing.
func (p *Prioritizer) Metrics() PrioritizerMetrics {
	var m PrioritizerMetrics
	if p.unset() {
		return m
	}
	m.RejectionRate = float64(p.shared.Load()) / 1e9
	for i := range p.counts {
		c := &p.counts[i]
		m.Priorities[i] = PriorityMetrics{
			Priority: priority.Priority(i), Admitted: c.admitted.Load(), Shed: c.shed.Load(),
			Rejected: c.rejected.Load(), Queued: c.queued.Load(),
		}
	}
	return m
}

// RejectionThreshold returns the rejection threshold at the rate of the last calibration
// (PrioritizerMetrics.RejectionRate): the lowest level at which a call that would queue is not
// shed, the levels below it being shed. It is 0 while nothing is shed, and never above
// priority.Critical.MinLevel(), since critical calls are never shed (a call's own limiter may
// call for a higher rate, and so shed more, than the calibrated one). 0 for a nil p.
func (p *Prioritizer) RejectionThreshold() priority.Level {
	if p.unset() {
		return 0
	}
	r := float64(p.shared.Load()) / 1e9
	var t priority.Level
	for t < priority.Critical.MinLevel() && p.shed(t, r) {
		t++
	}
	return t
}

// unset reports whether p is nil or a zero Prioritizer that New never built: every exported
// method answers both as it answers nil.
func (p *Prioritizer) unset() bool { return p == nil || p.shedErr[0] == nil }
