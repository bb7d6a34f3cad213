package ratelimiter

import (
	"fmt"
	"log/slog"
	"math"
	"time"
)

// Defaults of Config, as Resilience4j's RateLimiterConfig.
const (
	DefaultLimitForPeriod     = 50
	DefaultLimitRefreshPeriod = 500 * time.Nanosecond
	DefaultTimeoutDuration    = 5 * time.Second
)

// NoWait is the TimeoutDuration that makes a caller who finds no free permission in the current
// cycle be refused at once instead of reserving one of a later cycle. It exists because the
// zero value of Config.TimeoutDuration means the default of 5s. Its value is the smallest
// time.Duration (math.MinInt64 nanoseconds), which no typo, arithmetic slip or guess such as
// −1 reaches: NoWait is the only negative TimeoutDuration New and ChangeTimeoutDuration
// accept, and every other one (−1 included) is refused with an error naming the field. Always
// write the constant, never its value; Config returns it, so the result goes back to New.
const NoWait time.Duration = math.MinInt64

// MaxReservablePermissions bounds LimitForPeriod × (TimeoutDuration/LimitRefreshPeriod + 2): the
// most permissions that can ever be handed out ahead of the current cycle. It keeps the
// limiter's permission cursor far from overflow whatever the configuration; the default
// configuration uses 5×10⁸ of the 2⁴⁰ (about 1.1×10¹²).
const MaxReservablePermissions = 1 << 40

// Config configures a RateLimiter. The zero value of every field means its default;
// DefaultConfig returns them filled in.
type Config struct {
	// LimitForPeriod is the number of permissions of each cycle. Default 50; at least 1.
	LimitForPeriod int

	// LimitRefreshPeriod is the length of a cycle. Default 500ns; at least 1ns.
	LimitRefreshPeriod time.Duration

	// TimeoutDuration is the longest a caller may be made to wait for a reserved permission;
	// a caller whose wait would be longer is refused at once. Default 5s; NoWait for none.
	TimeoutDuration time.Duration

	// DrainPermissionsOnResult, when set, is asked after every call guarded by Execute or
	// reported through OnResult or OnError, with the call's result (err nil) or its error
	// (result nil); returning true drains the permissions left in the current cycle, as
	// DrainPermissions. It never sees a levee rejection (levee.IsRejection: an inner bulkhead
	// or breaker refused the call, which never reached the dependency). Default nil: never
	// drain. Resilience4j's drainPermissionsOnResult.
	DrainPermissionsOnResult func(result any, err error) bool

	// Logger, when set, receives the limiter's refusals and drains as log/slog records at
	// Debug (see the package comment's Logging section): New subscribes one more event
	// consumer that logs them. Nil, the default, logs nothing and subscribes nothing.
	Logger *slog.Logger
}

// DefaultConfig returns the defaults: 50 permissions per 500ns cycle, a 5s timeout
// and no draining.
func DefaultConfig() Config {
	return Config{
		LimitForPeriod:     DefaultLimitForPeriod,
		LimitRefreshPeriod: DefaultLimitRefreshPeriod,
		TimeoutDuration:    DefaultTimeoutDuration,
	}
}

// withDefaults fills the zero fields and validates the result.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.LimitForPeriod == 0 {
		cfg.LimitForPeriod = DefaultLimitForPeriod
	}
	if cfg.LimitRefreshPeriod == 0 {
		cfg.LimitRefreshPeriod = DefaultLimitRefreshPeriod
	}
	if cfg.TimeoutDuration == 0 {
		cfg.TimeoutDuration = DefaultTimeoutDuration
	}
	if err := checkLimit(cfg.LimitForPeriod); err != nil {
		return cfg, err
	}
	if cfg.LimitRefreshPeriod < 1 {
		return cfg, fmt.Errorf("ratelimiter: LimitRefreshPeriod must be >= 1ns, got %v",
			cfg.LimitRefreshPeriod)
	}
	if err := checkTimeout(cfg.TimeoutDuration); err != nil {
		return cfg, err
	}
	err := checkReservable(int64(cfg.LimitForPeriod), cfg.LimitRefreshPeriod, timeoutNanos(cfg.TimeoutDuration))
	return cfg, err
}

func checkLimit(n int) error {
	if n < 1 {
		return fmt.Errorf("ratelimiter: LimitForPeriod must be >= 1, got %d", n)
	}
	return nil
}

func checkTimeout(d time.Duration) error {
	if d < 0 && d != NoWait {
		return fmt.Errorf("ratelimiter: TimeoutDuration must be >= 0 or NoWait, got %v", d)
	}
	return nil
}

// checkReservable enforces MaxReservablePermissions without overflowing.
func checkReservable(limit int64, period time.Duration, timeout int64) error {
	q := timeout / int64(period)
	if q < MaxReservablePermissions && limit <= MaxReservablePermissions/(q+2) {
		return nil
	}
	return fmt.Errorf("ratelimiter: LimitForPeriod × (TimeoutDuration/LimitRefreshPeriod + 2) "+
		"must be at most %d (MaxReservablePermissions), got %d × %d", int64(MaxReservablePermissions),
		limit, uint64(q)+2)
}

// timeoutNanos maps NoWait to a timeout of zero.
func timeoutNanos(d time.Duration) int64 {
	if d == NoWait {
		return 0
	}
	return int64(d)
}
