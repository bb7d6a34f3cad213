package retry

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee/internal/errmatch"
	"github.com/levee-go/levee/internal/event"
	"github.com/levee-go/levee/internal/logging"
	"github.com/levee-go/levee/internal/reject"
)

// Defaults of Config, as Resilience4j's RetryConfig.
const (
	DefaultMaxAttempts  = 3
	DefaultWaitDuration = 500 * time.Millisecond
)

// NoWait is the WaitDuration for retrying at once (Resilience4j's waitDuration 0). It exists
// because the zero WaitDuration means the default of 500ms. Its value is the smallest
// time.Duration (math.MinInt64 nanoseconds), which no typo, arithmetic slip or guess such as
// −1 reaches: NoWait is the only negative WaitDuration New and ChangeConfig accept, and every
// other one (−1 included) is refused with an error naming the field. Always write the
// constant, never its value; Config returns it as given, so the result goes back to New.
const NoWait time.Duration = math.MinInt64

// Config configures a Retry. The zero value of every field means its default, so Config{}
// behaves as Resilience4j's RetryConfig.ofDefaults(), except that rejections by levee's own
// patterns are not retried (see RetryRejections).
type Config struct {
	// MaxAttempts is the most attempts one call makes, the first one included: 3 means at most
	// 2 retries. Must be >= 1; 0 means DefaultMaxAttempts (3).
	MaxAttempts int

	// WaitDuration is the constant wait before each retry. 0 means DefaultWaitDuration (500ms)
	// when no interval function is set; use NoWait to retry at once. Other negative values, −1
	// included, are refused, and so is a WaitDuration set together with IntervalFunction or
	// IntervalBiFunction. It is used to the nanosecond.
	WaitDuration time.Duration

	// IntervalFunction gives the wait before each retry from the number of failed attempts so far
	// (1 before the first retry). Nil means the constant WaitDuration. See FixedInterval,
	// ExponentialBackoff, RandomizedInterval and ExponentialRandomBackoff.
	IntervalFunction IntervalFunction

	// IntervalBiFunction is IntervalFunction that also sees the outcome that caused the retry:
	// the error, or the result that matched RetryOnResultPredicate. At most one of
	// WaitDuration, IntervalFunction and IntervalBiFunction may be set.
	IntervalBiFunction IntervalBiFunction

	// RetryErrors lists the errors to retry: sentinels matched with errors.Is, and types made by
	// levee.ErrorType[E]() matched with errors.As. Combined with RetryOnErrorPredicate by OR;
	// when both are empty every error is retried. Rejections by levee's own patterns never reach
	// it (see RetryRejections). Nil entries, and sentinels that are levee rejections, are refused.
	RetryErrors []error

	// RetryOnErrorPredicate reports whether an error should be retried (OR-ed with RetryErrors).
	// It never sees a levee rejection.
	RetryOnErrorPredicate func(error) bool

	// IgnoreErrors lists errors never to retry, in RetryErrors' format. It wins over RetryErrors
	// and RetryOnErrorPredicate. It never sees a levee rejection either. Nil entries, and
	// sentinels that are levee rejections, are refused.
	IgnoreErrors []error

	// RetryRejections lists the rejections by levee's own patterns (errors for which
	// levee.IsRejection is true: an open circuit breaker, a full bulkhead, a rate limiter's
	// refusal, a full worker pool) to retry, in RetryErrors' format. Such an error is classified
	// by this list alone: retried when it matches, returned at once otherwise — RetryErrors,
	// IgnoreErrors and RetryOnErrorPredicate never see it. Empty (the default) retries no
	// rejection. Resilience4j's behaviour, retrying a call refused by an inner breaker, is
	// RetryRejections: []error{circuitbreaker.ErrCallNotPermitted}, and
	// RetryRejections: levee.AllRejections() retries every rejection, as Resilience4j does by
	// default. Nil entries, and sentinels that
	// are not levee rejections, are refused.
	RetryRejections []error

	// RetryOnResultPredicate reports whether a value returned without error should be retried.
	// Nil means results are never retried. Setting it makes Execute box each result into an any.
	RetryOnResultPredicate func(result any) bool

	// ConsumeResultBeforeRetryAttempt, when set, is called with the number of failed attempts so
	// far and the result before waiting for a retry caused by RetryOnResultPredicate, as
	// Resilience4j's consumeResultBeforeRetryAttempt (e.g. to close a response body).
	ConsumeResultBeforeRetryAttempt func(attempt int, result any)

	// MaxDuration bounds the time one call spends on all its attempts and waits, measured from
	// its start (Execute's call, or NewContext for a Context driven by hand), as cenkalti/backoff's
	// MaxElapsedTime and failsafe-go's WithMaxDuration: a retry whose wait would end later than
	// start + MaxDuration is not made, and the call ends as when its attempts run out, with a
	// *MaxRetriesExceededError whose Reason is ErrMaxDurationExceeded (or, on a result, as
	// FailAfterMaxAttempts says). A wait ending exactly at start + MaxDuration is made. It does
	// not interrupt an attempt under way: bound attempts with a context or a TimeLimiter.
	// 0, the default, means no limit; negative values are refused.
	MaxDuration time.Duration

	// Budget, when set, bounds the retries of this Retry, and of every other Retry sharing it,
	// to a ratio of their calls (see Budget): a retry the budget refuses is not made, and the
	// call ends as when its attempts run out, with a *MaxRetriesExceededError whose Reason is
	// ErrBudgetExhausted (or, on a result, as FailAfterMaxAttempts says). Each call deposits
	// once; each retry withdraws one, after every other check, just before its wait. Nil, the
	// default, means no budget.
	Budget *Budget

	// FailAfterMaxAttempts makes a call whose attempts ran out on results (RetryOnResultPredicate
	// still matching; also when a negative interval, MaxDuration or Budget stopped retrying on a
	// result) fail with a
	// *MaxRetriesExceededError carrying the last result, instead of returning that result.
	FailAfterMaxAttempts bool

	// IgnoreCallerDeadline turns off the retry's respect of the caller's deadline. By default
	// (false) a retry is not made when its wait, plus MinAttemptDuration, would reach the
	// deadline of the call's context (Execute's ctx, or the one given to
	// Context.SetCallerContext): the call ends at once with a *MaxRetriesExceededError whose
	// Reason is ErrCallerDeadline, wrapping the last attempt's own error, instead of sleeping
	// into the deadline and ending with context.DeadlineExceeded. A deadline already passed
	// counts, even an instant before the context's Err is set. With IgnoreCallerDeadline the
	// wait runs, and the deadline interrupts it, as in Resilience4j, which knows no deadline.
	IgnoreCallerDeadline bool

	// MinAttemptDuration is the least time an attempt needs: a retry is made only when at
	// least this much of the caller's deadline is left once its wait is over. A pipeline
	// (levee.Pipeline, levee.DefaultPipeline) takes the TimeoutDuration of a TimeLimiter
	// inside the retry as an attempt's time by itself (see ExecuteExpecting; the larger of the
	// two counts); set this for the expected duration of an attempt without one. 0, the
	// default, only keeps the wait itself from reaching the deadline; negative values are
	// refused. Ignored with IgnoreCallerDeadline, and without a deadline.
	MinAttemptDuration time.Duration

	// NoRetryOfRetries makes retries happen at one layer only, the outermost: a call that
	// serves a request from a caller that retries it itself makes one attempt, any attempt of
	// that caller's, the first included (CallerRetries: leveehttp's Middleware and leveegrpc's
	// server interceptors put the attempt number that a retrying caller sends on every attempt
	// into the request's context, IncomingAttempt). Its retry ends with a
	// *MaxRetriesExceededError whose Reason is ErrServingRetry. Services that call each other
	// through retries then do not multiply the attempts: with three attempts at each of two
	// hops, the last service receives 3 attempts instead of 3 × 3, and a caller that does not
	// retry (it sends no number) still has its request retried here. Off by default. gRPC's
	// own retries send grpc-previous-rpc-attempts on retries only, so the first attempt of a
	// caller retrying with gRPC's service config is retried here.
	NoRetryOfRetries bool

	// Logger, when set, receives each retry, the calls that succeed after retries and the
	// calls whose retries are exhausted as log/slog records (see the package comment's Logging
	// section): New subscribes one more event consumer that logs them. Nil, the default, logs
	// nothing and subscribes nothing.
	Logger *slog.Logger
}

// DefaultConfig returns the config with every default filled in: MaxAttempts 3 and
// WaitDuration 500ms, retrying every error but levee rejections. To use an interval function,
// start from Config{} instead (or clear WaitDuration): New refuses both at once.
func DefaultConfig() Config {
	return Config{MaxAttempts: DefaultMaxAttempts, WaitDuration: DefaultWaitDuration}
}

// Retry repeats failed calls according to its Config. It is safe for concurrent use: each call
// keeps its attempt count in its own Context, and Retry itself holds only a pointer to the
// immutable compiled config (replaced whole by ChangeConfig), atomic counters and the event
// subscribers.
//
// Build one with New. The zero value, like nil, is not usable: every method and function
// answers it exactly as it answers a nil pointer (ErrNilRetry, a zero answer or a no-op),
// never with a panic.
type Retry struct {
	name     string
	settings atomic.Pointer[settings]

	successWithout atomic.Int64
	successWith    atomic.Int64
	failedWithout  atomic.Int64
	failedWith     atomic.Int64
	totalCalls     atomic.Int64

	events event.Publisher[Event]

	mu     sync.Mutex   // serialises ChangeConfig; guards logger and unlog
	logger *slog.Logger // Config.Logger in force
	unlog  func()       // removes the logger's event consumer
}

// settings is a Config compiled by New or ChangeConfig. It is never modified once published:
// a Context keeps the one in force when its call started, so a call sees one config wholly.
type settings struct {
	config Config // defaults filled in, lists copied

	maxAttempts     int
	waitDuration    time.Duration // resolved: NoWait becomes 0
	retryErrors     errmatch.List
	ignoreErrors    errmatch.List
	retryRejections errmatch.List
	retryAll        bool // neither RetryErrors nor RetryOnErrorPredicate is set
	maxDuration     time.Duration
	budget          *Budget
}

// New validates cfg and returns a Retry named name. Every field is checked; an invalid one is
// refused with an error naming it and its allowed range, e.g.
// "retry: MaxAttempts must be >= 1, got -1", and two fields of which one would silently
// override the other with "retry: set WaitDuration or IntervalFunction, not both".
func New(name string, cfg Config) (*Retry, error) {
	if name == "" {
		return nil, errors.New("retry: name must not be empty")
	}
	st, err := compile(cfg)
	if err != nil {
		return nil, err
	}
	r := &Retry{name: name}
	r.settings.Store(st)
	r.setLoggerLocked(cfg.Logger) // r is not shared yet
	return r, nil
}

// ChangeConfig replaces r's config, levee's addition for reloading a configuration at run time
// (Resilience4j's Retry has no changeConfig). cfg is validated exactly as by New, with the same
// errors, and an invalid cfg changes nothing. To change one field, start from r.Config():
//
//	cfg := rt.Config()
//	cfg.MaxAttempts = 5
//	err := rt.ChangeConfig(cfg)
//
// The new config applies to the calls that start after ChangeConfig returns (Execute's calls and
// the Contexts that NewContext returns from then on). A call already under way keeps, to its
// end, the whole config it started with: its MaxAttempts, waits, predicates, lists,
// MaxDuration and Budget — never a mix of the two. The counters of Metrics go on. Logger is
// replaced as Bulkhead.ChangeConfig replaces it: the same logger keeps its one consumer,
// another one takes its place, and nil stops the logging. A nil r returns ErrNilRetry.
func (r *Retry) ChangeConfig(cfg Config) error {
	if r.unset() {
		return ErrNilRetry
	}
	st, err := compile(cfg)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settings.Store(st)
	r.setLoggerLocked(cfg.Logger)
	return nil
}

// setLoggerLocked subscribes the consumer of logger (none for nil) in place of the current one,
// unless logger is already the one in use.
func (r *Retry) setLoggerLocked(logger *slog.Logger) {
	if r.unlog != nil && logger == r.logger {
		return
	}
	if r.unlog != nil {
		r.unlog()
	}
	r.logger = logger
	r.unlog = logging.Subscribe(&r.events, logger, logging.Retry, r.name, logRecord)
}

// compile validates cfg and fills in its defaults, for New and ChangeConfig.
func compile(cfg Config) (*settings, error) {
	switch {
	case cfg.MaxAttempts == 0:
		cfg.MaxAttempts = DefaultMaxAttempts
	case cfg.MaxAttempts < 0:
		return nil, fmt.Errorf("retry: MaxAttempts must be >= 1, got %d", cfg.MaxAttempts)
	}
	if cfg.WaitDuration < 0 && cfg.WaitDuration != NoWait {
		return nil, fmt.Errorf("retry: WaitDuration must be >= 0 (or NoWait for no wait), got %v", cfg.WaitDuration)
	}
	switch {
	case cfg.WaitDuration != 0 && cfg.IntervalFunction != nil:
		return nil, errors.New("retry: set WaitDuration or IntervalFunction, not both")
	case cfg.WaitDuration != 0 && cfg.IntervalBiFunction != nil:
		return nil, errors.New("retry: set WaitDuration or IntervalBiFunction, not both")
	case cfg.IntervalFunction != nil && cfg.IntervalBiFunction != nil:
		return nil, errors.New("retry: set IntervalFunction or IntervalBiFunction, not both")
	}
	if cfg.MinAttemptDuration < 0 {
		return nil, fmt.Errorf("retry: MinAttemptDuration must be >= 0, got %v", cfg.MinAttemptDuration)
	}
	if cfg.MaxDuration < 0 {
		return nil, fmt.Errorf("retry: MaxDuration must be >= 0 (0 for no limit), got %v", cfg.MaxDuration)
	}
	wait := cfg.WaitDuration
	switch {
	case cfg.IntervalFunction != nil || cfg.IntervalBiFunction != nil:
		// The interval function gives every wait; WaitDuration stays 0.
	case wait == 0:
		cfg.WaitDuration = DefaultWaitDuration
		wait = DefaultWaitDuration
	case wait == NoWait:
		wait = 0
	}
	retryErrors, err := compileErrors("RetryErrors", cfg.RetryErrors)
	if err != nil {
		return nil, err
	}
	ignoreErrors, err := compileErrors("IgnoreErrors", cfg.IgnoreErrors)
	if err != nil {
		return nil, err
	}
	retryRejections, err := compileErrors("RetryRejections", cfg.RetryRejections)
	if err != nil {
		return nil, err
	}
	cfg.RetryErrors = slices.Clone(cfg.RetryErrors)
	cfg.IgnoreErrors = slices.Clone(cfg.IgnoreErrors)
	cfg.RetryRejections = slices.Clone(cfg.RetryRejections)
	return &settings{
		config:          cfg,
		maxAttempts:     cfg.MaxAttempts,
		waitDuration:    wait,
		retryErrors:     retryErrors,
		ignoreErrors:    ignoreErrors,
		retryRejections: retryRejections,
		retryAll:        retryErrors.Empty() && cfg.RetryOnErrorPredicate == nil,
		maxDuration:     cfg.MaxDuration,
		budget:          cfg.Budget,
	}, nil
}

// compileErrors checks and compiles one of the error lists by the rule every pattern shares
// (errmatch.CompileField): a sentinel entry must be a levee rejection in RetryRejections and
// must not be one in the other lists, which never see rejections: such an entry could never
// match.
func compileErrors(field string, entries []error) (errmatch.List, error) {
	f := errmatch.Field{Package: "retry", Name: field, Instead: "RetryRejections"}
	switch field {
	case "RetryRejections":
		f.Rejections, f.Instead = true, "RetryErrors"
	case "IgnoreErrors":
		f.Unless = "not retried"
	}
	return errmatch.CompileField(f, entries)
}

// Name returns the name given to New.
func (r *Retry) Name() string {
	if r.unset() {
		return ""
	}
	return r.name
}

// Config returns the config in force (New's, or the last ChangeConfig's), with defaults filled
// in: MaxAttempts is never zero, nor is WaitDuration unless an interval function is set. The
// slices are copies, and New and ChangeConfig accept the result.
func (r *Retry) Config() Config {
	if r.unset() {
		return Config{}
	}
	c := r.settings.Load().config
	c.RetryErrors = slices.Clone(c.RetryErrors)
	c.IgnoreErrors = slices.Clone(c.IgnoreErrors)
	c.RetryRejections = slices.Clone(c.RetryRejections)
	return c
}

// shouldRetry classifies a failed attempt's error (the mark of Permanent is checked before). A levee rejection is retried only when
// RetryRejections matches it. Any other error follows Resilience4j's effective exception
// predicate: (RetryErrors OR RetryOnErrorPredicate, default true) AND NOT IgnoreErrors. The
// predicate runs in user code, so a panic in it is left to the caller's guard.
func (r *settings) shouldRetry(err error) bool {
	if reject.Is(err) {
		return r.retryRejections.Match(err)
	}
	if r.ignoreErrors.Match(err) {
		return false
	}
	if r.retryAll || r.retryErrors.Match(err) {
		return true
	}
	return r.config.RetryOnErrorPredicate != nil && r.config.RetryOnErrorPredicate(err)
}

// interval returns the wait before the retry that follows attempt failed attempts, given the
// outcome that failed (err, or result when err is nil).
func (r *settings) interval(attempt int, err error, result any) time.Duration {
	switch {
	case r.config.IntervalBiFunction != nil:
		return r.config.IntervalBiFunction(attempt, err, result)
	case r.config.IntervalFunction != nil:
		return r.config.IntervalFunction(attempt)
	default:
		return r.waitDuration
	}
}

// unset reports whether r is nil or a zero Retry that New never built: every exported
// method answers both as it answers nil.
func (r *Retry) unset() bool { return r == nil || r.settings.Load() == nil }
