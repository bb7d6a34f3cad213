package retry_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/retry"
)

var (
	errGateway = errors.New("gateway 503")
	errInvalid = errors.New("invalid order")
)

// httpError is a typed error for errors.As matching.
type httpError struct{ Status int }

func (e *httpError) Error() string { return fmt.Sprintf("http %d", e.Status) }

// rejection stands in for a levee rejection (an open breaker, a full bulkhead).
type rejection struct{ by string }

func (e *rejection) Error() string        { return e.by + ": call not permitted" }
func (e *rejection) LeveeRejection() bool { return true }

var errRejected = &rejection{by: "breaker"}

// newRetry builds a Retry or fails the test.
func newRetry(t testing.TB, cfg retry.Config) *retry.Retry {
	t.Helper()
	r, err := retry.New("test", cfg)
	require.NoError(t, err)
	return r
}

// recorder collects the events of a Retry.
type recorder struct {
	mu     sync.Mutex
	events []retry.Event
}

func record(t testing.TB, r *retry.Retry) *recorder {
	rec := &recorder{}
	unsubscribe := r.Subscribe(func(e retry.Event) {
		rec.mu.Lock()
		rec.events = append(rec.events, e)
		rec.mu.Unlock()
	})
	t.Cleanup(unsubscribe)
	return rec
}

func (rec *recorder) types() []retry.EventType {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := make([]retry.EventType, len(rec.events))
	for i, e := range rec.events {
		out[i] = e.Type
	}
	return out
}

func (rec *recorder) all() []retry.Event {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]retry.Event(nil), rec.events...)
}

// script is a call whose attempts return the given outcomes in order (the last one repeats),
// and that counts its invocations.
type script struct {
	mu       sync.Mutex
	outcomes []outcome
	calls    int
}

type outcome struct {
	v   string
	err error
}

func ok(v string) outcome    { return outcome{v: v} }
func fail(e error) outcome   { return outcome{err: e} }
func (s *script) count() int { s.mu.Lock(); defer s.mu.Unlock(); return s.calls }

func (s *script) call(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := min(s.calls, len(s.outcomes)-1)
	s.calls++
	return s.outcomes[i].v, s.outcomes[i].err
}

func newScript(outcomes ...outcome) *script { return &script{outcomes: outcomes} }

func metrics(swo, sw, fwo, fw, total int64) retry.Metrics {
	return retry.Metrics{
		NumberOfSuccessfulCallsWithoutRetryAttempt: swo,
		NumberOfSuccessfulCallsWithRetryAttempt:    sw,
		NumberOfFailedCallsWithoutRetryAttempt:     fwo,
		NumberOfFailedCallsWithRetryAttempt:        fw,
		NumberOfTotalCalls:                         total,
	}
}

// noWait is a config retrying at once, for tests whose timing does not matter.
func noWait(maxAttempts int) retry.Config {
	return retry.Config{MaxAttempts: maxAttempts, WaitDuration: retry.NoWait}
}
