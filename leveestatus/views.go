package leveestatus

import (
	"time"

	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

// circuitBreakerDetails is one breaker in GET /circuitbreakers, with the fields of
// Resilience4j's CircuitBreakerDetails; rates are percentages as numbers, -1 while the
// window holds fewer calls than its minimum.
type circuitBreakerDetails struct {
	FailureRate           float32 `json:"failureRate"`
	FailureRateThreshold  float32 `json:"failureRateThreshold"`
	SlowCallRate          float32 `json:"slowCallRate"`
	SlowCallRateThreshold float32 `json:"slowCallRateThreshold"`
	BufferedCalls         int     `json:"bufferedCalls"`
	FailedCalls           int     `json:"failedCalls"`
	SlowCalls             int     `json:"slowCalls"`
	SlowFailedCalls       int     `json:"slowFailedCalls"`
	NotPermittedCalls     int     `json:"notPermittedCalls"`
	State                 string  `json:"state"`
}

func circuitBreakerView(cb *circuitbreaker.CircuitBreaker) circuitBreakerDetails {
	m, cfg := cb.Metrics(), cb.Config()
	return circuitBreakerDetails{
		FailureRate:           m.FailureRate,
		FailureRateThreshold:  cfg.FailureRateThreshold,
		SlowCallRate:          m.SlowCallRate,
		SlowCallRateThreshold: cfg.SlowCallRateThreshold,
		BufferedCalls:         m.NumberOfBufferedCalls,
		FailedCalls:           m.NumberOfFailedCalls,
		SlowCalls:             m.NumberOfSlowCalls,
		SlowFailedCalls:       m.NumberOfSlowFailedCalls,
		NotPermittedCalls:     m.NumberOfNotPermittedCalls,
		State:                 m.State.String(),
	}
}

// retryDetails is one retry in GET /retries: its Metrics under Resilience4j's names.
type retryDetails struct {
	MaxAttempts                                int   `json:"maxAttempts"`
	NumberOfSuccessfulCallsWithoutRetryAttempt int64 `json:"numberOfSuccessfulCallsWithoutRetryAttempt"`
	NumberOfSuccessfulCallsWithRetryAttempt    int64 `json:"numberOfSuccessfulCallsWithRetryAttempt"`
	NumberOfFailedCallsWithoutRetryAttempt     int64 `json:"numberOfFailedCallsWithoutRetryAttempt"`
	NumberOfFailedCallsWithRetryAttempt        int64 `json:"numberOfFailedCallsWithRetryAttempt"`
	NumberOfTotalCalls                         int64 `json:"numberOfTotalCalls"`
}

func retryView(r *retry.Retry) retryDetails {
	m := r.Metrics()
	return retryDetails{
		MaxAttempts: r.Config().MaxAttempts,
		NumberOfSuccessfulCallsWithoutRetryAttempt: m.NumberOfSuccessfulCallsWithoutRetryAttempt,
		NumberOfSuccessfulCallsWithRetryAttempt:    m.NumberOfSuccessfulCallsWithRetryAttempt,
		NumberOfFailedCallsWithoutRetryAttempt:     m.NumberOfFailedCallsWithoutRetryAttempt,
		NumberOfFailedCallsWithRetryAttempt:        m.NumberOfFailedCallsWithRetryAttempt,
		NumberOfTotalCalls:                         m.NumberOfTotalCalls,
	}
}

// retryCalls counts the calls a retry has seen end.
func retryCalls(m retry.Metrics) int64 {
	return m.NumberOfSuccessfulCallsWithoutRetryAttempt + m.NumberOfSuccessfulCallsWithRetryAttempt +
		m.NumberOfFailedCallsWithoutRetryAttempt + m.NumberOfFailedCallsWithRetryAttempt
}

// bulkheadDetails is one semaphore bulkhead in GET /bulkheads.
type bulkheadDetails struct {
	AvailableConcurrentCalls  int     `json:"availableConcurrentCalls"`
	MaxAllowedConcurrentCalls int     `json:"maxAllowedConcurrentCalls"`
	NumberOfWaitingCalls      int     `json:"numberOfWaitingCalls"`
	MaxWaitDurationInMs       float64 `json:"maxWaitDurationInMs"`
}

func bulkheadView(b *bulkhead.Bulkhead) bulkheadDetails {
	m := b.Metrics()
	return bulkheadDetails{
		AvailableConcurrentCalls:  m.AvailableConcurrentCalls,
		MaxAllowedConcurrentCalls: m.MaxAllowedConcurrentCalls,
		NumberOfWaitingCalls:      m.NumberOfWaitingCalls,
		MaxWaitDurationInMs:       ms(b.Config().MaxWaitDuration),
	}
}

// threadPoolBulkheadDetails is one async.WorkerPool in GET /bulkheads, with the names of
// Resilience4j's ThreadPoolBulkhead.Metrics.
type threadPoolBulkheadDetails struct {
	CoreThreadPoolSize     int `json:"coreThreadPoolSize"`
	MaximumThreadPoolSize  int `json:"maximumThreadPoolSize"`
	ThreadPoolSize         int `json:"threadPoolSize"`
	ActiveThreadCount      int `json:"activeThreadCount"`
	AvailableThreadCount   int `json:"availableThreadCount"`
	QueueDepth             int `json:"queueDepth"`
	QueueCapacity          int `json:"queueCapacity"`
	RemainingQueueCapacity int `json:"remainingQueueCapacity"`
}

func workerPoolView(p *async.WorkerPool) threadPoolBulkheadDetails {
	m := p.Metrics()
	return threadPoolBulkheadDetails{
		CoreThreadPoolSize:     m.CoreThreadPoolSize,
		MaximumThreadPoolSize:  m.MaximumThreadPoolSize,
		ThreadPoolSize:         m.ThreadPoolSize,
		ActiveThreadCount:      m.ActiveThreadCount,
		AvailableThreadCount:   m.AvailableThreadCount,
		QueueDepth:             m.QueueDepth,
		QueueCapacity:          m.QueueCapacity,
		RemainingQueueCapacity: m.RemainingQueueCapacity,
	}
}

// rateLimiterDetails is one rate limiter in GET /ratelimiters, with the names of
// Resilience4j's RateLimiter.Metrics.
type rateLimiterDetails struct {
	AvailablePermissions   int     `json:"availablePermissions"`
	NumberOfWaitingThreads int     `json:"numberOfWaitingThreads"`
	LimitForPeriod         int     `json:"limitForPeriod"`
	LimitRefreshPeriodInMs float64 `json:"limitRefreshPeriodInMs"`
	TimeoutDurationInMs    float64 `json:"timeoutDurationInMs"`
}

func rateLimiterView(rl *ratelimiter.RateLimiter) rateLimiterDetails {
	m, cfg := rl.Metrics(), rl.Config()
	return rateLimiterDetails{
		AvailablePermissions:   m.AvailablePermissions,
		NumberOfWaitingThreads: m.NumberOfWaitingCalls,
		LimitForPeriod:         cfg.LimitForPeriod,
		LimitRefreshPeriodInMs: ms(cfg.LimitRefreshPeriod),
		TimeoutDurationInMs:    ms(cfg.TimeoutDuration),
	}
}

// timeLimiterDetails is one time limiter in GET /timelimiters.
type timeLimiterDetails struct {
	TimeoutDurationInMs     float64 `json:"timeoutDurationInMs"`
	NumberOfSuccessfulCalls int64   `json:"numberOfSuccessfulCalls"`
	NumberOfFailedCalls     int64   `json:"numberOfFailedCalls"`
	NumberOfTimedOutCalls   int64   `json:"numberOfTimedOutCalls"`
	NumberOfAbandonedCalls  int     `json:"numberOfAbandonedCalls"`
}

func timeLimiterView(tl *timelimiter.TimeLimiter) timeLimiterDetails {
	m := tl.Metrics()
	return timeLimiterDetails{
		TimeoutDurationInMs:     ms(tl.Config().TimeoutDuration),
		NumberOfSuccessfulCalls: m.NumberOfSuccessfulCalls,
		NumberOfFailedCalls:     m.NumberOfFailedCalls,
		NumberOfTimedOutCalls:   m.NumberOfTimedOutCalls,
		NumberOfAbandonedCalls:  m.NumberOfAbandonedCalls,
	}
}

// ms renders d in milliseconds, fractions kept; a negative sentinel (NoWait) is no wait, 0.
func ms(d time.Duration) float64 {
	if d < 0 {
		return 0
	}
	return float64(d) / float64(time.Millisecond)
}

// details returns an instance's status fields, its state (breakers only), and its calls so
// far: the count kept from its events, or its own counters where they count calls.
func (h *Handler) details(inst any, counted int64) (details any, state string, calls int64) {
	switch v := inst.(type) {
	case *circuitbreaker.CircuitBreaker:
		d := circuitBreakerView(v)
		return d, d.State, counted
	case *retry.Retry:
		return retryView(v), "", retryCalls(v.Metrics())
	case *bulkhead.Bulkhead:
		return bulkheadView(v), "", counted
	case *async.WorkerPool:
		return workerPoolView(v), "", counted
	case *ratelimiter.RateLimiter:
		return rateLimiterView(v), "", counted
	case *timelimiter.TimeLimiter:
		m := v.Metrics()
		return timeLimiterView(v), "", m.NumberOfSuccessfulCalls + m.NumberOfFailedCalls + m.NumberOfTimedOutCalls
	}
	return leveeDetails(inst, counted)
}
