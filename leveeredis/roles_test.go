package leveeredis_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveehttp"
	"github.com/levee-go/levee/leveeredis"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/stream"
)

// The shared patterns fill the core's roles, as the local ones do.
var (
	_ levee.Admitter          = (*leveeredis.SharedBreaker)(nil)
	_ levee.RetryAdvisor      = (*leveeredis.SharedBreaker)(nil)
	_ levee.PermissionLimiter = (*leveeredis.RateLimiter)(nil)
	_ levee.RetryAdvisor      = (*leveeredis.RateLimiter)(nil)
)

// patientLimiter is a shared limiter for the role tests on a loaded machine: a StoreTimeout of
// 2s and a client that waits as long, so that no check of theirs fails for slowness, and its
// scripts loaded.
func patientLimiter(t *testing.T, s *redisServer, name string, cfg leveeredis.Config) *leveeredis.RateLimiter {
	t.Helper()
	o := limiterOptions(s.addr())
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = 2*time.Second, 2*time.Second, 2*time.Second, 2*time.Second
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	cfg.StoreTimeout = 2 * time.Second
	rl := newShared(t, c, name, cfg)
	require.NoError(t, rl.Warm(t.Context()))
	return rl
}

// wantRetryAfter is the Retry-After of a wait that ends at end: whole seconds rounded up, as
// counted at the instants before and after the request.
func wantRetryAfter(before, after, end time.Time) (lo, hi int) {
	secs := func(d time.Duration) int { return max(int((d+time.Second-1)/time.Second), 1) }
	return secs(end.Sub(after)), secs(end.Sub(before))
}

func cycleEnd(period time.Duration) time.Time {
	now := time.Now().UnixNano()
	return time.Unix(0, now-now%int64(period)+int64(period))
}

// A shared breaker in a Patterns' Admission opens on the pipeline's failures, its OPEN reaches
// the other replica's pipeline through Redis, and both refuse with the breaker's rejection and
// say when to come back.
func TestRedisSharedBreakerInPatterns(t *testing.T) {
	s := startRedis(t)
	a := newReplica(t, s.client(), fleetConfig(), leveeredis.BreakerConfig{})
	defer a.close(t)
	b := newReplica(t, s.client(), fleetConfig(), leveeredis.BreakerConfig{})
	defer b.close(t)
	subscribed(t, s, 2)
	pa := levee.DefaultPipeline[int](levee.Patterns{Admission: a.sb}, nil)
	pb := levee.DefaultPipeline[int](levee.Patterns{Admission: b.sb}, nil)
	ctx := t.Context()
	for range 4 {
		_, err := pa.Execute(ctx, func(context.Context) (int, error) { return 0, errBoom })
		require.ErrorIs(t, err, errBoom)
	}
	require.Equal(t, circuitbreaker.Open, a.cb.State())
	eventually(t, func() bool { return b.cb.State() == circuitbreaker.Open }, "the OPEN reaches the other replica")
	calls := 0
	for _, p := range []*levee.Pipeline[int]{pa, pb} {
		_, err := p.Execute(ctx, func(context.Context) (int, error) { calls++; return 1, nil })
		var refused *circuitbreaker.CallNotPermittedError
		require.ErrorAs(t, err, &refused)
		assert.Equal(t, circuitbreaker.Open, refused.State)
		assert.True(t, levee.IsRejection(err))
	}
	assert.Equal(t, 0, calls, "a refused call does not run")
	for _, r := range []*replica{a, b} {
		wait := r.sb.RetryAfter()
		later := r.cb.RemainingWaitInOpenState()
		assert.LessOrEqual(t, later, wait, "the OPEN breaker's remaining wait")
		assert.Less(t, wait-later, 100*time.Millisecond)
		assert.Greater(t, wait, 9*time.Second)
		assert.LessOrEqual(t, wait, 10*time.Second+1)
	}
	m := a.cb.Metrics()
	assert.Equal(t, 4, m.NumberOfFailedCalls)
	assert.Equal(t, 1, m.NumberOfNotPermittedCalls)
	assert.Equal(t, 1, b.cb.Metrics().NumberOfNotPermittedCalls)
	_, err := (*leveeredis.SharedBreaker)(nil).Admit(ctx)
	require.ErrorIs(t, err, circuitbreaker.ErrNilCircuitBreaker)
	assert.Equal(t, time.Duration(0), (*leveeredis.SharedBreaker)(nil).RetryAfter())
}

// Admit's permit is the local breaker's: Release records nothing, OnError an error the
// breaker records, OnSuccess a success; in CLOSED Admit makes no round trip and allocates
// only the permit's box.
func TestRedisSharedBreakerAdmitPermit(t *testing.T) {
	s := startRedis(t)
	a := newReplica(t, s.client(), fleetConfig(), leveeredis.BreakerConfig{})
	defer a.close(t)
	ctx := t.Context()
	p, err := a.sb.Admit(ctx)
	require.NoError(t, err)
	p.Release()
	p, err = a.sb.Admit(nil) //nolint:staticcheck // a nil ctx is Background
	require.NoError(t, err)
	p.OnSuccess()
	p, err = a.sb.Admit(ctx)
	require.NoError(t, err)
	p.OnError(errBoom)
	m := a.cb.Metrics()
	assert.Equal(t, [2]int{1, 1}, [2]int{m.NumberOfSuccessfulCalls, m.NumberOfFailedCalls})
	assert.Equal(t, time.Duration(0), a.sb.RetryAfter())
	allocs := testing.AllocsPerRun(100, func() {
		p, err := a.sb.Admit(ctx)
		if err != nil {
			panic(err)
		}
		p.Release()
	})
	assert.Equal(t, 1.0, allocs)
}

// A shared limiter in a Patterns' Limiter takes one permission of the fleet's limit per call
// and its refusal says when the next cycle starts; a second replica shares the same limit.
func TestRedisSharedLimiterInPatterns(t *testing.T) {
	s := startRedis(t)
	period := longCycle(t)
	cfg := leveeredis.Config{LimitForPeriod: 3, LimitRefreshPeriod: period, TimeoutDuration: ratelimiter.NoWait}
	a := patientLimiter(t, s, "patterns", cfg)
	b := patientLimiter(t, s, "patterns", cfg)
	ctx := t.Context()
	calls := 0
	call := func(context.Context) (int, error) { calls++; return calls, nil }
	for i, rl := range []*leveeredis.RateLimiter{a, b, a} {
		v, err := levee.DefaultPipeline[int](levee.Patterns{Limiter: rl}, nil).Execute(ctx, call)
		require.NoError(t, err, "call %d", i)
		assert.Equal(t, i+1, v)
	}
	end := cycleEnd(period)
	for _, rl := range []*leveeredis.RateLimiter{a, b} {
		before := time.Now()
		_, err := levee.DefaultPipeline[int](levee.Patterns{Limiter: rl}, nil).Execute(ctx, call)
		after := time.Now()
		require.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)
		assert.True(t, levee.IsRejection(err))
		wait := rl.RetryAfter()
		assert.Equal(t, rl.Metrics().NanosToWait.Truncate(time.Millisecond), wait.Truncate(time.Millisecond))
		assert.LessOrEqual(t, wait, end.Sub(before))
		assert.GreaterOrEqual(t, wait, end.Sub(after)-time.Second, "the next cycle's start, on Redis's clock")
	}
	assert.Equal(t, 3, calls)
	assert.Equal(t, time.Duration(0), (*leveeredis.RateLimiter)(nil).RetryAfter())
}

// Behind leveehttp's middleware on loopback, the shared limiter answers its refusals 429 with
// the Retry-After of the fleet's next cycle, and the shared breaker (in the ConcurrencyLimiter
// slot, which takes any levee.Admitter) opens on the handler's panics and answers 503 with the
// Retry-After of its OPEN wait.
func TestRedisSharedPatternsBehindHTTPServer(t *testing.T) {
	s := startRedis(t)
	period := longCycle(t)
	rl := patientLimiter(t, s, "http", leveeredis.Config{
		LimitForPeriod: 2, LimitRefreshPeriod: period, TimeoutDuration: ratelimiter.NoWait,
	})
	br := newReplica(t, s.client(), fleetConfig(), leveeredis.BreakerConfig{})
	defer br.close(t)

	get := func(url string) (*http.Response, time.Time, time.Time) {
		before := time.Now()
		resp, err := http.Get(url)
		require.NoError(t, err)
		after := time.Now()
		require.NoError(t, resp.Body.Close())
		return resp, before, after
	}

	limited, err := leveehttp.Middleware(leveehttp.ServerConfig{Limiter: rl})
	require.NoError(t, err)
	srv := httptest.NewServer(limited(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})))
	defer srv.Close()
	for range 2 {
		resp, _, _ := get(srv.URL)
		assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	}
	end := cycleEnd(period)
	resp, before, after := get(srv.URL)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	lo, hi := wantRetryAfter(before, after, end)
	got, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, got, lo)
	assert.LessOrEqual(t, got, hi)
	assert.Greater(t, got, int((period-time.Minute)/time.Second)-24*3600+1, "hours, not the default second")

	guarded, err := leveehttp.Middleware(leveehttp.ServerConfig{ConcurrencyLimiter: br.sb})
	require.NoError(t, err)
	var served int
	srv2 := httptest.NewServer(guarded(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		served++
		panic(errors.New("handler failed"))
	})))
	defer srv2.Close()
	srv2.Config.ErrorLog = nil
	for range 4 {
		resp, _, _ := get(srv2.URL)
		assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	}
	require.Equal(t, circuitbreaker.Open, br.cb.State())
	resp, before, after = get(srv2.URL)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	lo, hi = wantRetryAfter(before, after, before.Add(10*time.Second))
	got, err = strconv.Atoi(resp.Header.Get("Retry-After"))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, got, lo-1)
	assert.LessOrEqual(t, got, hi)
	assert.Equal(t, 4, served, "the refused request never reached the handler")
	assert.Equal(t, 4, br.cb.Metrics().NumberOfFailedCalls)
}

// A stream paused by the shared limiter's refusal waits for the fleet's next cycle (its
// RetryAfter) and then goes on: every element is called once, none answered by a refusal.
func TestRedisSharedLimiterPausesStream(t *testing.T) {
	s := startRedis(t)
	period := 300 * time.Millisecond
	rl := patientLimiter(t, s, "stream", leveeredis.Config{
		LimitForPeriod: 2, LimitRefreshPeriod: period, TimeoutDuration: ratelimiter.NoWait,
		FallbackLimitForPeriod: 1,
	})
	p := levee.DefaultPipeline[int](levee.Patterns{Limiter: rl}, nil)
	in := make(chan int, 6)
	for i := range 6 {
		in <- i
	}
	close(in)
	var at []time.Time
	out, err := stream.Map(t.Context(), in, p, func(_ context.Context, v int) (int, error) {
		at = append(at, time.Now())
		return v * 10, nil
	}, stream.PauseWhileOpen(10*time.Second))
	require.NoError(t, err)
	var got []int
	for r := range out {
		require.NoError(t, r.Err)
		assert.False(t, r.Fallback)
		got = append(got, r.Value)
	}
	assert.Equal(t, []int{0, 10, 20, 30, 40, 50}, got)
	require.Len(t, at, 6)
	cycles := map[int64]int{}
	for _, a := range at {
		cycles[a.UnixNano()/int64(period)]++
	}
	for c, n := range cycles {
		assert.LessOrEqual(t, n, 2, "cycle %d admits at most the limit", c)
	}
	assert.GreaterOrEqual(t, len(cycles), 3, "6 calls under a limit of 2 take at least 3 cycles")
	m := rl.Metrics()
	assert.Equal(t, uint64(6), m.Permitted)
	assert.Equal(t, uint64(0), m.LocalPermitted+m.FailOpenPermitted)
}
