package bench

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/failsafe-go/failsafe-go"
	fscircuitbreaker "github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/sony/gobreaker/v2"

	"github.com/levee-go/levee/circuitbreaker"
)

// Window selects the breaker's sliding window.
type Window int

const (
	// CountWindow is a window of the last 100 calls, opening at a 50% failure rate once 100
	// calls were seen.
	CountWindow Window = iota
	// TimeWindow is a window of the last 60 seconds, opening at a 50% failure rate once 100
	// calls were seen in it.
	TimeWindow
)

// String names the window as the benchmarks label it ("count100", "time60s").
func (w Window) String() string {
	if w == TimeWindow {
		return "time60s"
	}
	return "count100"
}

// BreakerLoad selects what the measured call meets.
type BreakerLoad int

const (
	// BreakerSuccess: a closed breaker and a call that succeeds.
	BreakerSuccess BreakerLoad = iota
	// BreakerFailure: a call that fails, recorded in the window by a breaker that never opens,
	// so that every operation pays for recording a failure and evaluating the rates.
	BreakerFailure
	// BreakerRejected: an open breaker, which refuses the call without running it.
	BreakerRejected
)

// String names the load as the benchmarks label it.
func (l BreakerLoad) String() string {
	switch l {
	case BreakerFailure:
		return "failure"
	case BreakerRejected:
		return "rejected"
	}
	return "success"
}

// Breaker settings shared by every implementation.
const (
	breakerCalls    = 100              // window size (count) and minimum number of calls
	breakerWindow   = 60 * time.Second // time-based window
	breakerRate     = 50               // failure rate threshold, percent
	breakerOpenWait = 60 * time.Second // wait in the open state
)

// BreakerCases returns levee's circuit breaker, gobreaker v2 and failsafe-go's circuit breaker,
// configured alike for w and brought to the state load needs, each running a call through its
// Execute (gobreaker's Execute, failsafe-go's executor Get), which times it or records it.
//
// gobreaker has no count-based sliding window: its nearest equivalent, used for CountWindow,
// trips on the counts since the breaker closed (Interval 0) once there were 100 requests. Its
// time window is a rolling window of 60 one-second buckets, like levee's. For BreakerFailure,
// levee's breaker is in METRICS_ONLY (Resilience4j's state that records every call and never
// opens), gobreaker's ReadyToTrip is evaluated but never true, and failsafe-go's thresholds are
// out of reach.
func BreakerCases(w Window, load BreakerLoad) ([]Case, error) {
	work := Succeed
	if load == BreakerFailure {
		work = Fail
	}

	lv, err := leveeBreaker(w, load)
	if err != nil {
		return nil, err
	}
	gb, err := gobreakerBreaker(w, load)
	if err != nil {
		return nil, err
	}
	fs, err := failsafeBreaker(w, load)
	if err != nil {
		return nil, err
	}

	call, plain := work.Call, work.Plain
	return []Case{
		{Impl: "levee", Do: func(ctx context.Context) error {
			_, err := circuitbreaker.Execute(ctx, lv, call)
			return err
		}},
		{Impl: "gobreaker", Do: func(context.Context) error {
			_, err := gb.Execute(plain)
			return err
		}},
		{Impl: "failsafe", Do: func(context.Context) error {
			_, err := fs.Get(plain)
			return err
		}},
	}, nil
}

func leveeBreaker(w Window, load BreakerLoad) (*circuitbreaker.CircuitBreaker, error) {
	cfg := circuitbreaker.Config{
		FailureRateThreshold:    breakerRate,
		SlidingWindowSize:       breakerCalls,
		MinimumNumberOfCalls:    breakerCalls,
		WaitDurationInOpenState: breakerOpenWait,
	}
	if w == TimeWindow {
		cfg.SlidingWindowType = circuitbreaker.TimeBased
		cfg.SlidingWindowSize = int(breakerWindow / time.Second)
	}
	switch load {
	case BreakerFailure:
		cfg.InitialState = circuitbreaker.MetricsOnly
	case BreakerRejected:
		cfg.InitialState = circuitbreaker.Open
	}
	return circuitbreaker.New("bench", cfg)
}

func gobreakerBreaker(w Window, load BreakerLoad) (*gobreaker.CircuitBreaker[int], error) {
	st := gobreaker.Settings{
		Name:    "bench",
		Timeout: breakerOpenWait,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return c.Requests >= breakerCalls && c.TotalFailures*100 >= c.Requests*breakerRate
		},
	}
	if w == TimeWindow {
		st.Interval = breakerWindow
		st.BucketPeriod = time.Second
	}
	switch load {
	case BreakerFailure:
		st.ReadyToTrip = func(c gobreaker.Counts) bool {
			return c.TotalFailures*100 >= c.Requests*breakerRate && c.Requests >= math.MaxUint32
		}
	case BreakerRejected:
		st.ReadyToTrip = func(gobreaker.Counts) bool { return true }
	}
	cb := gobreaker.NewCircuitBreaker[int](st)
	if load == BreakerRejected {
		_, _ = cb.Execute(failPlain)
		if cb.State() != gobreaker.StateOpen {
			return nil, fmt.Errorf("gobreaker: state %v after a failure, want open", cb.State())
		}
	}
	return cb, nil
}

func failsafeBreaker(w Window, load BreakerLoad) (failsafe.Executor[int], error) {
	b := fscircuitbreaker.NewBuilder[int]().WithDelay(breakerOpenWait)
	switch {
	case w == CountWindow && load == BreakerFailure:
		// More failures than the window can hold: recorded, never reached.
		b = b.WithFailureThresholdRatio(breakerCalls+1, breakerCalls)
	case w == CountWindow:
		b = b.WithFailureThresholdRatio(breakerCalls*breakerRate/100, breakerCalls)
	case load == BreakerFailure:
		// A minimum number of executions the window never reaches.
		b = b.WithFailureRateThreshold(breakerRate/100.0, math.MaxUint32, breakerWindow)
	default:
		b = b.WithFailureRateThreshold(breakerRate/100.0, breakerCalls, breakerWindow)
	}
	cb := b.Build()
	if load == BreakerRejected {
		cb.Open()
	}
	return failsafe.With[int](cb), nil
}
