package bulkhead

import (
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee/internal/event"
	"github.com/levee-go/levee/internal/logging"
	"github.com/levee-go/levee/internal/waiters"
)

// Default values, as Resilience4j's BulkheadConfig.
const (
	// DefaultMaxConcurrentCalls is the number of permits when Config.MaxConcurrentCalls is 0.
	DefaultMaxConcurrentCalls = 25
	// DefaultMaxWaitDuration is how long a caller waits for a permit by default: not at all.
	DefaultMaxWaitDuration time.Duration = 0
)

// NoConcurrentCalls is the MaxConcurrentCalls of a bulkhead that admits no call at all: every
// call is refused (after MaxWaitDuration, if set) and Metrics reports 0 available of 0 allowed,
// as Resilience4j's maxConcurrentCalls = 0. It exists because the zero value of the field means
// the default of 25. Its value is the smallest int (math.MinInt), which no typo or guess
// reaches: −1, which Go code often writes for "unlimited", is refused by New and ChangeConfig
// with an error naming the field instead of silently refusing every call. Always write the
// constant, never its value; Config returns it for a bulkhead of no permits, so the result goes
// back to New.
const NoConcurrentCalls = math.MinInt

// MaxConcurrentCallsLimit is the largest value MaxConcurrentCalls may take. The limit comes
// from the 32-bit halves of the word that holds the maximum and the calls in flight.
const MaxConcurrentCallsLimit = math.MaxInt32

// Config configures a Bulkhead. The zero value of each field means its default.
type Config struct {
	// MaxConcurrentCalls is the number of calls that may run at the same time, in
	// [1, MaxConcurrentCallsLimit], or NoConcurrentCalls to refuse every call. 0 means the
	// default, 25. As Resilience4j's maxConcurrentCalls.
	MaxConcurrentCalls int

	// MaxWaitDuration is how long a caller waits for a permit when all are taken, at least 0.
	// 0, the default, refuses such a caller at once. As Resilience4j's maxWaitDuration, at
	// nanosecond resolution. The caller's context can end the wait sooner.
	MaxWaitDuration time.Duration

	// DisableFairCallHandling lets a newcomer take a permit that has just been released even
	// though callers are queued for one (they are still served among themselves in arrival
	// order). By default, as Resilience4j's fairCallHandlingStrategyEnabled = true, waiters are
	// served first come, first served and a newcomer never barges ahead of a queued waiter.
	DisableFairCallHandling bool

	// Logger, when set, receives the bulkhead's rejections as log/slog records at Debug (see
	// the package comment's Logging section): New subscribes one more event consumer that
	// logs them. Nil, the default, logs nothing and subscribes nothing.
	Logger *slog.Logger
}

// DefaultConfig returns the configuration with every default filled in: 25 concurrent calls,
// no waiting, fair call handling.
func DefaultConfig() Config {
	return Config{MaxConcurrentCalls: DefaultMaxConcurrentCalls, MaxWaitDuration: DefaultMaxWaitDuration}
}

// withDefaults fills the zero-valued fields with their defaults.
func (c Config) withDefaults() Config {
	if c.MaxConcurrentCalls == 0 {
		c.MaxConcurrentCalls = DefaultMaxConcurrentCalls
	}
	return c
}

func (c Config) validate() error {
	if n := c.MaxConcurrentCalls; (n < 1 || n > MaxConcurrentCallsLimit) && n != NoConcurrentCalls {
		return fmt.Errorf("bulkhead: MaxConcurrentCalls must be in [1, %d] or NoConcurrentCalls (which refuses every call; a bulkhead has no unlimited size), got %d",
			MaxConcurrentCallsLimit, n)
	}
	if c.MaxWaitDuration < 0 {
		return fmt.Errorf("bulkhead: MaxWaitDuration must be >= 0, got %v", c.MaxWaitDuration)
	}
	return nil
}

// permits returns the number of permits MaxConcurrentCalls stands for.
func (c Config) permits() uint64 { return uint64(max(c.MaxConcurrentCalls, 0)) }

// Bulkhead is a semaphore that bounds the number of concurrent calls to one dependency, as
// Resilience4j's SemaphoreBulkhead. It is safe for concurrent use and is shared by calls of any
// result type. Build one with New. The zero value, like nil, is not usable: every method and
// function answers it exactly as it answers a nil pointer (ErrNilBulkhead, a zero answer or a
// no-op), never with a panic.
type Bulkhead struct {
	// Every acquire and release reads the fields up to events and waiting, and swaps state.
	// state has a cache line of its own, so that a swap on one core does not evict the fields
	// the other cores only read.
	name    string
	maxWait atomic.Int64       // nanoseconds; changed under mu by ChangeConfig
	fair    atomic.Bool        // changed under mu by ChangeConfig
	fullErr *BulkheadFullError // returned for every rejection: rejecting allocates nothing
	events  event.Publisher[Event]

	_ [cacheLine]byte
	// state packs the maximum (high 32 bits) and the calls in flight (low 32 bits) into one
	// word, so that "in flight < max" is checked and a permit taken by one compare-and-swap
	// even while ChangeConfig runs.
	state atomic.Uint64
	_     [cacheLine - 8]byte

	// waiting counts the callers that have announced they wait (under mu) and not yet left.
	// The lock-free paths read it: a releaser hands its permit to the queue only when it is
	// non-zero, and in fair mode a newcomer takes the lock-free path only when it is zero.
	// Releasers decrement state before they read waiting, and waiters increment waiting before
	// they look at state, so one of the two always sees the other (sequentially consistent
	// atomics): no permit is left free while somebody waits.
	waiting atomic.Int64

	mu    sync.Mutex // guards queue and the logger; never held across a user's call or an event consumer
	queue waiters.Queue[struct{}]

	logger *slog.Logger // Config.Logger
	unlog  func()       // removes the logger's event consumer
}

// cacheLine is the cache line size of common 64-bit processors.
const cacheLine = 64

// New returns a bulkhead named name (the name appears in errors, events and metrics) with the
// configuration cfg, its zero fields replaced by the defaults. It returns an error naming the
// field and its allowed range when a field is out of range.
func New(name string, cfg Config) (*Bulkhead, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	b := &Bulkhead{name: name, fullErr: &BulkheadFullError{Name: name}}
	b.maxWait.Store(int64(cfg.MaxWaitDuration))
	b.fair.Store(!cfg.DisableFairCallHandling)
	b.state.Store(pack(cfg.permits(), 0))
	b.setLoggerLocked(cfg.Logger) // b is not shared yet
	return b, nil
}

// Name returns the name given to New, or "" for a nil b.
func (b *Bulkhead) Name() string {
	if b.unset() {
		return ""
	}
	return b.name
}

// Config returns the configuration in force, defaults filled in and the last ChangeConfig
// applied; a bulkhead of no permits reports NoConcurrentCalls, so that the result can be given
// to New or ChangeConfig again. A nil b returns the zero Config.
func (b *Bulkhead) Config() Config {
	if b.unset() {
		return Config{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	max, _ := unpack(b.state.Load())
	n := int(max)
	if n == 0 {
		n = NoConcurrentCalls
	}
	return Config{
		MaxConcurrentCalls:      n,
		MaxWaitDuration:         time.Duration(b.maxWait.Load()),
		DisableFairCallHandling: !b.fair.Load(),
		Logger:                  b.logger,
	}
}

// setLoggerLocked subscribes the consumer of logger (none for nil) in place of the current one,
// unless logger is already the one in use.
func (b *Bulkhead) setLoggerLocked(logger *slog.Logger) {
	if b.unlog != nil && logger == b.logger {
		return
	}
	if b.unlog != nil {
		b.unlog()
	}
	b.logger = logger
	b.unlog = logging.Subscribe(&b.events, logger, logging.Bulkhead, b.name, b.logRecord)
}

func pack(max, inFlight uint64) uint64 { return max<<32 | inFlight }

func unpack(s uint64) (max, inFlight uint64) { return s >> 32, s & math.MaxUint32 }

// unset reports whether b is nil or was not made by New (the zero value): both are answered
// alike, never with a panic.
func (b *Bulkhead) unset() bool { return b == nil || b.fullErr == nil }
