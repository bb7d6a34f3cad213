package circuitbreaker_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	cb "github.com/levee-go/levee/circuitbreaker"
)

type httpError struct{ status int }

func (e *httpError) Error() string { return fmt.Sprintf("HTTP %d", e.status) }

// rejection is a levee rejection from another pattern (an inner bulkhead, say).
type rejection struct{}

func (rejection) Error() string        { return "bulkhead full" }
func (rejection) LeveeRejection() bool { return true }

func TestClassification(t *testing.T) {
	is5xx := func(err error) bool {
		var h *httpError
		return errors.As(err, &h) && h.status >= 500
	}
	panicErr := &levee.PanicError{Value: "kaboom"}
	tests := []struct {
		name string
		cfg  cb.Config
		err  error
		want cb.EventType
	}{
		{"every error is a failure by default", cb.Config{}, errBoom, cb.EventError},
		{"wrapped error too", cb.Config{}, fmt.Errorf("get: %w", errBoom), cb.EventError},
		{"ignored sentinel", cb.Config{IgnoreErrors: []error{errInvalid}}, fmt.Errorf("x: %w", errInvalid), cb.EventIgnoredError},
		{"ignored type", cb.Config{IgnoreErrors: []error{levee.ErrorType[*httpError]()}}, &httpError{422}, cb.EventIgnoredError},
		{"ignore predicate", cb.Config{IgnoreErrorPredicate: func(err error) bool { return errors.Is(err, errInvalid) }}, errInvalid, cb.EventIgnoredError},
		{"ignore list not matching", cb.Config{IgnoreErrors: []error{errInvalid}}, errBoom, cb.EventError},
		{"record list matching", cb.Config{RecordErrors: []error{errBoom}}, errBoom, cb.EventError},
		{"record list not matching is a success", cb.Config{RecordErrors: []error{errBoom}}, errInvalid, cb.EventSuccess},
		{"record type", cb.Config{RecordErrors: []error{levee.ErrorType[*httpError]()}}, fmt.Errorf("x: %w", &httpError{503}), cb.EventError},
		{"record predicate matching", cb.Config{RecordErrorPredicate: is5xx}, &httpError{503}, cb.EventError},
		{"record predicate not matching", cb.Config{RecordErrorPredicate: is5xx}, &httpError{404}, cb.EventSuccess},
		{"record list OR predicate", cb.Config{RecordErrors: []error{errBoom}, RecordErrorPredicate: is5xx}, &httpError{500}, cb.EventError},
		{"ignore wins over record", cb.Config{RecordErrors: []error{errBoom}, IgnoreErrors: []error{errBoom}}, errBoom, cb.EventIgnoredError},
		{"ignore predicate wins over record predicate", cb.Config{RecordErrorPredicate: is5xx, IgnoreErrorPredicate: is5xx}, &httpError{500}, cb.EventIgnoredError},
		{"levee rejection is ignored by default", cb.Config{}, rejection{}, cb.EventIgnoredError},
		{"wrapped levee rejection too", cb.Config{}, fmt.Errorf("inner: %w", rejection{}), cb.EventIgnoredError},
		{"an inner breaker's rejection too", cb.Config{}, &cb.CallNotPermittedError{Name: "inner", State: cb.Open}, cb.EventIgnoredError},
		{"levee rejection not matched by a record list", cb.Config{RecordErrors: []error{errBoom}}, rejection{}, cb.EventIgnoredError},
		{"the record list never sees a rejection", cb.Config{RecordErrors: []error{levee.ErrorType[rejection]()}}, rejection{}, cb.EventIgnoredError},
		{"the record predicate never sees a rejection", cb.Config{RecordErrorPredicate: func(err error) bool { return levee.IsRejection(err) }}, rejection{}, cb.EventIgnoredError},
		{"a catch-all record predicate never sees a rejection", cb.Config{RecordErrorPredicate: func(err error) bool { return !errors.Is(err, errInvalid) }}, rejection{}, cb.EventIgnoredError},
		{"the ignore list never sees a rejection", cb.Config{IgnoreErrors: []error{levee.ErrorType[rejection]()}, RecordRejections: []error{levee.ErrorType[rejection]()}}, rejection{}, cb.EventError},
		{"the ignore predicate never sees a rejection", cb.Config{IgnoreErrorPredicate: func(error) bool { return true }, RecordRejections: []error{levee.ErrorType[rejection]()}}, rejection{}, cb.EventError},
		{"rejection matched by RecordRejections type", cb.Config{RecordRejections: []error{levee.ErrorType[rejection]()}}, fmt.Errorf("inner: %w", rejection{}), cb.EventError},
		{"ErrCallNotPermitted in RecordRejections", cb.Config{RecordRejections: []error{cb.ErrCallNotPermitted}}, &cb.CallNotPermittedError{Name: "inner"}, cb.EventError},
		{"rejection not matched by RecordRejections", cb.Config{RecordRejections: []error{cb.ErrCallNotPermitted}}, rejection{}, cb.EventIgnoredError},
		{"RecordRejections does not make other errors successes", cb.Config{RecordRejections: []error{cb.ErrCallNotPermitted}}, errBoom, cb.EventError},
		{"panic is a failure", cb.Config{}, panicErr, cb.EventError},
		{"panic is a failure even when the record list misses it", cb.Config{RecordErrors: []error{errBoom}}, panicErr, cb.EventError},
		{"a panic can be ignored", cb.Config{IgnoreErrors: []error{errInvalid}}, &levee.PanicError{Value: errInvalid}, cb.EventIgnoredError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tt.cfg.SlidingWindowSize = 10
				tt.cfg.MinimumNumberOfCalls = 10
				tt.cfg.PermittedNumberOfCallsInHalfOpenState = 3
				b := mustNew(t, tt.cfg)
				require.NoError(t, b.TransitionToOpenState())
				require.NoError(t, b.TransitionToHalfOpenState())
				p := acquire(t, b)
				acquire(t, b)
				acquire(t, b)
				ev := record(b)
				time.Sleep(7 * time.Millisecond)
				p.OnError(tt.err)

				evs := ev.list()
				require.Len(t, evs, 1)
				assert.Equal(t, tt.want, evs[0].Type)
				assert.Equal(t, 7*time.Millisecond, evs[0].Duration)
				m := b.Metrics()
				switch tt.want {
				case cb.EventError:
					assert.Equal(t, tt.err, evs[0].Err)
					assert.Equal(t, counts{buffered: 1, failed: 1}, countsOf(m))
					assert.Error(t, try(b), "no permit came back")
				case cb.EventSuccess:
					assert.Nil(t, evs[0].Err)
					assert.Equal(t, counts{buffered: 1, successful: 1}, countsOf(m))
					assert.Error(t, try(b), "no permit came back")
				case cb.EventIgnoredError:
					assert.Equal(t, tt.err, evs[0].Err)
					assert.Equal(t, counts{}, countsOf(m))
					assert.NoError(t, try(b), "the permit came back")
				}
			})
		})
	}
}

func TestOnErrorWithNilErrorIsAFailure(t *testing.T) {
	called := false
	b := mustNew(t, cb.Config{SlidingWindowSize: 5, IgnoreErrorPredicate: func(error) bool { called = true; return true }})
	acquire(t, b).OnError(nil)
	assert.Equal(t, counts{buffered: 1, failed: 1}, countsOf(b.Metrics()))
	assert.False(t, called, "predicates never see a nil error")
}

// TestPitfall7_IgnoredErrorsReleaseTheHalfOpenPermit: ignored errors hand the permit back and
// do not count toward the decision; panics (Resilience4j: Errors) are levee's deviation —
// recorded as failures and releasing nothing extra, never leaking the permit.
func TestPitfall7_IgnoredErrorsReleaseTheHalfOpenPermit(t *testing.T) {
	b := mustNew(t, cb.Config{PermittedNumberOfCallsInHalfOpenState: 2, IgnoreErrors: []error{errInvalid}})
	require.NoError(t, b.TransitionToOpenState())
	require.NoError(t, b.TransitionToHalfOpenState())
	for range 10 {
		require.ErrorIs(t, run(b, 0, errInvalid), errInvalid)
	}
	assert.Equal(t, cb.HalfOpen, b.State(), "ignored outcomes decide nothing")
	assert.Equal(t, counts{}, countsOf(b.Metrics()))
	assert.NoError(t, try(b))
	assert.NoError(t, try(b), "both permits are still there")
	assert.Error(t, try(b))
}

func TestPitfall7_PanicIsRecordedAndNeverLeaksTheHalfOpenPermit(t *testing.T) {
	b := mustNew(t, cb.Config{PermittedNumberOfCallsInHalfOpenState: 2, MinimumNumberOfCalls: 2, FailureRateThreshold: 100})
	require.NoError(t, b.TransitionToOpenState())
	require.NoError(t, b.TransitionToHalfOpenState())
	ev := record(b)
	v, err := cb.Execute(context.Background(), b, func(context.Context) (string, error) { panic("kaboom") })
	assert.Equal(t, "", v)
	var pe *levee.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "kaboom", pe.Value)
	assert.NotEmpty(t, pe.Stack)
	assert.Equal(t, counts{buffered: 1, failed: 1}, countsOf(b.Metrics()))
	assert.Equal(t, []cb.EventType{cb.EventError}, ev.types())
	require.NoError(t, ok(b)) // the second permit decides: 50% < 100%
	assert.Equal(t, cb.Closed, b.State(), "the panicking probe did not strand HALF_OPEN")
}

func TestRecordResultPredicate(t *testing.T) {
	type response struct{ status int }
	b := mustNew(t, cb.Config{SlidingWindowSize: 10, MinimumNumberOfCalls: 10,
		RecordResultPredicate: func(r any) bool { return r.(response).status >= 500 }})
	ev := record(b)
	v, err := cb.Execute(context.Background(), b, func(context.Context) (response, error) { return response{503}, nil })
	require.NoError(t, err, "the caller gets the value, not an error")
	assert.Equal(t, response{503}, v)
	v, err = cb.Execute(context.Background(), b, func(context.Context) (response, error) { return response{200}, nil })
	require.NoError(t, err)
	assert.Equal(t, response{200}, v)
	assert.Equal(t, counts{buffered: 2, failed: 1, successful: 1}, countsOf(b.Metrics()))

	evs := ev.list()
	require.Len(t, evs, 2)
	assert.Equal(t, cb.EventError, evs[0].Type)
	assert.ErrorIs(t, evs[0].Err, cb.ErrResultRecordedAsFailure)
	var rr *cb.ResultRecordedAsFailureError
	require.ErrorAs(t, evs[0].Err, &rr)
	assert.Equal(t, response{503}, rr.Result)
	assert.Equal(t, "circuitbreaker: CircuitBreaker 'test' has recorded '{503}' as a failure", rr.Error())
	assert.False(t, levee.IsRejection(evs[0].Err))
	assert.Equal(t, cb.EventSuccess, evs[1].Type)
}

func TestOnResult(t *testing.T) {
	calls := 0
	b := mustNew(t, cb.Config{SlidingWindowSize: 10, RecordResultPredicate: func(r any) bool { calls++; return r == "bad" }})
	acquire(t, b).OnResult("bad", nil)
	acquire(t, b).OnResult("good", nil)
	acquire(t, b).OnResult(nil, nil) // a nil result never reaches the predicate
	acquire(t, b).OnResult("bad", errBoom)
	assert.Equal(t, 2, calls, "not called for nil results or errors")
	assert.Equal(t, counts{buffered: 4, failed: 2, successful: 2}, countsOf(b.Metrics()))

	without := mustNew(t, cb.Config{SlidingWindowSize: 10})
	acquire(t, without).OnResult("anything", nil)
	assert.Equal(t, counts{buffered: 1, successful: 1}, countsOf(without.Metrics()))
}

// The ERROR event of a result recorded as failure prints the result when its %v form is short
// (at most 64 characters) and only its type otherwise: a whole *http.Response is noise.
func TestResultRecordedAsFailureErrorPrintsShortResultsAndTypesOfLongOnes(t *testing.T) {
	const prefix = "circuitbreaker: CircuitBreaker 'payment' has recorded '"
	tests := []struct {
		name   string
		result any
		want   string
	}{
		{"short", 503, "503"},
		{"64 characters", strings.Repeat("x", 64), strings.Repeat("x", 64)},
		{"64 runes, more bytes", strings.Repeat("é", 64), strings.Repeat("é", 64)},
		{"65 characters", strings.Repeat("x", 65), "string"},
		{"http response", &http.Response{Status: "503 Service Unavailable", StatusCode: 503,
			Header: http.Header{"Retry-After": {"120"}}}, "*http.Response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := &cb.ResultRecordedAsFailureError{Name: "payment", Result: tt.result}
			assert.Equal(t, prefix+tt.want+"' as a failure", err.Error())
		})
	}
}

func TestRecordedLongResultIsNamedByTypeInTheErrorEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, cb.Config{SlidingWindowSize: 10,
			RecordResultPredicate: func(r any) bool { return r.(*http.Response).StatusCode >= 500 }})
		ev := record(b)
		resp := &http.Response{Status: "503 Service Unavailable", StatusCode: 503, Proto: "HTTP/1.1"}
		v, err := cb.Execute(context.Background(), b, func(context.Context) (*http.Response, error) {
			time.Sleep(time.Second)
			return resp, nil
		})
		require.NoError(t, err)
		assert.Same(t, resp, v)
		evs := ev.list()
		require.Len(t, evs, 1)
		assert.Equal(t, cb.EventError, evs[0].Type)
		assert.Equal(t, "CircuitBreaker 'test' recorded an error: 'circuitbreaker: CircuitBreaker 'test' has "+
			"recorded '*http.Response' as a failure'. Elapsed time: 1s", evs[0].String())
	})
}
