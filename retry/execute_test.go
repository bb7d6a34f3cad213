package retry_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/internal/errmatch"
	"github.com/levee-go/levee/internal/reject"
	"github.com/levee-go/levee/internal/safe"
	"github.com/levee-go/levee/retry"
)

// ev is an Event without its Time, for exact comparisons.
type ev struct {
	Type     retry.EventType
	Attempts int
	LastErr  error
	Wait     time.Duration
}

func events(rec *recorder) []ev {
	var out []ev
	for _, e := range rec.all() {
		out = append(out, ev{e.Type, e.NumberOfRetryAttempts, e.LastErr, e.WaitInterval})
	}
	return out
}

func TestSuccessOnFirstAttempt(t *testing.T) {
	r := newRetry(t, noWait(3))
	rec := record(t, r)
	s := newScript(ok("PAID"))
	v, err := retry.Execute(context.Background(), r, s.call)
	require.NoError(t, err)
	assert.Equal(t, "PAID", v)
	assert.Equal(t, 1, s.count())
	assert.Equal(t, metrics(1, 0, 0, 0, 1), r.Metrics())
	assert.Empty(t, rec.all(), "no event for a first-try success")
}

func TestSuccessAfterRetries(t *testing.T) {
	r := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: 10 * ms})
	rec := record(t, r)
	s := newScript(fail(errGateway), fail(errGateway), ok("PAID"))
	synctest.Test(t, func(t *testing.T) {
		v, err := retry.Execute(context.Background(), r, s.call)
		require.NoError(t, err)
		assert.Equal(t, "PAID", v)
	})
	assert.Equal(t, 3, s.count())
	assert.Equal(t, metrics(0, 1, 0, 0, 3), r.Metrics())
	assert.Equal(t, []ev{
		{retry.EventRetry, 1, errGateway, 10 * ms},
		{retry.EventRetry, 2, errGateway, 10 * ms},
		{retry.EventSuccess, 2, errGateway, 0},
	}, events(rec))
}

func TestExhaustedOnErrorsWrapsLastError(t *testing.T) {
	r := newRetry(t, noWait(3))
	rec := record(t, r)
	last := fmt.Errorf("third: %w", errGateway)
	s := newScript(fail(errGateway), fail(errGateway), fail(last))
	_, err := retry.Execute(context.Background(), r, s.call)

	require.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
	require.ErrorIs(t, err, errGateway)
	var mre *retry.MaxRetriesExceededError
	require.ErrorAs(t, err, &mre)
	assert.Equal(t, retry.MaxRetriesExceededError{Name: "test", Attempts: 3, MaxAttempts: 3, LastErr: last}, *mre)
	assert.Equal(t, "retry: Retry 'test' has exhausted all attempts (3): third: gateway 503", err.Error())
	assert.Same(t, last, errors.Unwrap(err))
	assert.False(t, reject.Is(err), "exhaustion is not a rejection: the call ran")

	assert.Equal(t, 3, s.count())
	assert.Equal(t, metrics(0, 0, 0, 1, 3), r.Metrics())
	assert.Equal(t, []ev{
		{retry.EventRetry, 1, errGateway, 0},
		{retry.EventRetry, 2, errGateway, 0},
		{retry.EventError, 3, last, 0},
	}, events(rec))
}

func TestMaxAttemptsOneFailureCountsAsFailedWithRetry(t *testing.T) {
	r := newRetry(t, noWait(1))
	rec := record(t, r)
	s := newScript(fail(errGateway))
	_, err := retry.Execute(context.Background(), r, s.call)
	require.ErrorIs(t, err, errGateway)
	require.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
	assert.Equal(t, 1, s.count())
	assert.Equal(t, metrics(0, 0, 0, 1, 1), r.Metrics())
	assert.Equal(t, []ev{{retry.EventError, 1, errGateway, 0}}, events(rec))
}

func TestNotRetriedErrorIsReturnedUnchanged(t *testing.T) {
	r := newRetry(t, retry.Config{WaitDuration: retry.NoWait, RetryErrors: []error{errGateway}})
	rec := record(t, r)
	s := newScript(outcome{v: "partial", err: errInvalid})
	v, err := retry.Execute(context.Background(), r, s.call)
	assert.Same(t, errInvalid, err)
	assert.Equal(t, "partial", v, "the attempt's own value comes back with its error")
	assert.Equal(t, 1, s.count())
	assert.Equal(t, metrics(0, 0, 1, 0, 1), r.Metrics())
	assert.Equal(t, []ev{{retry.EventIgnoredError, 0, errInvalid, 0}}, events(rec))
}

func TestNotRetriedErrorAfterEarlierRetries(t *testing.T) {
	r := newRetry(t, retry.Config{WaitDuration: retry.NoWait, RetryErrors: []error{errGateway}})
	rec := record(t, r)
	s := newScript(fail(errGateway), fail(errInvalid), ok("never"))
	_, err := retry.Execute(context.Background(), r, s.call)
	assert.Same(t, errInvalid, err)
	assert.Equal(t, 2, s.count())
	assert.Equal(t, metrics(0, 0, 1, 0, 2), r.Metrics(), "failed without retry, as Resilience4j")
	assert.Equal(t, []ev{
		{retry.EventRetry, 1, errGateway, 0},
		{retry.EventIgnoredError, 1, errInvalid, 0},
	}, events(rec))
}

func TestErrorClassification(t *testing.T) {
	httpType := errmatch.Type[*httpError]()
	isGateway := func(err error) bool { return errors.Is(err, errGateway) }
	isInvalid := func(err error) bool { return errors.Is(err, errInvalid) }
	always := func(error) bool { return true }
	never := func(error) bool { return false }
	other := errors.New("other")
	h503 := &httpError{Status: 503}
	tests := []struct {
		name    string
		cfg     retry.Config
		err     error
		retried bool
	}{
		{"default retries every error", retry.Config{}, errGateway, true},
		{"default retries a wrapped error", retry.Config{}, fmt.Errorf("x: %w", other), true},
		{"RetryErrors sentinel", retry.Config{RetryErrors: []error{errGateway}}, errGateway, true},
		{"RetryErrors sentinel wrapped", retry.Config{RetryErrors: []error{errGateway}}, fmt.Errorf("x: %w", errGateway), true},
		{"RetryErrors sentinel other", retry.Config{RetryErrors: []error{errGateway}}, errInvalid, false},
		{"RetryErrors type", retry.Config{RetryErrors: []error{httpType}}, h503, true},
		{"RetryErrors type wrapped", retry.Config{RetryErrors: []error{httpType}}, fmt.Errorf("x: %w", h503), true},
		{"RetryErrors type other", retry.Config{RetryErrors: []error{httpType}}, errGateway, false},
		{"predicate yes", retry.Config{RetryOnErrorPredicate: isGateway}, errGateway, true},
		{"predicate no", retry.Config{RetryOnErrorPredicate: isGateway}, errInvalid, false},
		{"list OR predicate: list", retry.Config{RetryErrors: []error{errGateway}, RetryOnErrorPredicate: isInvalid}, errGateway, true},
		{"list OR predicate: predicate", retry.Config{RetryErrors: []error{errGateway}, RetryOnErrorPredicate: isInvalid}, errInvalid, true},
		{"list OR predicate: neither", retry.Config{RetryErrors: []error{errGateway}, RetryOnErrorPredicate: isInvalid}, other, false},
		{"IgnoreErrors alone", retry.Config{IgnoreErrors: []error{errInvalid}}, errInvalid, false},
		{"IgnoreErrors alone, other error", retry.Config{IgnoreErrors: []error{errInvalid}}, errGateway, true},
		{"ignore beats RetryErrors", retry.Config{RetryErrors: []error{httpType}, IgnoreErrors: []error{errInvalid}},
			fmt.Errorf("%w: %w", h503, errInvalid), false},
		{"ignore beats predicate", retry.Config{RetryOnErrorPredicate: always, IgnoreErrors: []error{errGateway}}, errGateway, false},
		{"ignore type", retry.Config{IgnoreErrors: []error{httpType}}, fmt.Errorf("x: %w", h503), false},
		{"rejection not retried by default", retry.Config{}, errRejected, false},
		{"wrapped rejection not retried by default", retry.Config{}, fmt.Errorf("x: %w", errRejected), false},
		{"rejection not retried with IgnoreErrors only", retry.Config{IgnoreErrors: []error{errInvalid}}, errRejected, false},
		{"rejection not matched by other RetryErrors", retry.Config{RetryErrors: []error{errGateway}}, errRejected, false},
		{"rejection not matched by a type in RetryErrors", retry.Config{RetryErrors: []error{errmatch.Type[*rejection]()}}, errRejected, false},
		{"rejection never seen by a predicate", retry.Config{RetryOnErrorPredicate: always}, errRejected, false},
		{"rejection listed in RetryRejections", retry.Config{RetryRejections: []error{errRejected}}, errRejected, true},
		{"wrapped rejection listed in RetryRejections", retry.Config{RetryRejections: []error{errRejected}}, fmt.Errorf("x: %w", errRejected), true},
		{"rejection type in RetryRejections", retry.Config{RetryRejections: []error{errmatch.Type[*rejection]()}}, errRejected, true},
		{"RetryRejections beats IgnoreErrors' type", retry.Config{RetryRejections: []error{errRejected}, IgnoreErrors: []error{errmatch.Type[*rejection]()}}, errRejected, true},
		{"RetryRejections beats a refusing predicate", retry.Config{RetryRejections: []error{errRejected}, RetryOnErrorPredicate: never}, errRejected, true},
		{"other rejection not listed", retry.Config{RetryRejections: []error{errRejected}}, &rejection{by: "bulkhead"}, false},
		{"panic retried by default", retry.Config{}, safe.NewPanicError("boom"), true},
		{"panic ignored by type", retry.Config{IgnoreErrors: []error{errmatch.Type[*safe.PanicError]()}}, safe.NewPanicError("boom"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.MaxAttempts, cfg.WaitDuration = 2, retry.NoWait
			r := newRetry(t, cfg)
			calls := 0
			_, err := retry.Execute(context.Background(), r, func(context.Context) (int, error) {
				calls++
				return 0, tt.err
			})
			require.ErrorIs(t, err, tt.err)
			m := r.Metrics()
			if tt.retried {
				assert.Equal(t, 2, calls)
				assert.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
				assert.Equal(t, metrics(0, 0, 0, 1, 2), m)
			} else {
				assert.Equal(t, 1, calls)
				assert.Same(t, tt.err, err)
				assert.Equal(t, metrics(0, 0, 1, 0, 1), m)
			}
		})
	}
}

func TestRejectionsAreNotRetriedByDefault(t *testing.T) {
	r := newRetry(t, noWait(3))
	rec := record(t, r)
	s := newScript(fail(errRejected))
	_, err := retry.Execute(context.Background(), r, s.call)
	assert.Same(t, errRejected, err)
	assert.Equal(t, 1, s.count())
	assert.Equal(t, []ev{{retry.EventIgnoredError, 0, errRejected, 0}}, events(rec))
}

func TestRejectionsAreRetriedWhenListed(t *testing.T) {
	cfg := noWait(3)
	cfg.RetryRejections = []error{errRejected}
	r := newRetry(t, cfg)
	s := newScript(fail(errRejected), fail(errRejected), ok("PAID"))
	v, err := retry.Execute(context.Background(), r, s.call)
	require.NoError(t, err)
	assert.Equal(t, "PAID", v)
	assert.Equal(t, 3, s.count())
}

func TestNegativeIntervalStopsRetrying(t *testing.T) {
	var asked []int
	r := newRetry(t, retry.Config{MaxAttempts: 5, IntervalFunction: func(attempt int) time.Duration {
		asked = append(asked, attempt)
		if attempt >= 2 {
			return -1
		}
		return 100 * ms
	}})
	rec := record(t, r)
	s := newScript(fail(errGateway))
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		_, err := retry.Execute(context.Background(), r, s.call)
		var mre *retry.MaxRetriesExceededError
		require.ErrorAs(t, err, &mre, "stopping ends the call as exhaustion does")
		assert.Equal(t, retry.MaxRetriesExceededError{Name: "test", Attempts: 2, MaxAttempts: 5, LastErr: errGateway}, *mre)
		assert.EqualError(t, err, "retry: Retry 'test' stopped after 2 of 5 attempts: gateway 503")
		assert.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
		assert.ErrorIs(t, err, errGateway)
		assert.Equal(t, 100*ms, time.Since(start))
	})
	assert.Equal(t, 2, s.count())
	assert.Equal(t, []int{1, 2}, asked)
	assert.Equal(t, metrics(0, 0, 0, 1, 2), r.Metrics())
	assert.Equal(t, []ev{
		{retry.EventRetry, 1, errGateway, 100 * ms},
		{retry.EventError, 2, errGateway, 0},
	}, events(rec))
}

func TestNegativeIntervalStopsResultRetry(t *testing.T) {
	r := newRetry(t, retry.Config{
		MaxAttempts:            5,
		IntervalFunction:       func(int) time.Duration { return -1 },
		RetryOnResultPredicate: func(v any) bool { return v == "PENDING" },
	})
	s := newScript(ok("PENDING"))
	v, err := retry.Execute(context.Background(), r, s.call)
	require.NoError(t, err)
	assert.Equal(t, "PENDING", v)
	assert.Equal(t, 1, s.count())
	assert.Equal(t, metrics(0, 0, 0, 1, 1), r.Metrics())
}

func TestIntervalFunctionSeesFailedAttemptsSoFar(t *testing.T) {
	var asked []int
	r := newRetry(t, retry.Config{MaxAttempts: 4, IntervalFunction: func(attempt int) time.Duration {
		asked = append(asked, attempt)
		return 0
	}})
	_, err := retry.Execute(context.Background(), r, newScript(fail(errGateway)).call)
	require.ErrorIs(t, err, errGateway)
	assert.Equal(t, []int{1, 2, 3}, asked, "never asked after the final attempt")
}

func TestIntervalBiFunctionSeesOutcome(t *testing.T) {
	type seen struct {
		attempt int
		err     error
		result  any
	}
	var got []seen
	r := newRetry(t, retry.Config{
		MaxAttempts: 5,
		IntervalBiFunction: func(attempt int, err error, result any) time.Duration {
			got = append(got, seen{attempt, err, result})
			return 0
		},
		RetryOnResultPredicate: func(v any) bool { return v == "PENDING" },
	})
	v, err := retry.Execute(context.Background(), r, newScript(fail(errGateway), ok("PENDING"), ok("PAID")).call)
	require.NoError(t, err)
	assert.Equal(t, "PAID", v)
	assert.Equal(t, []seen{{1, errGateway, nil}, {2, nil, "PENDING"}}, got)
}

func TestPanicsAreRetriedAsPanicErrors(t *testing.T) {
	r := newRetry(t, noWait(3))
	calls := 0
	v, err := retry.Execute(context.Background(), r, func(context.Context) (string, error) {
		calls++
		if calls < 3 {
			panic("boom")
		}
		return "PAID", nil
	})
	require.NoError(t, err)
	assert.Equal(t, "PAID", v)
	assert.Equal(t, metrics(0, 1, 0, 0, 3), r.Metrics())

	_, err = retry.Execute(context.Background(), r, func(context.Context) (string, error) { panic(errGateway) })
	var pe *safe.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, errGateway, pe.Value)
	assert.ErrorIs(t, err, errGateway)
	assert.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
}

// nilCodeError's Is method reads its receiver, so a typed nil *nilCodeError returned as an
// error makes errors.Is panic.
type nilCodeError struct{ code int }

func (e *nilCodeError) Error() string { return "code error" }
func (e *nilCodeError) Is(error) bool { return e.code == 404 }

// TestErrorWhoseIsMethodPanicsAfterCancellation: telling the caller's cancellation runs the Is
// methods of the attempt's error, user code; a panic there must not crash the caller.
func TestErrorWhoseIsMethodPanicsAfterCancellation(t *testing.T) {
	r := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
	ctx, cancel := context.WithCancel(context.Background())
	var typedNil *nilCodeError
	calls := 0
	_, err := retry.Execute(ctx, r, func(context.Context) (int, error) {
		calls++
		cancel()
		return 0, typedNil
	})
	assert.ErrorIs(t, err, context.Canceled, "no attempt after the cancellation")
	assert.Equal(t, 1, calls)
}
