package bench

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	fscircuitbreaker "github.com/failsafe-go/failsafe-go/circuitbreaker"
	fstimeout "github.com/failsafe-go/failsafe-go/timeout"
	"github.com/sony/gobreaker/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/timelimiter"
)

func impls(cases []Case) []string {
	names := make([]string, len(cases))
	for i, c := range cases {
		names[i] = c.Impl
	}
	return names
}

// doAll runs every case n times and returns the last error of each, by implementation.
func doAll(t *testing.T, cases []Case, n int) map[string]error {
	t.Helper()
	errs := make(map[string]error, len(cases))
	for _, c := range cases {
		for range n {
			errs[c.Impl] = c.Do(context.Background())
		}
	}
	return errs
}

func TestBreakerCasesAgreeOnEveryLoad(t *testing.T) {
	rejection := map[string]error{
		"levee":     circuitbreaker.ErrCallNotPermitted,
		"gobreaker": gobreaker.ErrOpenState,
		"failsafe":  fscircuitbreaker.ErrOpen,
	}
	for _, w := range []Window{CountWindow, TimeWindow} {
		t.Run(w.String(), func(t *testing.T) {
			cases, err := BreakerCases(w, BreakerSuccess)
			require.NoError(t, err)
			require.Equal(t, []string{"levee", "gobreaker", "failsafe"}, impls(cases))
			for impl, err := range doAll(t, cases, 300) {
				assert.NoError(t, err, impl)
			}

			// Failing calls are recorded but never open the breaker: every one of 300 (three
			// windows' worth) still runs and returns the call's own error.
			cases, err = BreakerCases(w, BreakerFailure)
			require.NoError(t, err)
			for impl, err := range doAll(t, cases, 300) {
				assert.ErrorIs(t, err, ErrBoom, impl)
			}

			cases, err = BreakerCases(w, BreakerRejected)
			require.NoError(t, err)
			for impl, err := range doAll(t, cases, 3) {
				assert.ErrorIs(t, err, rejection[impl], impl)
			}
		})
	}
}

// breakerProbe is one breaker as the threshold test drives it.
type breakerProbe struct {
	impl string
	do   func(Work) error
	open func() bool
}

func breakerProbes(t *testing.T, w Window) []breakerProbe {
	t.Helper()
	lv, err := leveeBreaker(w, BreakerSuccess)
	require.NoError(t, err)
	gb, err := gobreakerBreaker(w, BreakerSuccess)
	require.NoError(t, err)
	fs, err := failsafeBreaker(w, BreakerSuccess)
	require.NoError(t, err)
	ctx := context.Background()
	return []breakerProbe{
		{"levee", func(wk Work) error { _, err := circuitbreaker.Execute(ctx, lv, wk.Call); return err },
			func() bool { return lv.State() == circuitbreaker.Open }},
		{"gobreaker", func(wk Work) error { _, err := gb.Execute(wk.Plain); return err },
			func() bool { return gb.State() == gobreaker.StateOpen }},
		{"failsafe", func(wk Work) error { _, err := fs.Get(wk.Plain); return err },
			func() bool {
				return errors.Is(func() error { _, err := fs.Get(succeedPlain); return err }(), fscircuitbreaker.ErrOpen)
			}},
	}
}

// The breakers compared have the same thresholds: 50 successes then 49 failures leave each of
// them closed; the 50th failure, the 100th call, opens each of them.
func TestBreakersOpenAtTheSameCall(t *testing.T) {
	for _, w := range []Window{CountWindow, TimeWindow} {
		t.Run(w.String(), func(t *testing.T) {
			for _, p := range breakerProbes(t, w) {
				for range 50 {
					require.NoError(t, p.do(Succeed), p.impl)
				}
				for range 49 {
					require.ErrorIs(t, p.do(Fail), ErrBoom, p.impl)
				}
				assert.False(t, p.open(), "%s open after 99 calls", p.impl)
				require.ErrorIs(t, p.do(Fail), ErrBoom, p.impl)
				assert.True(t, p.open(), "%s closed after 50 failures in 100 calls", p.impl)
			}
		})
	}
}

func TestLimiterCasesAgree(t *testing.T) {
	cases, err := LimiterCases(LimiterAvailable)
	require.NoError(t, err)
	defer CloseAll(cases)
	require.Equal(t, []string{"levee", "xrate-allow", "xrate-wait", "uber", "failsafe"}, impls(cases))
	for impl, err := range doAll(t, cases, 500) {
		assert.NoError(t, err, impl)
	}

	cases, err = LimiterCases(LimiterExhausted)
	require.NoError(t, err)
	defer CloseAll(cases)
	require.Equal(t, []string{"levee", "xrate-allow", "xrate-wait", "failsafe"}, impls(cases))
	start := time.Now()
	errs := doAll(t, cases, 3)
	assert.Less(t, time.Since(start), time.Second, "every refusal is immediate")
	assert.ErrorIs(t, errs["levee"], ratelimiter.ErrRequestNotPermitted)
	assert.ErrorIs(t, errs["xrate-allow"], ErrRefused)
	assert.ErrorContains(t, errs["xrate-wait"], "would exceed context deadline")
	assert.ErrorIs(t, errs["failsafe"], ErrRefused)
}

// Each bulkhead admits exactly BulkheadLimit calls at once and refuses the next one.
func TestBulkheadsAdmitTheSameNumberOfCalls(t *testing.T) {
	bhs, err := newBulkheads()
	require.NoError(t, err)
	for _, bh := range bhs {
		for i := range BulkheadLimit {
			require.NoError(t, bh.acquire(context.Background()), "%s permit %d", bh.impl, i+1)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		err := bh.acquire(ctx)
		cancel()
		assert.Error(t, err, "%s admitted call %d", bh.impl, BulkheadLimit+1)
		for range BulkheadLimit {
			bh.release()
		}
		require.NoError(t, bh.acquire(context.Background()), "%s after release", bh.impl)
		bh.release()
	}

	cases, err := BulkheadCases()
	require.NoError(t, err)
	for impl, err := range doAll(t, cases, 100) {
		assert.NoError(t, err, impl)
	}
}

// counted returns w with a counter of its calls.
func counted(w Work) (Work, *atomic.Int64) {
	var n atomic.Int64
	return Work{
		Call:  func(ctx context.Context) (int, error) { n.Add(1); return w.Call(ctx) },
		Plain: func() (int, error) { n.Add(1); return w.Plain() },
	}, &n
}

func TestRetryCasesMakeTheSameAttempts(t *testing.T) {
	for _, tc := range []struct {
		work     Work
		attempts int64 // per retrying case; the direct call makes one
		wantErr  bool
	}{
		{Succeed, 1, false},
		{Fail, RetryAttempts, true},
	} {
		work, n := counted(tc.work)
		cases, err := RetryCases(work)
		require.NoError(t, err)
		require.Equal(t, []string{"levee", "failsafe", "backoff", "direct"}, impls(cases))
		for _, c := range cases {
			n.Store(0)
			err := c.Do(context.Background())
			want := tc.attempts
			if c.Impl == "direct" {
				want = 1
			}
			assert.Equal(t, want, n.Load(), c.Impl)
			if tc.wantErr {
				assert.ErrorIs(t, err, ErrBoom, c.Impl)
			} else {
				assert.NoError(t, err, c.Impl)
			}
		}
	}
}

func TestTimeLimiterCasesPassASuccess(t *testing.T) {
	cases, err := TimeLimiterCases(Succeed, time.Second)
	require.NoError(t, err)
	require.Equal(t, []string{"levee", "failsafe", "ctxtimeout"}, impls(cases))
	for impl, err := range doAll(t, cases, 10) {
		assert.NoError(t, err, impl)
	}
}

// blockUntil is a call that ignores its context and returns ErrBoom once release is closed.
func blockUntil(release <-chan struct{}) Work {
	return Work{
		Call:  func(context.Context) (int, error) { <-release; return 0, ErrBoom },
		Plain: func() (int, error) { <-release; return 0, ErrBoom },
	}
}

// With a call that ignores its context, levee answers at the deadline while the call still
// runs; failsafe-go's timeout and a bare context.WithTimeout answer only once it returns. Each
// case runs in a synctest bubble, so the deadline is fake time and the bubble ends only once
// the abandoned call has returned.
func TestOnlyLeveeAnswersAtTheDeadline(t *testing.T) {
	const timeout = 20 * time.Millisecond
	for _, impl := range []string{"levee", "failsafe", "ctxtimeout"} {
		t.Run(impl, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				cases, err := TimeLimiterCases(blockUntil(release), timeout)
				require.NoError(t, err)
				var c Case
				for _, c = range cases {
					if c.Impl == impl {
						break
					}
				}
				done := make(chan error, 1)
				go func() { done <- c.Do(context.Background()) }()

				var err2 error
				select {
				case err2 = <-done:
				case <-time.After(10 * timeout):
				}
				close(release)
				if impl == "levee" {
					require.ErrorIs(t, err2, timelimiter.ErrTimeout, "levee answers while the call runs")
					require.ErrorIs(t, err2, context.DeadlineExceeded)
					return
				}
				require.NoError(t, err2, "%s answered while the call still ran", impl)
				err2 = <-done
				if impl == "failsafe" {
					assert.ErrorIs(t, err2, fstimeout.ErrExceeded)
				} else {
					assert.ErrorIs(t, err2, ErrBoom)
				}
			})
		})
	}
}

func TestPipelinesAgree(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		work     Work
		want     int
		attempts int64
	}{
		{Succeed, Result, 1},
		{Fail, FallbackResult, RetryAttempts}, // retried, then answered by the fallback
	} {
		p, err := NewPipeline()
		require.NoError(t, err)
		work, n := counted(tc.work)

		v, err := p.Levee.Execute(ctx, work.Call)
		require.NoError(t, err)
		assert.Equal(t, tc.want, v, "levee")
		assert.Equal(t, tc.attempts, n.Swap(0), "levee")

		v, err = p.Failsafe.Get(work.Plain)
		require.NoError(t, err)
		assert.Equal(t, tc.want, v, "failsafe")
		assert.Equal(t, tc.attempts, n.Swap(0), "failsafe")

		require.Equal(t, []string{"levee", "failsafe", "direct"}, impls(PipelineCases(p, tc.work)))
	}
}
