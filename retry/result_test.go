package retry_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/retry"
)

func isPending(v any) bool {
	s, _ := v.(string)
	return len(s) >= 7 && s[:7] == "PENDING"
}

func resultConfig(maxAttempts int) retry.Config {
	return retry.Config{MaxAttempts: maxAttempts, WaitDuration: retry.NoWait, RetryOnResultPredicate: isPending}
}

func TestRetryOnResultUntilAccepted(t *testing.T) {
	r := newRetry(t, resultConfig(3))
	rec := record(t, r)
	s := newScript(ok("PENDING-1"), ok("PENDING-2"), ok("PAID"))
	v, err := retry.Execute(context.Background(), r, s.call)
	require.NoError(t, err)
	assert.Equal(t, "PAID", v)
	assert.Equal(t, 3, s.count())
	assert.Equal(t, metrics(0, 1, 0, 0, 3), r.Metrics())
	assert.Equal(t, []ev{
		{retry.EventRetry, 1, nil, 0},
		{retry.EventRetry, 2, nil, 0},
		{retry.EventSuccess, 2, nil, 0},
	}, events(rec))
}

func TestResultExhaustionReturnsLastResult(t *testing.T) {
	r := newRetry(t, resultConfig(3))
	rec := record(t, r)
	s := newScript(ok("PENDING-1"), ok("PENDING-2"), ok("PENDING-3"))
	v, err := retry.Execute(context.Background(), r, s.call)
	require.NoError(t, err)
	assert.Equal(t, "PENDING-3", v)
	assert.Equal(t, 3, s.count())
	// Each attempt counts once in NumberOfTotalCalls (Resilience4j counts the last one twice).
	assert.Equal(t, metrics(0, 0, 0, 1, 3), r.Metrics())

	got := rec.all()
	require.Len(t, got, 3)
	assert.Equal(t, retry.EventRetry, got[0].Type)
	assert.Equal(t, retry.EventRetry, got[1].Type)
	assert.Equal(t, retry.EventError, got[2].Type)
	assert.Equal(t, 3, got[2].NumberOfRetryAttempts)
	// No error happened: the ERROR event carries the MaxRetriesExceeded placeholder.
	var mre *retry.MaxRetriesExceededError
	require.ErrorAs(t, got[2].LastErr, &mre)
	assert.Equal(t, retry.MaxRetriesExceededError{Name: "test", Attempts: 3, MaxAttempts: 3, LastResult: "PENDING-3"}, *mre)
}

func TestResultExhaustionEventCarriesEarlierError(t *testing.T) {
	r := newRetry(t, resultConfig(3))
	rec := record(t, r)
	v, err := retry.Execute(context.Background(), r, newScript(fail(errGateway), ok("PENDING-2"), ok("PENDING-3")).call)
	require.NoError(t, err)
	assert.Equal(t, "PENDING-3", v)
	assert.Equal(t, []ev{
		{retry.EventRetry, 1, errGateway, 0},
		{retry.EventRetry, 2, nil, 0},
		{retry.EventError, 3, errGateway, 0},
	}, events(rec))
}

func TestFailAfterMaxAttempts(t *testing.T) {
	cfg := resultConfig(3)
	cfg.FailAfterMaxAttempts = true
	r := newRetry(t, cfg)
	rec := record(t, r)
	s := newScript(ok("PENDING-1"), ok("PENDING-2"), ok("PENDING-3"))
	v, err := retry.Execute(context.Background(), r, s.call)

	require.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
	var mre *retry.MaxRetriesExceededError
	require.ErrorAs(t, err, &mre)
	assert.Equal(t, retry.MaxRetriesExceededError{Name: "test", Attempts: 3, MaxAttempts: 3, LastResult: "PENDING-3"}, *mre)
	assert.EqualError(t, err, "retry: Retry 'test' has exhausted all attempts (3)")
	assert.Equal(t, "PENDING-3", v)
	assert.Equal(t, metrics(0, 0, 0, 1, 3), r.Metrics())
	got := rec.all()
	require.Len(t, got, 3)
	assert.Same(t, mre, got[2].LastErr, "the ERROR event carries the error returned")
}

func TestFailAfterMaxAttemptsKeepsEarlierError(t *testing.T) {
	cfg := resultConfig(3)
	cfg.FailAfterMaxAttempts = true
	r := newRetry(t, cfg)
	_, err := retry.Execute(context.Background(), r, newScript(fail(errGateway), ok("PENDING-2"), ok("PENDING-3")).call)
	require.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
	require.ErrorIs(t, err, errGateway)
	var mre *retry.MaxRetriesExceededError
	require.ErrorAs(t, err, &mre)
	assert.Equal(t, "PENDING-3", mre.LastResult)
}

func TestFailAfterMaxAttemptsLeavesAcceptedResultsAlone(t *testing.T) {
	cfg := resultConfig(3)
	cfg.FailAfterMaxAttempts = true
	r := newRetry(t, cfg)
	v, err := retry.Execute(context.Background(), r, newScript(ok("PENDING-1"), ok("PAID")).call)
	require.NoError(t, err)
	assert.Equal(t, "PAID", v)
	assert.Equal(t, metrics(0, 1, 0, 0, 2), r.Metrics())
}

func TestConsumeResultBeforeRetryAttempt(t *testing.T) {
	type consumed struct {
		attempt int
		result  any
	}
	var got []consumed
	cfg := resultConfig(3)
	cfg.ConsumeResultBeforeRetryAttempt = func(attempt int, result any) {
		got = append(got, consumed{attempt, result})
	}
	r := newRetry(t, cfg)
	_, err := retry.Execute(context.Background(), r, newScript(ok("PENDING-1"), ok("PENDING-2"), ok("PENDING-3")).call)
	require.NoError(t, err)
	// Called before each retry's wait; not for the final result, which the caller gets.
	assert.Equal(t, []consumed{{1, "PENDING-1"}, {2, "PENDING-2"}}, got)
}

func TestResultPredicateSeesTypedValues(t *testing.T) {
	type receipt struct{ Status string }
	var seen []any
	r := newRetry(t, retry.Config{
		MaxAttempts:  2,
		WaitDuration: retry.NoWait,
		RetryOnResultPredicate: func(v any) bool {
			seen = append(seen, v)
			return v.(*receipt).Status == "PENDING"
		},
	})
	first := &receipt{"PENDING"}
	second := &receipt{"PAID"}
	calls := 0
	v, err := retry.Execute(context.Background(), r, func(context.Context) (*receipt, error) {
		calls++
		if calls == 1 {
			return first, nil
		}
		return second, nil
	})
	require.NoError(t, err)
	assert.Same(t, second, v)
	assert.Equal(t, []any{first, second}, seen)
}

func TestResultPredicateNotAskedAboutErrors(t *testing.T) {
	asked := 0
	r := newRetry(t, retry.Config{MaxAttempts: 2, WaitDuration: retry.NoWait,
		RetryOnResultPredicate: func(any) bool { asked++; return false }})
	_, err := retry.Execute(context.Background(), r, newScript(fail(errGateway), ok("PAID")).call)
	require.NoError(t, err)
	assert.Equal(t, 1, asked)
}
