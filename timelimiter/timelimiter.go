package timelimiter

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee/internal/event"
	"github.com/levee-go/levee/internal/logging"
)

// DefaultTimeoutDuration is the timeout when Config.TimeoutDuration is 0.
const DefaultTimeoutDuration = time.Second

// Config configures a TimeLimiter. The zero value of each field means its default, the value
// DefaultConfig holds.
type Config struct {
	// TimeoutDuration is how long the caller waits for each call, greater than 0. 0 means the
	// default, 1s. As Resilience4j's timeoutDuration.
	TimeoutDuration time.Duration

	// DisableCancelRunningFuture keeps the attempt's context alive after the deadline: the
	// caller still gets the timeout at the deadline, but the call goes on undisturbed and its
	// context is cancelled only when it returns (or when the caller's own context ends). By
	// default the attempt's context is cancelled at the deadline. Setting it is Resilience4j's
	// cancelRunningFuture = false.
	DisableCancelRunningFuture bool

	// Logger, when set, receives the time limiter's timeouts as log/slog records at Debug
	// (see the package comment's Logging section): New subscribes one more event consumer
	// that logs them. Nil, the default, logs nothing and subscribes nothing.
	Logger *slog.Logger
}

// DefaultConfig returns the configuration with every default filled in: a 1s timeout that
// cancels the running call.
func DefaultConfig() Config { return Config{TimeoutDuration: DefaultTimeoutDuration} }

func (c Config) withDefaults() Config {
	if c.TimeoutDuration == 0 {
		c.TimeoutDuration = DefaultTimeoutDuration
	}
	return c
}

func (c Config) validate() error {
	if c.TimeoutDuration <= 0 {
		return fmt.Errorf("timelimiter: TimeoutDuration must be > 0, got %v", c.TimeoutDuration)
	}
	return nil
}

// TimeLimiter limits the time a caller waits for a call, as Resilience4j's TimeLimiter. It is
// safe for concurrent use and shared by calls of any result type; it keeps no state per call
// beyond its counters. Create it with New; the zero value is not usable.
//
// Build one with New. The zero value, like nil, is not usable: every method and function
// answers it exactly as it answers a nil pointer (ErrNilTimeLimiter, a zero answer or a no-op),
// never with a panic.
type TimeLimiter struct {
	name   string
	config atomic.Pointer[Config] // defaults filled in; never modified once stored

	abandoned atomic.Int64
	succeeded atomic.Int64
	failed    atomic.Int64
	timedOut  atomic.Int64

	events event.Publisher[Event]

	mu     sync.Mutex   // serialises ChangeConfig; guards logger and unlog
	logger *slog.Logger // Config.Logger in force
	unlog  func()       // removes the logger's event consumer
}

// New returns a time limiter named name (the name appears in errors, events and metrics) with
// the configuration cfg, its zero fields replaced by the defaults. It returns an error naming
// the field and its allowed range when a field is out of range.
func New(name string, cfg Config) (*TimeLimiter, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	tl := &TimeLimiter{name: name}
	tl.config.Store(&cfg)
	tl.setLoggerLocked(cfg.Logger) // tl is not shared yet
	return tl, nil
}

// ChangeConfig replaces tl's configuration, levee's addition for reloading a configuration at
// run time (Resilience4j's TimeLimiter has no changeConfig). Like New it fills zero fields with
// their defaults and refuses a field out of range with the same error, changing nothing. To
// change one field, start from tl.Config():
//
//	cfg := tl.Config()
//	cfg.TimeoutDuration = 2 * time.Second
//	err := tl.ChangeConfig(cfg)
//
// TimeoutDuration and DisableCancelRunningFuture apply to the calls that start after
// ChangeConfig returns; a call already under way keeps both as they were when it started (its
// deadline, whether its context is cancelled there, and the Timeout its *TimeoutError
// reports). Logger is replaced as Bulkhead.ChangeConfig replaces it: the same logger keeps its
// one consumer, another one takes its place, and nil stops the logging. A nil tl returns
// ErrNilTimeLimiter.
func (tl *TimeLimiter) ChangeConfig(cfg Config) error {
	if tl.unset() {
		return ErrNilTimeLimiter
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.config.Store(&cfg)
	tl.setLoggerLocked(cfg.Logger)
	return nil
}

// setLoggerLocked subscribes the consumer of logger (none for nil) in place of the current one,
// unless logger is already the one in use.
func (tl *TimeLimiter) setLoggerLocked(logger *slog.Logger) {
	if tl.unlog != nil && logger == tl.logger {
		return
	}
	if tl.unlog != nil {
		tl.unlog()
	}
	tl.logger = logger
	tl.unlog = logging.Subscribe(&tl.events, logger, logging.TimeLimiter, tl.name, logRecord)
}

// Name returns the name given to New, or "" for a nil tl.
func (tl *TimeLimiter) Name() string {
	if tl.unset() {
		return ""
	}
	return tl.name
}

// Config returns the configuration in force (New's, or the last ChangeConfig's), defaults
// filled in; the zero Config for a nil tl.
func (tl *TimeLimiter) Config() Config {
	if tl.unset() {
		return Config{}
	}
	return *tl.config.Load()
}

// unset reports whether tl is nil or a zero TimeLimiter that New never built: every exported
// method answers both as it answers nil.
func (tl *TimeLimiter) unset() bool { return tl == nil || tl.config.Load() == nil }
