package leveegrpc_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveegrpc"
	"github.com/levee-go/levee/retry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"pgregory.net/rapid"
)

func TestClassificationOfEveryCode(t *testing.T) {
	retryable := map[codes.Code]bool{codes.Unavailable: true, codes.ResourceExhausted: true}
	failure := map[codes.Code]bool{
		codes.Unknown: true, codes.DeadlineExceeded: true, codes.ResourceExhausted: true,
		codes.Internal: true, codes.Unavailable: true, codes.DataLoss: true,
	}
	for c := codes.Canceled; c <= codes.Unauthenticated; c++ {
		err := status.Error(c, "x")
		wrapped := fmt.Errorf("wrapped: %w", err)
		assert.Equal(t, retryable[c], leveegrpc.IsRetryable(err), c.String())
		assert.Equal(t, retryable[c], leveegrpc.IsRetryable(wrapped), c.String())
		assert.Equal(t, failure[c], leveegrpc.IsFailure(err), c.String())
		assert.Equal(t, failure[c], leveegrpc.IsFailure(wrapped), c.String())
		assert.Equal(t, c, leveegrpc.Code(wrapped))
	}
	assert.False(t, leveegrpc.IsRetryable(nil))
	assert.False(t, leveegrpc.IsFailure(nil))
	plain := errors.New("no status")
	assert.False(t, leveegrpc.IsRetryable(plain))
	assert.True(t, leveegrpc.IsFailure(plain), "an error without a status is UNKNOWN")
}

func TestCodesPredicates(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		set := rapid.SliceOf(rapid.Uint32Range(0, 70)).Draw(t, "set")
		c := codes.Code(rapid.Uint32Range(0, 70).Draw(t, "code"))
		cs := make([]codes.Code, len(set))
		want := false
		for i, s := range set {
			cs[i] = codes.Code(s)
			want = want || cs[i] == c
		}
		err := status.Error(c, "x")
		if c == codes.OK {
			want = false // status.Error with OK is nil
		}
		if got := leveegrpc.RecordCodes(cs...)(err); got != want {
			t.Fatalf("RecordCodes(%v)(%v) = %v, want %v", cs, c, got, want)
		}
		if got := leveegrpc.RetryCodes(cs...)(err); got != want {
			t.Fatalf("RetryCodes(%v)(%v) = %v, want %v", cs, c, got, want)
		}
	})
}

func TestRetryConfigWaits(t *testing.T) {
	cause := status.Error(codes.Unavailable, "x")
	for _, c := range []struct {
		name string
		cfg  retry.Config
		want []time.Duration // waits before retries 1, 2, 3
	}{
		{"default", retry.Config{}, []time.Duration{500 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond}},
		{"no wait", retry.Config{WaitDuration: retry.NoWait}, []time.Duration{0, 0, 0}},
		{"wait", retry.Config{WaitDuration: time.Second}, []time.Duration{time.Second, time.Second, time.Second}},
		{"interval", retry.Config{IntervalFunction: func(a int) time.Duration { return time.Duration(a) * time.Second }}, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}},
		{"bi", retry.Config{IntervalBiFunction: func(a int, err error, _ any) time.Duration {
			return time.Duration(a) * time.Duration(len(err.Error())) * time.Millisecond // "rpc error: code = Unavailable desc = x": 38 bytes
		}}, []time.Duration{38 * time.Millisecond, 76 * time.Millisecond, 114 * time.Millisecond}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := leveegrpc.RetryConfig(c.cfg)
			_, err := retry.New("x", cfg)
			require.NoError(t, err)
			require.NotNil(t, cfg.IntervalBiFunction)
			assert.Equal(t, time.Duration(0), cfg.WaitDuration)
			for i, w := range c.want {
				assert.Equal(t, w, cfg.IntervalBiFunction(i+1, cause, nil))
			}
			assert.True(t, cfg.RetryOnErrorPredicate(cause))
		})
	}
}

func TestRetryConfigKeepsWhatNewRefuses(t *testing.T) {
	_, err := retry.New("x", leveegrpc.RetryConfig(retry.Config{WaitDuration: -2}))
	assert.EqualError(t, err, "retry: WaitDuration must be >= 0 (or NoWait for no wait), got -2ns")
	_, err = retry.New("x", leveegrpc.RetryConfig(retry.Config{WaitDuration: time.Second, IntervalFunction: func(int) time.Duration { return 0 }}))
	assert.EqualError(t, err, "retry: set WaitDuration or IntervalFunction, not both")
}

func TestRetryConfigKeepsTheCallersClassification(t *testing.T) {
	own := func(error) bool { return false }
	cfg := leveegrpc.RetryConfig(retry.Config{RetryOnErrorPredicate: own})
	assert.False(t, cfg.RetryOnErrorPredicate(status.Error(codes.Unavailable, "x")))
	sentinel := errors.New("mine")
	cfg = leveegrpc.RetryConfig(retry.Config{RetryErrors: []error{sentinel}})
	assert.Nil(t, cfg.RetryOnErrorPredicate)
}

func TestCircuitBreakerConfig(t *testing.T) {
	cfg := leveegrpc.CircuitBreakerConfig(circuitbreaker.Config{SlidingWindowSize: 7})
	assert.Equal(t, 7, cfg.SlidingWindowSize)
	assert.True(t, cfg.RecordErrorPredicate(status.Error(codes.Internal, "x")))
	assert.False(t, cfg.RecordErrorPredicate(status.Error(codes.NotFound, "x")))
	assert.True(t, cfg.IgnoreErrorPredicate(status.Error(codes.NotFound, "x")))
	assert.False(t, cfg.IgnoreErrorPredicate(status.Error(codes.Internal, "x")))

	sentinel := errors.New("mine")
	cfg = leveegrpc.CircuitBreakerConfig(circuitbreaker.Config{RecordErrors: []error{sentinel}, IgnoreErrors: []error{sentinel}})
	assert.Nil(t, cfg.RecordErrorPredicate)
	assert.Nil(t, cfg.IgnoreErrorPredicate)
}

func TestPushbackIntervalWithoutPushback(t *testing.T) {
	f := leveegrpc.PushbackInterval(nil)
	assert.Equal(t, time.Duration(0), f(1, status.Error(codes.Unavailable, "x"), nil))
	wait, found := leveegrpc.Pushback(status.Error(codes.Unavailable, "x"))
	assert.False(t, found)
	assert.Equal(t, time.Duration(0), wait)
}
