package leveeredis_test

import (
	"context"
	"os"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeredis"
)

// Load reads the shared record; transitions adopted from the fleet are marked with the
// replica that decided them.
func TestSharedBreakerLoadAndAdoptedTransitions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := miniredis.NewMiniRedis()
		t.Cleanup(m.Close)
		a := newReplica(t, miniClient(m), fleetConfig(), leveeredis.BreakerConfig{ReplicaID: "web-1:42"})
		b := newReplica(t, miniClient(m), fleetConfig(), leveeredis.BreakerConfig{ReplicaID: "web-2:7"})
		t.Cleanup(func() { closeAll(t, []*replica{a, b}) })
		synctest.Wait()
		require.Equal(t, "web-1:42", a.sb.Origin())

		rec, err := b.sb.Load(context.Background())
		require.NoError(t, err)
		require.Equal(t, leveeredis.BreakerRecord{State: circuitbreaker.Closed}, rec)

		var mu sync.Mutex
		var seenA, seenB []leveeredis.BreakerTransition
		a.sb.OnTransition(func(tr leveeredis.BreakerTransition) { mu.Lock(); seenA = append(seenA, tr); mu.Unlock() })
		unregister := b.sb.OnTransition(func(tr leveeredis.BreakerTransition) { mu.Lock(); seenB = append(seenB, tr); mu.Unlock() })
		a.trip(t)
		synctest.Wait()

		rec, err = b.sb.Load(context.Background())
		require.NoError(t, err)
		require.Equal(t, leveeredis.BreakerRecord{State: circuitbreaker.Open, Version: 1, Origin: "web-1:42",
			OpenRemaining: 10 * time.Second, OpenUntil: time.Now().Add(10 * time.Second)}, rec)
		require.Equal(t, leveeredis.BreakerRecord{State: circuitbreaker.Open, Version: 1, Origin: "web-1:42",
			OpenRemaining: 10 * time.Second}, b.sb.Record())
		mu.Lock()
		require.Equal(t, []leveeredis.BreakerTransition{{From: circuitbreaker.Closed, To: circuitbreaker.Open, Origin: "web-1:42"}}, seenA)
		require.Equal(t, []leveeredis.BreakerTransition{{From: circuitbreaker.Closed, To: circuitbreaker.Open, Adopted: true, Origin: "web-1:42", Version: 1}}, seenB)
		mu.Unlock()
		unregister()
		require.NoError(t, a.cb.TransitionToClosedState())
		synctest.Wait()
		mu.Lock()
		require.Len(t, seenB, 1, "unregistered")
		require.Len(t, seenA, 2)
		mu.Unlock()
		rec, err = a.sb.Load(context.Background())
		require.NoError(t, err)
		require.Equal(t, leveeredis.BreakerRecord{State: circuitbreaker.Closed, Version: 2, Origin: "web-1:42"}, rec)
	})
}

// The default ReplicaID is the host name and pid, numbered from the second breaker of the
// process on; a ReplicaID that could not be recorded is refused, naming the field.
func TestSharedBreakerReplicaID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, rs := startFleet(t, 2)
		_ = m
		host, err := os.Hostname()
		require.NoError(t, err)
		prefix := host + ":" + strconv.Itoa(os.Getpid())
		require.Contains(t, rs[0].sb.Origin(), prefix)
		require.NotEqual(t, rs[0].sb.Origin(), rs[1].sb.Origin())
		cb, err := circuitbreaker.New("bad", circuitbreaker.Config{})
		require.NoError(t, err)
		c := miniClient(m)
		defer func() { _ = c.Close() }()
		_, err = leveeredis.NewSharedBreaker(cb, c, leveeredis.BreakerConfig{ReplicaID: "two words"})
		require.EqualError(t, err, `leveeredis: ReplicaID must be 1 to 128 characters among letters, digits and . _ : / @ -, got "two words"`)
	})
}
