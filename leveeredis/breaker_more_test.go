package leveeredis_test

import (
	"context"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeredis"
)

// Sharing costs nothing on the hot path: a successful call in CLOSED and a refusal in OPEN
// allocate nothing, as with the local breaker alone.
func TestSharedBreakerHotPathDoesNotAllocate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, rs := startFleet(t, 1)
		r := rs[0]
		ctx := context.Background()
		call := func(context.Context) (int, error) { return 42, nil }
		require.Equal(t, 0.0, testing.AllocsPerRun(1000, func() {
			if v, err := leveeredis.Execute(ctx, r.sb, call); v != 42 || err != nil {
				panic("unexpected result")
			}
		}), "Execute in CLOSED")
		require.Equal(t, 0.0, testing.AllocsPerRun(1000, func() {
			p, err := r.sb.Acquire(ctx)
			if err != nil {
				panic("refused")
			}
			p.OnSuccess()
		}), "Acquire in CLOSED")

		require.NoError(t, r.cb.TransitionToOpenState())
		synctest.Wait()
		require.Equal(t, 0.0, testing.AllocsPerRun(1000, func() {
			if _, err := leveeredis.Execute(ctx, r.sb, call); err == nil {
				panic("permitted")
			}
		}), "Execute refused in OPEN")
	})
}

// A replica holding the trial that never reports (it crashed) keeps the others out for
// TrialLease only; then another replica takes the trial and closes the fleet.
func TestSharedBreakerTrialLeaseTakenOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := miniredis.NewMiniRedis()
		defer m.Close()
		m.ClockTTL(true) // the lease expires on the bubble's clock
		rs := fleet(t, m, 3)
		defer closeAll(t, rs[1:])
		synctest.Wait()
		rs[0].trip(t)
		synctest.Wait()
		time.Sleep(10*time.Second + time.Millisecond)

		p, err := rs[0].sb.Acquire(context.Background()) // A takes the trial and a probe, then is gone
		require.NoError(t, err)
		rs[0].close(t)
		_ = p

		require.ErrorIs(t, rs[1].call(nil), circuitbreaker.ErrCallNotPermitted)
		time.Sleep(10*time.Second - time.Millisecond) // the lease has 1ms left
		require.ErrorIs(t, rs[1].call(nil), circuitbreaker.ErrCallNotPermitted)
		require.Equal(t, uint64(2), rs[1].sb.StoreMetrics().TrialRefusals)
		time.Sleep(time.Millisecond)

		require.NoError(t, rs[1].call(nil)) // B takes the trial: 2 probes close it
		require.NoError(t, rs[1].call(nil))
		synctest.Wait()
		require.Equal(t, circuitbreaker.Closed, rs[1].cb.State())
		require.Equal(t, circuitbreaker.Closed, rs[2].cb.State())
		require.Equal(t, int64(2), rs[2].sb.Version())
		require.Equal(t, rs[1].sb.Origin(), hget(t, m, "origin"))
	})
}

// Decorator puts the shared breaker in a levee pipeline; Acquire hands out the local breaker's
// permits.
func TestSharedBreakerDecoratorAndAcquire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, rs := startFleet(t, 2)

		p := levee.Compose[string]().With(leveeredis.Decorator[string](rs[0].sb))
		for range 4 {
			_, err := p.Execute(context.Background(), func(context.Context) (string, error) { return "", errBoom })
			require.ErrorIs(t, err, errBoom)
		}
		synctest.Wait()
		require.Equal(t, circuitbreaker.Open, rs[1].cb.State())
		_, err := rs[1].sb.Acquire(context.Background())
		var refused *circuitbreaker.CallNotPermittedError
		require.ErrorAs(t, err, &refused)
		require.Equal(t, circuitbreaker.Open, refused.State)

		_, err = leveeredis.Execute[int](context.Background(), nil, nil)
		require.ErrorIs(t, err, circuitbreaker.ErrNilCircuitBreaker)
	})
}

// Execute reports outcomes as circuitbreaker.Execute does: a panic is a failure returned as a
// *levee.PanicError, the caller's cancellation releases the permit, a result matched by
// RecordResultPredicate is a failure, and a nil call runs nothing.
func TestSharedBreakerExecuteOutcomes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := miniredis.NewMiniRedis()
		defer m.Close()
		cfg := fleetConfig()
		cfg.RecordResultPredicate = func(v any) bool { return v == -1 }
		r := newReplica(t, miniClient(m), cfg, leveeredis.BreakerConfig{})
		defer r.close(t)
		synctest.Wait()

		_, err := leveeredis.Execute(context.Background(), r.sb, func(context.Context) (int, error) { panic("kaput") })
		var pe *levee.PanicError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, "kaput", pe.Value)

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = leveeredis.Execute(ctx, r.sb, func(ctx context.Context) (int, error) { return 0, ctx.Err() })
		require.ErrorIs(t, err, context.Canceled)

		v, err := leveeredis.Execute(context.Background(), r.sb, func(context.Context) (int, error) { return -1, nil })
		require.NoError(t, err)
		require.Equal(t, -1, v)
		require.NoError(t, r.call(nil))

		got := r.cb.Metrics()
		require.Equal(t, 3, got.NumberOfBufferedCalls)
		require.Equal(t, 2, got.NumberOfFailedCalls)

		_, err = leveeredis.Execute[int](context.Background(), r.sb, nil)
		require.ErrorIs(t, err, levee.ErrNilCall)
	})
}

// A replica whose subscription was cut reads the record when go-redis subscribes again, and
// adopts what it missed.
func TestSharedBreakerResubscribeReconciles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, rs := startFleet(t, 1)

		// Another replica opened for 5s; its publish never arrived.
		until := time.Now().Add(5 * time.Second).UnixMicro()
		m.HSet("levee:cb:{payments}", "version", "7", "state", "1",
			"until", strconv.FormatInt(until, 10), "origin", "elsewhere")
		m.Close() // every connection cut; the next dial starts the server again, data kept
		time.Sleep(time.Second)
		synctest.Wait()

		require.Equal(t, circuitbreaker.Open, rs[0].cb.State())
		require.Equal(t, int64(7), rs[0].sb.Version())
		require.Equal(t, 4*time.Second+time.Nanosecond, rs[0].cb.RemainingWaitInOpenState())
		require.Equal(t, uint64(1), rs[0].sb.StoreMetrics().Adopted)
	})
}

// With automatic HALF_OPEN and a maximum wait in it, every replica leaves HALF_OPEN when that
// wait ends; only the trial's holder writes the outcome, and the others adopt it.
func TestSharedBreakerOnlyTrialHolderWritesHalfOpenOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := miniredis.NewMiniRedis()
		defer m.Close()
		cfg := fleetConfig()
		cfg.AutomaticTransitionFromOpenToHalfOpenEnabled = true
		cfg.MaxWaitDurationInHalfOpenState = 5 * time.Second
		rs := []*replica{
			newReplica(t, miniClient(m), cfg, leveeredis.BreakerConfig{}),
			newReplica(t, miniClient(m), cfg, leveeredis.BreakerConfig{}),
		}
		defer closeAll(t, rs)
		synctest.Wait()
		rs[0].trip(t)
		synctest.Wait()
		time.Sleep(10*time.Second + time.Millisecond)
		synctest.Wait()
		require.Equal(t, circuitbreaker.HalfOpen, rs[0].cb.State())
		require.Equal(t, circuitbreaker.HalfOpen, rs[1].cb.State())

		p, err := rs[0].sb.Acquire(context.Background()) // A holds the trial; its probe hangs
		require.NoError(t, err)
		require.ErrorIs(t, rs[1].call(nil), circuitbreaker.ErrCallNotPermitted)

		time.Sleep(5 * time.Second)
		synctest.Wait()
		p.Release()
		require.Equal(t, "2", hget(t, m, "version"))
		require.Equal(t, rs[0].sb.Origin(), hget(t, m, "origin"))
		require.Equal(t, uint64(0), rs[1].sb.StoreMetrics().Published)
		require.Equal(t, int64(2), rs[1].sb.Version())
		require.Equal(t, circuitbreaker.Open, rs[1].cb.State())
		require.Equal(t, rs[0].cb.RemainingWaitInOpenState(), rs[1].cb.RemainingWaitInOpenState())
	})
}
