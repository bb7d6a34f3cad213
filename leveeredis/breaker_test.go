package leveeredis_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeredis"
)

// An OPEN decided by one replica reaches the others when its publish is received: the fake
// clock does not move between the failing call and the other replicas' OPEN, so no polling
// interval is involved.
func TestSharedBreakerOpenReachesFleetWithoutPolling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, rs := startFleet(t, 3)

		start := time.Now()
		var opened [3]atomic.Int64
		for i, r := range rs[1:] {
			r.cb.OnStateChange(func(_, to circuitbreaker.State) {
				if to == circuitbreaker.Open {
					opened[i+1].Store(int64(time.Since(start)) + 1)
				}
			})
		}
		rs[0].trip(t)
		synctest.Wait()

		for _, r := range rs[1:] {
			require.Equal(t, circuitbreaker.Open, r.cb.State())
			require.Equal(t, 10*time.Second+time.Nanosecond, r.cb.RemainingWaitInOpenState())
			require.Equal(t, int64(1), r.sb.Version())
			require.Equal(t, uint64(1), r.sb.StoreMetrics().Adopted)
			require.Equal(t, uint64(0), r.sb.StoreMetrics().Published, "an adopted OPEN is not written back")
		}
		require.Equal(t, int64(1), opened[1].Load(), "B opened at the same fake instant")
		require.Equal(t, int64(1), opened[2].Load(), "C opened at the same fake instant")
		require.Equal(t, uint64(1), rs[0].sb.StoreMetrics().Published)
		require.Equal(t, "1", hget(t, m, "version"))
		require.Equal(t, "1", hget(t, m, "state"))
		require.Equal(t, rs[0].sb.Origin(), hget(t, m, "origin"))
		require.Equal(t, int64(1), rs[0].sb.Version())

		// B refuses by itself, with no round trip.
		err := rs[1].call(nil)
		require.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
	})
}

// PermittedNumberOfCallsInHalfOpenState 2 across 3 replicas: exactly 2 probes run in the fleet,
// all in the replica that took the trial; its CLOSED reaches the others.
func TestSharedBreakerHalfOpenProbesBoundedFleetWide(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, rs := startFleet(t, 3)
		rs[0].trip(t)
		synctest.Wait()
		time.Sleep(10*time.Second + time.Millisecond)

		release := make(chan struct{})
		var running atomic.Int32
		var wg sync.WaitGroup
		errs := make([][]error, 3)
		for i, r := range []*replica{rs[1], rs[2], rs[0]} { // B asks first: it takes the trial
			errs[i] = make([]error, 3)
			for j := range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i][j] = leveeredis.Execute(context.Background(), r.sb, func(context.Context) (int, error) {
						running.Add(1)
						<-release
						return 1, nil
					})
				}()
				synctest.Wait()
			}
		}
		require.Equal(t, int32(2), running.Load(), "probes running in the fleet")
		close(release)
		wg.Wait()
		synctest.Wait()

		var permitted, refused int
		for _, es := range errs {
			for _, err := range es {
				if err == nil {
					permitted++
				} else {
					require.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
					refused++
				}
			}
		}
		require.Equal(t, 2, permitted)
		require.Equal(t, 7, refused)
		require.Equal(t, uint64(3), rs[0].sb.StoreMetrics().TrialRefusals)
		require.Equal(t, uint64(3), rs[2].sb.StoreMetrics().TrialRefusals)
		require.Equal(t, uint64(0), rs[1].sb.StoreMetrics().TrialRefusals)
		for _, r := range rs {
			require.Equal(t, circuitbreaker.Closed, r.cb.State())
			require.Equal(t, int64(2), r.sb.Version())
		}
		require.Equal(t, "0", hget(t, m, "state"))
		require.Equal(t, rs[1].sb.Origin(), hget(t, m, "origin"))
	})
}

// Two replicas open from the same version: one write wins, the other replica adopts it, wait
// included. The store refuses commands while both open, so both write at the same instant.
func TestSharedBreakerCASConflictConverges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, rs := startFleet(t, 2)

		m.SetError("LOADING Redis is loading the dataset in memory")
		require.NoError(t, rs[0].cb.TransitionToOpenStateFor(20*time.Second))
		require.NoError(t, rs[1].cb.TransitionToOpenStateFor(30*time.Second))
		synctest.Wait()
		m.SetError("")
		time.Sleep(time.Second) // both retry now
		synctest.Wait()

		a, b := rs[0].sb.StoreMetrics(), rs[1].sb.StoreMetrics()
		require.Equal(t, uint64(1), a.Published+b.Published)
		require.Equal(t, uint64(1), a.Adopted+b.Adopted)
		require.LessOrEqual(t, a.Conflicts+b.Conflicts, uint64(1)) // 0 when the publish came first
		require.Equal(t, "1", hget(t, m, "version"))
		for _, r := range rs {
			require.Equal(t, circuitbreaker.Open, r.cb.State())
			require.Equal(t, int64(1), r.sb.Version())
		}
		winner := 0
		if b.Published == 1 {
			winner = 1
		}
		require.Equal(t, rs[winner].sb.Origin(), hget(t, m, "origin"))
		want := time.Duration(20+10*winner)*time.Second - time.Second + time.Nanosecond
		require.Equal(t, want, rs[0].cb.RemainingWaitInOpenState())
		require.Equal(t, want, rs[1].cb.RemainingWaitInOpenState())
	})
}

// OPEN wins ties: a replica that opens from a version older than a CLOSED record still opens
// the fleet.
func TestSharedBreakerOpenWinsOverUnseenClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, rs := startFleet(t, 2)
		// A CLOSED record of version 5 that no replica has seen (its publish was lost).
		m.HSet("levee:cb:{payments}", "version", "5", "state", "0", "until", "0", "origin", "gone")

		rs[0].trip(t)
		synctest.Wait()
		require.Equal(t, "6", hget(t, m, "version"))
		require.Equal(t, "1", hget(t, m, "state"))
		require.Equal(t, circuitbreaker.Open, rs[1].cb.State())
		require.Equal(t, int64(6), rs[1].sb.Version())
	})
}

// A store failure leaves each breaker local (it opens, waits and probes alone), counted and
// logged once; when the store answers again the local OPEN is written and reaches the others.
func TestSharedBreakerStoreDownThenReconcile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, rs := startFleet(t, 2)

		m.SetError("LOADING Redis is loading the dataset in memory")
		rs[0].trip(t)
		synctest.Wait()
		require.Equal(t, circuitbreaker.Closed, rs[1].cb.State(), "nothing reaches B while the store is down")
		st := rs[0].sb.StoreMetrics()
		require.False(t, st.StoreAvailable)
		require.Equal(t, uint64(1), st.StoreErrors)
		require.Equal(t, uint64(0), st.Published)

		// Local behaviour: A's wait ends and it probes by itself.
		time.Sleep(10*time.Second + time.Millisecond)
		require.NoError(t, rs[0].call(nil))
		require.Equal(t, circuitbreaker.HalfOpen, rs[0].cb.State())
		require.Equal(t, uint64(1), rs[0].sb.StoreMetrics().LocalDecisions)
		require.Equal(t, 1, countLines(rs[0].log.String(), "circuit breaker store unavailable"), rs[0].log.String())
		errs := rs[0].sb.StoreMetrics().StoreErrors
		require.Equal(t, uint64(11), errs, "the write when A opened, then one retry per second")

		require.ErrorIs(t, rs[0].call(errBoom), errBoom) // the trial fails: OPEN again, locally
		require.Equal(t, circuitbreaker.Open, rs[0].cb.State())

		m.SetError("")
		time.Sleep(time.Second)
		synctest.Wait()
		require.True(t, rs[0].sb.StoreMetrics().StoreAvailable)
		require.Equal(t, 1, countLines(rs[0].log.String(), "circuit breaker store available again"))
		require.Equal(t, "1", hget(t, m, "version"))
		require.Equal(t, "1", hget(t, m, "state"))
		require.Equal(t, circuitbreaker.Open, rs[1].cb.State())
		require.Equal(t, rs[0].cb.RemainingWaitInOpenState(), rs[1].cb.RemainingWaitInOpenState())
	})
}

func TestNewSharedBreakerRefusesBadConfig(t *testing.T) {
	m := miniredis.NewMiniRedis()
	defer m.Close()
	c := miniClient(m)
	defer c.Close()
	b, err := circuitbreaker.New("payments", fleetConfig())
	require.NoError(t, err)
	_, err = leveeredis.NewSharedBreaker(b, c, leveeredis.BreakerConfig{StoreTimeout: time.Microsecond})
	require.EqualError(t, err, "leveeredis: StoreTimeout must be >= 1ms, got 1µs")
	_, err = leveeredis.NewSharedBreaker(nil, c, leveeredis.BreakerConfig{})
	require.EqualError(t, err, "leveeredis: nil *circuitbreaker.CircuitBreaker")
	_, err = leveeredis.NewSharedBreaker(b, nil, leveeredis.BreakerConfig{})
	require.EqualError(t, err, "leveeredis: nil redis client")
	_, err = leveeredis.NewSharedBreaker(b, c, leveeredis.BreakerConfig{ReplicaID: "web 1"})
	require.EqualError(t, err, `leveeredis: ReplicaID must be 1 to 128 characters among letters, digits and . _ : / @ -, got "web 1"`)
	for _, plain := range []redis.UniversalClient{
		redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}),
		redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}}),
	} {
		_, err = leveeredis.NewSharedBreaker(b, plain, leveeredis.BreakerConfig{})
		require.EqualError(t, err, "leveeredis: the client's Options.ContextTimeoutEnabled must be true, "+
			"else a frozen Redis holds each round trip for the client's ReadTimeout instead of StoreTimeout")
		require.NoError(t, plain.Close())
	}
}
