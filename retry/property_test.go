package retry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/levee-go/levee/retry"
)

// kind is what one attempt of a generated call does.
type kind int

const (
	kindAccepted  kind = iota // returns "PAID"
	kindPending               // returns "PENDING" (retried only with a result predicate)
	kindRetryable             // fails with errGateway
	kindIgnored               // fails with errInvalid, which IgnoreErrors lists
	kindRejected              // fails with a levee rejection
	kindPanic                 // panics
)

// modelOutcome is what the reference model predicts for one call.
type modelOutcome struct {
	calls   int
	value   string // "" when the call ends with an error
	err     string // "", "exhausted", "ignored", "rejected"
	events  []retry.EventType
	elapsed time.Duration
	m       retry.Metrics
}

// model is Resilience4j's synchronous retry algorithm with levee's rules, written as plainly as
// possible.
func model(maxAttempts int, intervals []time.Duration, predicate, failAfter bool, attempts []kind) modelOutcome {
	var o modelOutcome
	failed := 0
	interval := func(n int) time.Duration { return intervals[min(n, len(intervals))-1] }
	for i := 0; ; i++ {
		k := attempts[min(i, len(attempts)-1)]
		o.calls++
		o.m.NumberOfTotalCalls++
		value := "PAID"
		if k == kindPending && !predicate {
			k, value = kindAccepted, "PENDING"
		}
		switch k {
		case kindAccepted:
			o.value = value
			if failed > 0 {
				o.m.NumberOfSuccessfulCallsWithRetryAttempt++
				o.events = append(o.events, retry.EventSuccess)
			} else {
				o.m.NumberOfSuccessfulCallsWithoutRetryAttempt++
			}
			return o
		case kindIgnored, kindRejected:
			o.err = map[kind]string{kindIgnored: "ignored", kindRejected: "rejected"}[k]
			o.m.NumberOfFailedCallsWithoutRetryAttempt++
			o.events = append(o.events, retry.EventIgnoredError)
			return o
		}
		// A retryable failure: an error, a panic, or a pending result.
		failed++
		stop := failed >= maxAttempts
		var wait time.Duration
		if !stop {
			wait = interval(failed)
			stop = wait < 0
		}
		if stop {
			o.m.NumberOfFailedCallsWithRetryAttempt++
			o.events = append(o.events, retry.EventError)
			// Running out of attempts and a negative interval end a call the same way.
			if k == kindPending && !failAfter {
				o.value = "PENDING"
			} else {
				o.err = "exhausted"
			}
			return o
		}
		o.events = append(o.events, retry.EventRetry)
		o.elapsed += wait
	}
}

func classify(t *rapid.T, v string, err error) (string, string) {
	var mre *retry.MaxRetriesExceededError
	switch {
	case err == nil:
		return v, ""
	case errors.As(err, &mre):
		return "", "exhausted"
	case errors.Is(err, errInvalid):
		return "", "ignored"
	case errors.Is(err, errRejected):
		return "", "rejected"
	}
	t.Fatalf("unexpected error %v", err)
	return "", ""
}

var errPanicked = errors.New("panicked")

type bubbleTB struct{ testing.TB }

func TestPropertyRetryMatchesModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// rapid asks a *testing.T for its deadline, which a bubble forbids: hide the type.
		rapid.Check(bubbleTB{t}, func(rt *rapid.T) {
			maxAttempts := rapid.IntRange(1, 6).Draw(rt, "maxAttempts")
			intervals := rapid.SliceOfN(rapid.SampledFrom([]time.Duration{
				-1, 0, time.Millisecond, 100 * time.Millisecond, time.Second,
			}), 1, 6).Draw(rt, "intervals")
			predicate := rapid.Bool().Draw(rt, "resultPredicate")
			failAfter := rapid.Bool().Draw(rt, "failAfterMaxAttempts")
			cfg := retry.Config{
				MaxAttempts: maxAttempts,
				IntervalFunction: func(attempt int) time.Duration {
					return intervals[min(attempt, len(intervals))-1]
				},
				IgnoreErrors:         []error{errInvalid},
				FailAfterMaxAttempts: failAfter,
			}
			if predicate {
				cfg.RetryOnResultPredicate = func(v any) bool { return v == "PENDING" }
			}
			r, err := retry.New("prop", cfg)
			require.NoError(rt, err)
			var got []retry.EventType
			r.Subscribe(func(e retry.Event) { got = append(got, e.Type) })

			var want retry.Metrics
			for call := range rapid.IntRange(1, 4).Draw(rt, "calls") {
				attempts := rapid.SliceOfN(rapid.IntRange(0, int(kindPanic)), 1, 8).Draw(rt, "attempts")
				kinds := make([]kind, len(attempts))
				for i, a := range attempts {
					kinds[i] = kind(a)
				}
				exp := model(maxAttempts, intervals, predicate, failAfter, kinds)
				got = nil
				calls := 0
				start := time.Now()
				v, err := retry.Execute(context.Background(), r, func(context.Context) (string, error) {
					k := kinds[min(calls, len(kinds)-1)]
					calls++
					switch k {
					case kindAccepted:
						return "PAID", nil
					case kindPending:
						return "PENDING", nil
					case kindRetryable:
						return "", errGateway
					case kindIgnored:
						return "", errInvalid
					case kindRejected:
						return "", errRejected
					default:
						panic(errPanicked)
					}
				})
				gv, gerr := classify(rt, v, err)
				require.Equal(rt, exp.calls, calls, "call %d: attempts", call)
				require.Equal(rt, exp.err, gerr, "call %d: error %v", call, err)
				require.Equal(rt, exp.value, gv, "call %d: value", call)
				require.Equal(rt, exp.events, got, "call %d: events", call)
				require.Equal(rt, exp.elapsed, time.Since(start), "call %d: time waited", call)
				want.NumberOfSuccessfulCallsWithoutRetryAttempt += exp.m.NumberOfSuccessfulCallsWithoutRetryAttempt
				want.NumberOfSuccessfulCallsWithRetryAttempt += exp.m.NumberOfSuccessfulCallsWithRetryAttempt
				want.NumberOfFailedCallsWithoutRetryAttempt += exp.m.NumberOfFailedCallsWithoutRetryAttempt
				want.NumberOfFailedCallsWithRetryAttempt += exp.m.NumberOfFailedCallsWithRetryAttempt
				want.NumberOfTotalCalls += exp.m.NumberOfTotalCalls
				require.Equal(rt, want, r.Metrics(), "call %d: metrics", call)
			}
		})
	})
}

// TestPropertyNegativeWaitsOtherThanNoWaitAreRefused: NoWait is the only negative WaitDuration
// New and ChangeConfig accept; any other, −1 included, is refused naming the field, its range
// and the constant, and a refused ChangeConfig keeps the config in force.
func TestPropertyNegativeWaitsOtherThanNoWaitAreRefused(t *testing.T) {
	r, err := retry.New("r", retry.Config{WaitDuration: retry.NoWait})
	require.NoError(t, err)
	rapid.Check(t, func(t *rapid.T) {
		d := time.Duration(rapid.OneOf(rapid.Just(int64(-1)), rapid.Int64Range(int64(retry.NoWait)+1, -1)).Draw(t, "d"))
		want := "retry: WaitDuration must be >= 0 (or NoWait for no wait), got " + d.String()
		_, err := retry.New("r", retry.Config{WaitDuration: d})
		require.EqualError(t, err, want)
		require.EqualError(t, r.ChangeConfig(retry.Config{WaitDuration: d}), want)
		require.Equal(t, retry.NoWait, r.Config().WaitDuration)
	})
	again, err := retry.New("r", r.Config())
	require.NoError(t, err)
	require.Equal(t, retry.NoWait, again.Config().WaitDuration)
}
