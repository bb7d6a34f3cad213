package retry_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/retry"
)

func TestPermanentStopsAtOnceWithTheUnmarkedError(t *testing.T) {
	tests := []struct {
		name     string
		cfg      retry.Config
		script   []outcome
		wantN    int
		wantErr  error
		wantWith int64 // earlier retries: counted as failed without retry all the same
	}{
		{"first attempt", noWait(5), []outcome{fail(retry.Permanent(errInvalid))}, 1, errInvalid, 0},
		{"after retries", noWait(5), []outcome{fail(errGateway), fail(errGateway), fail(retry.Permanent(errInvalid))}, 3, errInvalid, 0},
		{"wins over RetryErrors", retry.Config{MaxAttempts: 5, WaitDuration: retry.NoWait, RetryErrors: []error{errGateway}},
			[]outcome{fail(retry.Permanent(errGateway))}, 1, errGateway, 0},
		{"wins over RetryOnErrorPredicate", retry.Config{MaxAttempts: 5, WaitDuration: retry.NoWait,
			RetryOnErrorPredicate: func(error) bool { return true }}, []outcome{fail(retry.Permanent(errGateway))}, 1, errGateway, 0},
		{"wins over RetryRejections", retry.Config{MaxAttempts: 5, WaitDuration: retry.NoWait, RetryRejections: []error{errRejected}},
			[]outcome{fail(retry.Permanent(errRejected))}, 1, errRejected, 0},
		{"a marked error on the last attempt", noWait(2), []outcome{fail(errGateway), fail(retry.Permanent(errGateway))}, 2, errGateway, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRetry(t, tt.cfg)
			rec := record(t, r)
			s := newScript(tt.script...)
			_, err := retry.Execute(context.Background(), r, s.call)
			assert.True(t, err == tt.wantErr, "the error itself, unmarked: got %#v", err)
			assert.Equal(t, tt.wantN, s.count())
			assert.Equal(t, metrics(0, 0, 1, 0, int64(tt.wantN)), r.Metrics())
			events := rec.all()
			require.Len(t, events, tt.wantN)
			last := events[tt.wantN-1]
			assert.Equal(t, retry.EventIgnoredError, last.Type)
			assert.True(t, last.LastErr == tt.wantErr)
			assert.Equal(t, tt.wantN-1, last.NumberOfRetryAttempts)
		})
	}
}

func TestPermanentWrappedStopsWithTheOuterError(t *testing.T) {
	r := newRetry(t, noWait(5))
	outer := fmt.Errorf("charge: %w", retry.Permanent(errGateway))
	s := newScript(fail(outer))
	_, err := retry.Execute(context.Background(), r, s.call)
	assert.True(t, err == outer, "the outer error unchanged")
	assert.ErrorIs(t, err, errGateway)
	assert.EqualError(t, err, "charge: gateway 503")
	assert.Equal(t, 1, s.count())

	joined := errors.Join(errInvalid, retry.Permanent(errGateway))
	s = newScript(fail(joined))
	_, err = retry.Execute(context.Background(), r, s.call)
	assert.True(t, err == joined)
	assert.Equal(t, 1, s.count())
}

func TestPermanentValue(t *testing.T) {
	assert.NoError(t, retry.Permanent(nil))
	marked := retry.Permanent(errGateway)
	assert.EqualError(t, marked, "gateway 503")
	assert.True(t, errors.Unwrap(marked) == errGateway)
	twice := retry.Permanent(marked)
	assert.True(t, twice == marked, "marking twice marks once")
	assert.True(t, errors.Unwrap(twice) == errGateway)
	var he *httpError
	assert.ErrorAs(t, retry.Permanent(&httpError{Status: 400}), &he)
	assert.Equal(t, 400, he.Status)
}

func TestPermanentWithContextByHand(t *testing.T) {
	r := newRetry(t, noWait(3))
	c := r.NewContext()
	wait, again := c.OnError(retry.Permanent(errInvalid))
	assert.False(t, again)
	assert.Zero(t, wait)
	assert.True(t, c.Err() == errInvalid)
	assert.Equal(t, 0, c.Attempts())
}

func TestPermanentPathAllocatesNothing(t *testing.T) {
	r := newRetry(t, retry.DefaultConfig())
	ctx := context.Background()
	marked := retry.Permanent(errInvalid)
	allocs := testing.AllocsPerRun(1000, func() {
		_, err := retry.Execute(ctx, r, func(context.Context) (int, error) { return 0, marked })
		if err != errInvalid {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
}
