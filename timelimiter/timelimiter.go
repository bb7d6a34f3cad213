package timelimiter

import (
	"fmt"
	"log/slog"
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
type TimeLimiter struct {
	name          string
	timeout       time.Duration
	cancelRunning bool
	logger        *slog.Logger

	abandoned atomic.Int64
	succeeded atomic.Int64
	failed    atomic.Int64
	timedOut  atomic.Int64

	events event.Publisher[Event]
}

// New returns a time limiter named name (the name appears in errors, events and metrics) with
// the configuration cfg, its zero fields replaced by the defaults. It returns an error naming
// the field and its allowed range when a field is out of range.
func New(name string, cfg Config) (*TimeLimiter, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	tl := &TimeLimiter{name: name, timeout: cfg.TimeoutDuration, cancelRunning: !cfg.DisableCancelRunningFuture, logger: cfg.Logger}
	logging.Subscribe(&tl.events, cfg.Logger, logging.TimeLimiter, name, logRecord)
	return tl, nil
}

// Name returns the name given to New, or "" for a nil tl.
func (tl *TimeLimiter) Name() string {
	if tl == nil {
		return ""
	}
	return tl.name
}

// Config returns the configuration in force, defaults filled in; the zero Config for a nil tl.
func (tl *TimeLimiter) Config() Config {
	if tl == nil {
		return Config{}
	}
	return Config{TimeoutDuration: tl.timeout, DisableCancelRunningFuture: !tl.cancelRunning, Logger: tl.logger}
}
