package leveeredis_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeredis"
	"github.com/levee-go/levee/ratelimiter"
)

// Three replicas × eight goroutines, each taking one permission after another and waiting up to
// 200ms: every cycle admits exactly its limit, none more.
func TestCyclesExactUnderContention(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := startMini(t)
		const limit, period, cycles = 10, 50 * time.Millisecond, 20
		start := time.Now()
		end := start.Add(cycles * period)
		var mu sync.Mutex
		perCycle := map[int64]int{}
		var wg sync.WaitGroup
		for range 3 {
			rl := newShared(t, m.client(t), "hot", leveeredis.Config{
				LimitForPeriod: limit, LimitRefreshPeriod: period, TimeoutDuration: 200 * time.Millisecond,
				FailureMode: leveeredis.FailClosed,
			})
			for range 8 {
				wg.Go(func() {
					ctx, cancel := context.WithDeadline(t.Context(), end)
					defer cancel()
					for {
						if err := rl.AcquirePermission(ctx, 1); err != nil {
							require.True(t, errors.Is(err, context.DeadlineExceeded) ||
								errors.Is(err, ratelimiter.ErrRequestNotPermitted), "%v", err)
							if ctx.Err() != nil {
								return
							}
							time.Sleep(5 * time.Millisecond) // refused: try again a little later
							continue
						}
						mu.Lock()
						perCycle[time.Since(start).Nanoseconds()/period.Nanoseconds()]++
						mu.Unlock()
					}
				})
			}
		}
		wg.Wait()
		want := map[int64]int{}
		for c := range int64(cycles) {
			want[c] = limit
		}
		assert.Equal(t, want, perCycle)
	})
}

// A waiter whose context ends gives its reservation back: the next caller gets that cycle.
func TestWaiterGivesReservationBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, rl := startShared(t, "back", leveeredis.Config{
			LimitForPeriod: 1, LimitRefreshPeriod: 100 * time.Millisecond, TimeoutDuration: time.Second,
			FallbackLimitForPeriod: 1,
		})
		require.NoError(t, rl.AcquirePermission(t.Context(), 1))
		time.Sleep(10 * time.Millisecond)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- rl.AcquirePermission(ctx, 1) }()
		synctest.Wait()
		assert.Equal(t, 1, rl.Metrics().NumberOfWaitingCalls)
		assert.Equal(t, -1, rl.Metrics().AvailablePermissions)
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
		wait, err := rl.ReservePermission(t.Context(), 1)
		require.NoError(t, err)
		assert.Equal(t, 90*time.Millisecond, wait) // the next cycle, not the one after
		mt := rl.Metrics()
		assert.Equal(t, uint64(1), mt.GivenBack)
		assert.Equal(t, uint64(3), mt.Permitted)
		assert.Equal(t, 0, mt.NumberOfWaitingCalls)
	})
}

// A reservation followed by another is not given back: its permissions stay used.
func TestReservationFollowedByAnotherIsKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, rl := startShared(t, "kept", leveeredis.Config{
			LimitForPeriod: 1, LimitRefreshPeriod: 100 * time.Millisecond, TimeoutDuration: time.Second,
			FallbackLimitForPeriod: 1,
		})
		require.NoError(t, rl.AcquirePermission(t.Context(), 1))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- rl.AcquirePermission(ctx, 1) }()
		synctest.Wait()
		wait, err := rl.ReservePermission(t.Context(), 1)
		require.NoError(t, err)
		assert.Equal(t, 200*time.Millisecond, wait)
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
		wait, err = rl.ReservePermission(t.Context(), 1)
		require.NoError(t, err)
		assert.Equal(t, 300*time.Millisecond, wait)
		assert.Equal(t, uint64(0), rl.Metrics().GivenBack)
	})
}

func TestMultiplePermitsAndInvalidCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, rl := startShared(t, "multi", leveeredis.Config{
			LimitForPeriod: 5, LimitRefreshPeriod: 100 * time.Millisecond, TimeoutDuration: 150 * time.Millisecond,
			FallbackLimitForPeriod: 1,
		})
		ctx := t.Context()
		require.NoError(t, rl.AcquirePermission(ctx, 4))
		wait, err := rl.ReservePermission(ctx, 3) // 1 left now: the 3rd is in the next cycle
		require.NoError(t, err)
		assert.Equal(t, 100*time.Millisecond, wait)
		assert.Equal(t, -2, rl.Metrics().AvailablePermissions)
		_, err = rl.ReservePermission(ctx, 5) // would end in the cycle after next: 200ms > 150ms
		require.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)
		err = rl.AcquirePermission(ctx, 6)
		require.ErrorIs(t, err, ratelimiter.ErrInvalidPermits)
		assert.Equal(t, "ratelimiter: invalid number of permits: asked for 6, must be in [1, 5] (LimitForPeriod)", err.Error())
		require.ErrorIs(t, rl.AcquirePermission(ctx, 0), ratelimiter.ErrInvalidPermits)
		_, err = rl.ReservePermission(ctx, -1)
		require.ErrorIs(t, err, ratelimiter.ErrInvalidPermits)
	})
}

// ChangeLimitForPeriod on one replica applies to the others from the next cycle on.
func TestChangeLimitSeenByEveryReplica(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := startMini(t)
		cfg := leveeredis.Config{LimitForPeriod: 5, LimitRefreshPeriod: 100 * time.Millisecond,
			TimeoutDuration: ratelimiter.NoWait, FallbackLimitForPeriod: 1}
		a := newShared(t, m.client(t), "change", cfg)
		b := newShared(t, m.client(t), "change", cfg)
		ctx := t.Context()
		require.NoError(t, a.AcquirePermission(ctx, 1))
		require.NoError(t, a.ChangeLimitForPeriod(ctx, 2))
		require.NoError(t, b.AcquirePermission(ctx, 2)) // the current cycle keeps its 4
		require.NoError(t, b.AcquirePermission(ctx, 2))
		require.ErrorIs(t, b.AcquirePermission(ctx, 1), ratelimiter.ErrRequestNotPermitted)
		assert.Equal(t, 2, b.Metrics().LimitForPeriod)
		time.Sleep(100 * time.Millisecond)
		require.ErrorIs(t, b.AcquirePermission(ctx, 3), ratelimiter.ErrInvalidPermits)
		require.NoError(t, b.AcquirePermission(ctx, 1))
		require.NoError(t, a.AcquirePermission(ctx, 1))
		require.ErrorIs(t, a.AcquirePermission(ctx, 1), ratelimiter.ErrRequestNotPermitted)
		require.EqualError(t, a.ChangeLimitForPeriod(ctx, 0), "leveeredis: LimitForPeriod must be in [1, 2147483647], got 0")
	})
}

func TestGCRA(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, rl := startShared(t, "gcra", leveeredis.Config{
			LimitForPeriod: 10, LimitRefreshPeriod: time.Second, TimeoutDuration: 150 * time.Millisecond,
			Algorithm: leveeredis.GCRA, FallbackLimitForPeriod: 1,
		})
		ctx := t.Context()
		for range 10 {
			wait, err := rl.ReservePermission(ctx, 1)
			require.NoError(t, err)
			require.Equal(t, time.Duration(0), wait)
		}
		wait, err := rl.ReservePermission(ctx, 1)
		require.NoError(t, err)
		assert.Equal(t, 100*time.Millisecond, wait)
		_, err = rl.ReservePermission(ctx, 1) // 200ms > 150ms
		require.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)
		time.Sleep(200 * time.Millisecond)
		wait, err = rl.ReservePermission(ctx, 1)
		require.NoError(t, err)
		assert.Equal(t, time.Duration(0), wait)
		time.Sleep(time.Second + time.Millisecond) // the bucket refills and its key expires
		assert.False(t, m.Exists("levee:rl:{gcra}"))
		for range 10 {
			require.NoError(t, rl.AcquirePermission(ctx, 1))
		}
		// a waiter gives its reservation back
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- rl.AcquirePermission(wctx, 1) }()
		synctest.Wait()
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
		wait, err = rl.ReservePermission(ctx, 1)
		require.NoError(t, err)
		assert.Equal(t, 100*time.Millisecond, wait)
		assert.Equal(t, uint64(1), rl.Metrics().GivenBack)
	})
}

// The cycle state expires once the limiter is full again, and is written with every digit.
func TestCyclesKeyState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, rl := startShared(t, "keys", leveeredis.Config{
			LimitForPeriod: 2, LimitRefreshPeriod: 100 * time.Millisecond, FallbackLimitForPeriod: 1,
		})
		_, err := rl.ReservePermission(t.Context(), 2)
		require.NoError(t, err)
		_, err = rl.ReservePermission(t.Context(), 2)
		require.NoError(t, err)
		cycle := time.Now().UnixMicro() / 100_000
		assert.Equal(t, map[string]string{"c": itoa(cycle), "p": "-2", "s": "2", "ic": itoa(cycle)}, hgetall(t, m, "levee:rl:{keys}"))
		assert.Equal(t, 200*time.Millisecond+time.Millisecond, m.TTL("levee:rl:{keys}"))
		time.Sleep(201 * time.Millisecond)
		assert.False(t, m.Exists("levee:rl:{keys}"))
	})
}

// With FallbackToLocal, a replica counts the live replicas by heartbeats; a check that fails
// outside an episode is refused (Redis may count it), and once the store breaker opens the
// local share admits max(1, ⌊10/3⌋) = 3 per cycle from the second cycle on (the checks of the
// first promised Redis that this replica takes nothing locally there); the episode is
// counted and logged once.
func TestFallbackToLocalShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := startMini(t)
		var logs bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			},
		}))
		var rls []*leveeredis.RateLimiter
		for i := range 3 {
			cfg := leveeredis.Config{LimitForPeriod: 10, LimitRefreshPeriod: 100 * time.Millisecond,
				TimeoutDuration: ratelimiter.NoWait, HeartbeatInterval: 50 * time.Millisecond}
			if i == 0 {
				cfg.Logger = logger
			}
			rls = append(rls, newShared(t, m.client(t), "share", cfg))
		}
		time.Sleep(60 * time.Millisecond)
		for _, rl := range rls {
			assert.Equal(t, 3, rl.Metrics().Replicas)
			assert.Equal(t, 3, rl.Metrics().FallbackLimitForPeriod) // max(1, ⌊10/3⌋)
		}
		time.Sleep(40 * time.Millisecond) // a cycle boundary
		m.SetError("MASTERDOWN Link with MASTER is down")
		ctx := t.Context()
		rl := rls[0]
		for i := range 12 {
			err := rl.AcquirePermission(ctx, 1)
			require.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)
			var se *leveeredis.StoreError
			assert.Equal(t, i < 9, errors.As(err, &se), "check %d: %v", i, err)
		}
		mt := rl.Metrics()
		assert.Equal(t, uint64(9), mt.StoreRefused) // the 10th failure opens the breaker
		assert.Equal(t, uint64(3), mt.LocalRefused) // the cycle Redis was counting is spent
		assert.True(t, mt.Degraded)
		// The checks of cycle 0 promised Redis that this replica takes nothing locally in
		// cycles 0 and 1 (the other replicas count on it): the share admits from cycle 2 on.
		time.Sleep(100 * time.Millisecond)
		for range 4 {
			require.ErrorIs(t, rl.AcquirePermission(ctx, 1), ratelimiter.ErrRequestNotPermitted, "cycle 1")
		}
		assert.Equal(t, 100*time.Millisecond, rl.Metrics().NanosToWait, "the local share admits from the next cycle on")
		for i := range 19 {
			time.Sleep(100 * time.Millisecond)
			for range 3 {
				require.NoError(t, rl.AcquirePermission(ctx, 1), "cycle %d", i+2)
			}
			require.ErrorIs(t, rl.AcquirePermission(ctx, 1), ratelimiter.ErrRequestNotPermitted)
		}
		// The local share's refusal says when its next cycle starts, as the core limiter's.
		w, err := rl.ReservePermission(ctx, 1)
		require.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)
		assert.Equal(t, 100*time.Millisecond, w)
		assert.Equal(t, 100*time.Millisecond, rl.RetryAfter())
		mt = rl.Metrics()
		assert.Equal(t, 100*time.Millisecond, mt.NanosToWait)
		assert.Equal(t, uint64(57), mt.LocalPermitted)
		assert.Equal(t, uint64(27), mt.LocalRefused)
		assert.Equal(t, uint64(9), mt.StoreRefused)
		assert.Equal(t, uint64(93), mt.StoreFailures+mt.BreakerRejections)
		assert.Equal(t, circuitbreaker.Open, rl.StoreCircuitBreaker().State())
		assert.Equal(t, uint64(1), mt.Episodes)
		assert.Equal(t, 3, mt.Replicas) // the last count known

		// Back within a cycle in which the share admitted 2: Redis learns them.
		time.Sleep(100 * time.Millisecond)
		require.NoError(t, rl.AcquirePermission(ctx, 1))
		require.NoError(t, rl.AcquirePermission(ctx, 1))
		m.SetError("")
		require.NoError(t, rl.StoreCircuitBreaker().TransitionToClosedState())
		require.NoError(t, rl.AcquirePermission(ctx, 1))
		mt = rl.Metrics()
		assert.False(t, mt.Degraded)
		assert.Equal(t, uint64(1), mt.Permitted)
		assert.Equal(t, 10-2-1, mt.AvailablePermissions)
		require.NoError(t, rl.AcquirePermission(ctx, 1)) // the debt is taken once
		assert.Equal(t, 10-2-2, rl.Metrics().AvailablePermissions)
		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
		require.Len(t, lines, 2, logs.String())
		assert.Contains(t, lines[0], `level=WARN msg="rate limiter store unavailable" pattern=ratelimiter name=share failure_mode=FALLBACK_TO_LOCAL`)
		assert.Contains(t, lines[0], "fallback_limit_for_period=3")
		assert.Equal(t, `level=INFO msg="rate limiter store available again" pattern=ratelimiter name=share failure_mode=FALLBACK_TO_LOCAL`, lines[1])
	})
}

func TestFailOpenAndFailClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := startMini(t)
		cfg := leveeredis.Config{LimitForPeriod: 1, LimitRefreshPeriod: time.Second, TimeoutDuration: ratelimiter.NoWait}
		cfg.FailureMode = leveeredis.FailOpen
		open := newShared(t, m.client(t), "modes", cfg)
		cfg.FailureMode = leveeredis.FailClosed
		closed := newShared(t, m.client(t), "modes", cfg)
		ctx := t.Context()
		require.NoError(t, open.AcquirePermission(ctx, 1))
		require.ErrorIs(t, closed.AcquirePermission(ctx, 1), ratelimiter.ErrRequestNotPermitted)

		m.SetError("LOADING Redis is loading the dataset in memory")
		for range 12 {
			require.NoError(t, open.AcquirePermission(ctx, 1))
			wait, err := open.ReservePermission(ctx, 1)
			require.NoError(t, err)
			require.Equal(t, time.Duration(0), wait)
		}
		err := closed.AcquirePermission(ctx, 1)
		var se *leveeredis.StoreError
		require.ErrorAs(t, err, &se)
		assert.True(t, levee.IsRejection(err))
		assert.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)
		assert.Equal(t, "leveeredis: RateLimiter 'modes' store unavailable: LOADING Redis is loading the dataset in memory", err.Error())
		for range 11 {
			_ = closed.AcquirePermission(ctx, 1)
		}
		err = closed.AcquirePermission(ctx, 1) // the breaker is open: Redis is not asked
		require.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
		require.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)

		mo, mc := open.Metrics(), closed.Metrics()
		assert.Equal(t, uint64(24), mo.FailOpenPermitted)
		assert.Equal(t, uint64(1), mo.Permitted)
		assert.Equal(t, uint64(13), mc.FailClosedRefused)
		// the breaker opens on its 10th call (the first check succeeded, 9 failed): 90 % ≥ 50 %
		assert.Equal(t, uint64(9), mc.StoreFailures)
		assert.Equal(t, uint64(4), mc.BreakerRejections)
		assert.Equal(t, uint64(1), mc.Refused)
		assert.Equal(t, 0, mc.FallbackLimitForPeriod)
	})
}

// The limiter fits a levee pipeline through Pipeline.With, and ExecuteRateLimiter guards one call.
func TestPipelineAndExecute(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, rl := startShared(t, "pipe", leveeredis.Config{
			LimitForPeriod: 2, LimitRefreshPeriod: time.Second, TimeoutDuration: ratelimiter.NoWait,
			FallbackLimitForPeriod: 1,
		})
		ctx := t.Context()
		p := levee.Compose[string]().With(leveeredis.RateLimiterDecorator[string](rl))
		calls := 0
		call := func(context.Context) (string, error) { calls++; return "ok", nil }
		v, err := p.Execute(ctx, call)
		require.NoError(t, err)
		assert.Equal(t, "ok", v)
		_, err = leveeredis.ExecuteRateLimiter(ctx, rl, func(context.Context) (int, error) { panic("boom") })
		var pe *levee.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "boom", pe.Value)
		_, err = p.Execute(ctx, call)
		require.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)
		assert.True(t, levee.IsRejection(err))
		_, err = leveeredis.ExecuteRateLimiter[int](ctx, rl, nil)
		require.ErrorIs(t, err, levee.ErrNilCall)
		assert.Equal(t, 1, calls)
	})
}

func TestConfigValidation(t *testing.T) {
	m := startMini(t)
	c := m.client(t)
	for _, tc := range []struct {
		cfg  leveeredis.Config
		want string
	}{
		{leveeredis.Config{}, "leveeredis: LimitForPeriod must be in [1, 2147483647] (it has no default), got 0"},
		{leveeredis.Config{LimitForPeriod: -1}, "leveeredis: LimitForPeriod must be in [1, 2147483647] (it has no default), got -1"},
		{leveeredis.Config{LimitForPeriod: leveeredis.MaxLimitForPeriod + 1}, "leveeredis: LimitForPeriod must be in [1, 2147483647] (it has no default), got 2147483648"},
		{leveeredis.Config{LimitForPeriod: 10, LimitRefreshPeriod: 500 * time.Microsecond}, "leveeredis: LimitRefreshPeriod must be >= 1ms and whole microseconds, got 500µs"},
		{leveeredis.Config{LimitForPeriod: 10, LimitRefreshPeriod: time.Millisecond + 1}, "leveeredis: LimitRefreshPeriod must be >= 1ms and whole microseconds, got 1.000001ms"},
		{leveeredis.Config{LimitForPeriod: 10, TimeoutDuration: -2}, "leveeredis: TimeoutDuration must be >= 0 or ratelimiter.NoWait, got -2ns"},
		{leveeredis.Config{LimitForPeriod: 10, Algorithm: 2}, "leveeredis: Algorithm must be Cycles or GCRA, got 2"},
		{leveeredis.Config{LimitForPeriod: 10, StoreTimeout: time.Microsecond}, "leveeredis: StoreTimeout must be in [1ms, 10s], got 1µs"},
		{leveeredis.Config{LimitForPeriod: 10, FailureMode: 3}, "leveeredis: FailureMode must be FallbackToLocal, FailOpen or FailClosed, got 3"},
		{leveeredis.Config{LimitForPeriod: 10, FallbackLimitForPeriod: -1}, "leveeredis: FallbackLimitForPeriod must be >= 0, got -1"},
		{leveeredis.Config{LimitForPeriod: 10, HeartbeatInterval: time.Millisecond}, "leveeredis: HeartbeatInterval must be in [10ms, 1h], got 1ms"},
		{leveeredis.Config{LimitForPeriod: 2, FallbackLimitForPeriod: 3}, "leveeredis: FallbackLimitForPeriod must be <= LimitForPeriod (2): a share larger than the fleet's limit cannot be met, got 3"},
		{leveeredis.Config{LimitForPeriod: 10, ReplicaID: "web 1"}, `leveeredis: ReplicaID must be 1 to 128 characters among letters, digits and . _ : / @ -, got "web 1"`},
		{leveeredis.Config{LimitForPeriod: 10, ReplicaID: strings.Repeat("a", 129)}, `leveeredis: ReplicaID must be 1 to 128 characters among letters, digits and . _ : / @ -, got "` + strings.Repeat("a", 129) + `"`},
		{leveeredis.Config{LimitForPeriod: 10, StoreCircuitBreaker: &circuitbreaker.Config{FailureRateThreshold: 150}},
			"leveeredis: StoreCircuitBreaker: circuitbreaker: FailureRateThreshold must be in (0, 100], got 150"},
	} {
		rl, err := leveeredis.NewRateLimiter(c, "bad", tc.cfg)
		assert.Nil(t, rl)
		assert.EqualError(t, err, tc.want)
	}
	_, err := leveeredis.NewRateLimiter(nil, "bad", leveeredis.Config{LimitForPeriod: 10})
	assert.EqualError(t, err, "leveeredis: client must not be nil")
	for _, plain := range []redis.UniversalClient{
		redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}),
		redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}}),
	} {
		_, err = leveeredis.NewRateLimiter(plain, "bad", leveeredis.Config{LimitForPeriod: 10})
		assert.EqualError(t, err, "leveeredis: the client's Options.ContextTimeoutEnabled must be true, "+
			"else a frozen Redis holds each round trip for the client's ReadTimeout instead of StoreTimeout")
		require.NoError(t, plain.Close())
	}
}
