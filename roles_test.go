package levee_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/keyed"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/throttle"
)

// Every pattern that plays a role satisfies its interface as it is.
var (
	_ levee.PermissionLimiter = (*ratelimiter.RateLimiter)(nil)

	_ levee.Admitter = (*throttle.Throttler)(nil)
	_ levee.Admitter = (*adaptive.Limiter)(nil)
	_ levee.Admitter = (*adaptive.PartitionedLimiter)(nil)
	_ levee.Admitter = (*adaptive.PrioritizedLimiter)(nil)

	_ levee.Permit = circuitbreaker.Permit{}
	_ levee.Permit = throttle.Permit{}
	_ levee.Permit = adaptive.Permit{}

	_ levee.RetryAdvisor = (*adaptive.Limiter)(nil)
	_ levee.RetryAdvisor = (*adaptive.PrioritizedLimiter)(nil)

	_ = keyed.Limiters[string, *ratelimiter.RateLimiter]
	_ = keyed.Admitters[string, *throttle.Throttler]
	_ = keyed.Admitters[string, *adaptive.Limiter]
	_ = keyed.CircuitBreakers[string]
)

func newThrottle(t *testing.T, random float64) *throttle.Throttler {
	t.Helper()
	th, err := throttle.New("throttle", throttle.Config{RecordErrors: []error{errBackend}, Random: func() float64 { return random }})
	require.NoError(t, err)
	return th
}

func newAdaptive(t *testing.T, limit int) *adaptive.Limiter {
	t.Helper()
	l, err := adaptive.New("adaptive", adaptive.Config{InitialLimit: limit, MinLimit: limit, MaxLimit: limit})
	require.NoError(t, err)
	return l
}

// A throttle in the breaker's place sees each retry attempt as one request and sheds the
// third once the backend has rejected two; its refusal is not retried. The adaptive limit in
// the bulkhead's place holds one permit per attempt that ran and gives each back.
func TestDefaultPipelineWithThrottleAndAdaptiveLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := newThrottle(t, 0.5)
		al := newAdaptive(t, 1)
		p := levee.DefaultPipeline[string](levee.Patterns{
			Retry:              newRetry(t, 3, retry.Config{}),
			Admission:          th,
			ConcurrencyLimiter: al,
		}, nil)
		b := &backend{}
		b.failing.Store(true)
		_, err := p.Execute(context.Background(), b.call)
		// Attempt 1: probability 0. Attempt 2: 1/2, not above the draw 0.5. Attempt 3: 2/3.
		require.ErrorIs(t, err, throttle.ErrThrottled)
		assert.NotErrorIs(t, err, errBackend)
		assert.Equal(t, int64(2), b.calls.Load())
		assert.Equal(t, throttle.Metrics{Requests: 2, Accepts: 0, RejectionProbability: 2.0 / 3, Permitted: 2, Throttled: 1}, th.Metrics())
		m := al.Metrics()
		assert.Equal(t, uint64(2), m.Permitted)
		assert.Equal(t, 0, m.InFlight)
	})
}

// A call the adaptive limit refuses never reaches the backend, and the throttle around it
// counts nothing for it: the request was never sent.
func TestAdaptiveRefusalIsNoRequestForTheThrottle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := newThrottle(t, 0.5)
		al := newAdaptive(t, 1)
		p := levee.DefaultPipeline[string](levee.Patterns{Admission: th, ConcurrencyLimiter: al}, nil)
		release := make(chan struct{})
		done := make(chan error)
		go func() {
			_, err := p.Execute(context.Background(), func(context.Context) (string, error) {
				<-release
				return "ok", nil
			})
			done <- err
		}()
		synctest.Wait()
		b := &backend{}
		_, err := p.Execute(context.Background(), b.call)
		require.ErrorIs(t, err, adaptive.ErrLimitExceeded)
		assert.True(t, levee.IsRejection(err))
		assert.Zero(t, b.calls.Load())
		close(release)
		require.NoError(t, <-done)
		assert.Equal(t, throttle.Metrics{Requests: 1, Accepts: 1, Permitted: 2}, th.Metrics())
		m := al.Metrics()
		assert.Equal(t, uint64(1), m.Permitted)
		assert.Equal(t, uint64(1), m.Rejected)
		assert.Equal(t, 0, m.InFlight)
	})
}

// A panic in the call ends an Admitter's permit with OnError and the *PanicError, and a
// caller's own cancellation ends it with Release.
func TestAdmissionEndsThePermitByTheOutcome(t *testing.T) {
	rec := &recordingAdmitter{}
	p := levee.Compose[string]().WithAdmission(rec)
	_, err := p.Execute(context.Background(), func(context.Context) (string, error) { panic("boom") })
	var perr *levee.PanicError
	require.ErrorAs(t, err, &perr)
	ctx, cancel := context.WithCancel(context.Background())
	_, err = p.Execute(ctx, func(ctx context.Context) (string, error) {
		cancel()
		return "", ctx.Err()
	})
	require.ErrorIs(t, err, context.Canceled)
	_, err = p.Execute(context.Background(), func(context.Context) (string, error) { return "ok", nil })
	require.NoError(t, err)
	_, err = p.Execute(context.Background(), func(context.Context) (string, error) { return "", errBackend })
	require.ErrorIs(t, err, errBackend)
	assert.Equal(t, []string{"error: levee: panic: boom", "release", "success", "error: backend down"}, rec.ends)
}

type recordingAdmitter struct{ ends []string }

func (r *recordingAdmitter) Admit(context.Context) (levee.Permit, error) {
	return recordingPermit{r}, nil
}

type recordingPermit struct{ r *recordingAdmitter }

func (p recordingPermit) OnSuccess()        { p.r.ends = append(p.r.ends, "success") }
func (p recordingPermit) OnError(err error) { p.r.ends = append(p.r.ends, "error: "+err.Error()) }
func (p recordingPermit) Release()          { p.r.ends = append(p.r.ends, "release") }

// A PermissionLimiter refuses as the rate limiter does; a *ratelimiter.RateLimiter given as
// one gets the rate limiter's own layer.
func TestPermissionLimiterTakesOnePermissionPerAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl, err := ratelimiter.New("rl", ratelimiter.Config{LimitForPeriod: 2, LimitRefreshPeriod: time.Minute, TimeoutDuration: ratelimiter.NoWait})
		require.NoError(t, err)
		p := levee.DefaultPipeline[string](levee.Patterns{Retry: newRetry(t, 3, retry.Config{}), Limiter: rl}, nil)
		b := &backend{}
		b.failing.Store(true)
		_, err = p.Execute(context.Background(), b.call)
		require.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)
		assert.Equal(t, int64(2), b.calls.Load())
	})
}

// The success path allocates nothing with levee's own patterns, a throttle in the breaker's
// place (its permit is a pointer in size) and a core rate limiter given as a
// PermissionLimiter; an adaptive limit's permit is boxed, once per call.
func TestSuccessPathAllocationsWithRoles(t *testing.T) {
	rl := func() *ratelimiter.RateLimiter {
		rl, err := ratelimiter.New("rl", ratelimiter.Config{LimitForPeriod: 1 << 20, LimitRefreshPeriod: time.Second, TimeoutDuration: ratelimiter.NoWait})
		require.NoError(t, err)
		return rl
	}
	bh, err := bulkhead.New("bh", bulkhead.DefaultConfig())
	require.NoError(t, err)
	ps := levee.Patterns{
		Retry: newRetry(t, 3, retry.Config{}), CircuitBreaker: newBreaker(t, 100), RateLimiter: rl(), Bulkhead: bh,
		Admission: newThrottle(t, 0.5), Limiter: rl(),
	}
	b := &backend{}
	call := b.call
	ctx := context.Background()
	p := levee.DefaultPipeline(ps, newFallback(t, "stale"))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = p.Execute(ctx, call) }))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _, _ = p.ExecuteOutcome(ctx, call) }))

	ps.ConcurrencyLimiter = newAdaptive(t, 10)
	p = levee.DefaultPipeline(ps, newFallback(t, "stale"))
	assert.Equal(t, 1.0, testing.AllocsPerRun(1000, func() { _, _ = p.Execute(ctx, call) }))
	assert.Equal(t, int64(3003), b.calls.Load(), "each AllocsPerRun runs once more to warm up")
}

// A role's field holding a nil pointer is left out, as a nil pattern field is.
func TestNilPointersInRolesAreLeftOut(t *testing.T) {
	var th *throttle.Throttler
	var al *adaptive.Limiter
	var rl *ratelimiter.RateLimiter
	p := levee.DefaultPipeline[string](levee.Patterns{Admission: th, ConcurrencyLimiter: al, Limiter: rl}, nil)
	b := &backend{}
	v, err := p.Execute(context.Background(), b.call)
	require.NoError(t, err)
	assert.Equal(t, "ok", v)
}
