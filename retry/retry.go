package retry

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee/internal/errmatch"
	"github.com/levee-go/levee/internal/event"
	"github.com/levee-go/levee/internal/reject"
)

// Defaults of Config, as Resilience4j's RetryConfig.
const (
	DefaultMaxAttempts  = 3
	DefaultWaitDuration = 500 * time.Millisecond
)

// NoWait is the WaitDuration for retrying at once (Resilience4j's waitDuration 0). It exists
// because the zero WaitDuration means the default of 500ms; NoWait (−1ns) is the only negative
// WaitDuration New accepts.
const NoWait time.Duration = -1

// Config configures a Retry. The zero value of every field means Resilience4j's default, so
// Config{} behaves as Resilience4j's RetryConfig.ofDefaults() (plus levee's rule for rejections).
type Config struct {
	// MaxAttempts is the most attempts one call makes, the first one included: 3 means at most
	// 2 retries. Must be >= 1; 0 means DefaultMaxAttempts (3).
	MaxAttempts int

	// WaitDuration is the constant wait before each retry when neither interval function is set.
	// 0 means DefaultWaitDuration (500ms); use NoWait to retry at once. Other negative values are
	// refused. It is used to the nanosecond (Resilience4j truncates it to milliseconds). An
	// interval function, when set, takes its place.
	WaitDuration time.Duration

	// IntervalFunction gives the wait before each retry from the number of failed attempts so far
	// (1 before the first retry). Nil means the constant WaitDuration. See FixedInterval,
	// ExponentialBackoff, RandomizedInterval and ExponentialRandomBackoff.
	IntervalFunction IntervalFunction

	// IntervalBiFunction is IntervalFunction that also sees the outcome that caused the retry:
	// the error, or the result that matched RetryOnResultPredicate. Setting both it and
	// IntervalFunction is refused by New.
	IntervalBiFunction IntervalBiFunction

	// RetryErrors lists the errors to retry: sentinels matched with errors.Is, and types made by
	// levee.ErrorType[E]() matched with errors.As. Combined with RetryOnErrorPredicate by OR;
	// when both are empty every error is retried (levee rejections aside, see the package doc).
	// Nil entries are refused.
	RetryErrors []error

	// RetryOnErrorPredicate reports whether an error should be retried (OR-ed with RetryErrors).
	RetryOnErrorPredicate func(error) bool

	// IgnoreErrors lists errors never to retry, in RetryErrors' format. It wins over RetryErrors
	// and RetryOnErrorPredicate. Nil entries are refused.
	IgnoreErrors []error

	// RetryOnResultPredicate reports whether a value returned without error should be retried.
	// Nil means results are never retried. Setting it makes Execute box each result into an any.
	RetryOnResultPredicate func(result any) bool

	// ConsumeResultBeforeRetryAttempt, when set, is called with the number of failed attempts so
	// far and the result before waiting for a retry caused by RetryOnResultPredicate, as
	// Resilience4j's consumeResultBeforeRetryAttempt (e.g. to close a response body).
	ConsumeResultBeforeRetryAttempt func(attempt int, result any)

	// FailAfterMaxAttempts makes a call whose attempts ran out on results (RetryOnResultPredicate
	// still matching; also when a negative interval stopped retrying on a result) fail with a
	// *MaxRetriesExceededError carrying the last result, instead of returning that result.
	FailAfterMaxAttempts bool
}

// DefaultConfig returns the config with every default filled in: MaxAttempts 3 and
// WaitDuration 500ms, retrying every error but levee rejections.
func DefaultConfig() Config {
	return Config{MaxAttempts: DefaultMaxAttempts, WaitDuration: DefaultWaitDuration}
}

// Retry repeats failed calls according to its Config. It is safe for concurrent use: each call
// keeps its attempt count in its own Context, and Retry itself holds only the immutable config,
// atomic counters and the event subscribers.
type Retry struct {
	name   string
	config Config // defaults filled in, lists copied

	maxAttempts  int
	waitDuration time.Duration // resolved: NoWait becomes 0
	retryErrors  errmatch.List
	ignoreErrors errmatch.List
	retryAll     bool // neither RetryErrors nor RetryOnErrorPredicate is set

	successWithout atomic.Int64
	successWith    atomic.Int64
	failedWithout  atomic.Int64
	failedWith     atomic.Int64
	totalCalls     atomic.Int64

	events event.Publisher[Event]
}

// New validates cfg and returns a Retry named name. Each invalid field is refused with an
// error naming it and its allowed range, e.g. "retry: MaxAttempts must be >= 1, got -1".
func New(name string, cfg Config) (*Retry, error) {
	if name == "" {
		return nil, errors.New("retry: name must not be empty")
	}
	switch {
	case cfg.MaxAttempts == 0:
		cfg.MaxAttempts = DefaultMaxAttempts
	case cfg.MaxAttempts < 0:
		return nil, fmt.Errorf("retry: MaxAttempts must be >= 1, got %d", cfg.MaxAttempts)
	}
	wait := cfg.WaitDuration
	switch {
	case wait == 0:
		cfg.WaitDuration = DefaultWaitDuration
		wait = DefaultWaitDuration
	case wait == NoWait:
		wait = 0
	case wait < 0:
		return nil, fmt.Errorf("retry: WaitDuration must be >= 0 (or NoWait for no wait), got %v", cfg.WaitDuration)
	}
	if cfg.IntervalFunction != nil && cfg.IntervalBiFunction != nil {
		return nil, errors.New("retry: IntervalFunction and IntervalBiFunction are both set; set at most one")
	}
	retryErrors, err := errmatch.Compile("retry: RetryErrors", cfg.RetryErrors)
	if err != nil {
		return nil, err
	}
	ignoreErrors, err := errmatch.Compile("retry: IgnoreErrors", cfg.IgnoreErrors)
	if err != nil {
		return nil, err
	}
	cfg.RetryErrors = slices.Clone(cfg.RetryErrors)
	cfg.IgnoreErrors = slices.Clone(cfg.IgnoreErrors)
	return &Retry{
		name:         name,
		config:       cfg,
		maxAttempts:  cfg.MaxAttempts,
		waitDuration: wait,
		retryErrors:  retryErrors,
		ignoreErrors: ignoreErrors,
		retryAll:     retryErrors.Empty() && cfg.RetryOnErrorPredicate == nil,
	}, nil
}

// Name returns the name given to New.
func (r *Retry) Name() string {
	if r == nil {
		return ""
	}
	return r.name
}

// Config returns the config in force, with defaults filled in (MaxAttempts and WaitDuration are
// never zero). The slices are copies.
func (r *Retry) Config() Config {
	if r == nil {
		return Config{}
	}
	c := r.config
	c.RetryErrors = slices.Clone(c.RetryErrors)
	c.IgnoreErrors = slices.Clone(c.IgnoreErrors)
	return c
}

// shouldRetry is Resilience4j's effective exception predicate, (RetryErrors OR
// RetryOnErrorPredicate, default true) AND NOT IgnoreErrors, with levee's rule that a levee
// rejection is retried only when matched explicitly. The predicate runs in user code, so a
// panic in it is left to the caller's guard.
func (r *Retry) shouldRetry(err error) bool {
	if r.ignoreErrors.Match(err) {
		return false
	}
	if r.retryAll {
		return !reject.Is(err)
	}
	if r.retryErrors.Match(err) {
		return true
	}
	return r.config.RetryOnErrorPredicate != nil && r.config.RetryOnErrorPredicate(err)
}

// interval returns the wait before the retry that follows attempt failed attempts, given the
// outcome that failed (err, or result when err is nil).
func (r *Retry) interval(attempt int, err error, result any) time.Duration {
	switch {
	case r.config.IntervalBiFunction != nil:
		return r.config.IntervalBiFunction(attempt, err, result)
	case r.config.IntervalFunction != nil:
		return r.config.IntervalFunction(attempt)
	default:
		return r.waitDuration
	}
}
