package leveeredis

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// Every check holds back the shares of the other replicas that may be deciding alone: those
// whose promise does not cover the current cycle, and those the caller counts that Redis has no
// record of. Limit 9, three replicas, shares of 3: what Redis grants and what the local shares
// may grant never add up past 9.
func TestChecksHoldBackTheSharesOfReplicasWithoutPromise(t *testing.T) {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true, DisableIdentity: true})
	defer func() { _ = c.Close() }()
	period := 24 * time.Hour
	if period-time.Duration(time.Now().UnixNano())%period < time.Minute {
		period = 25 * time.Hour
	}
	rl, err := NewRateLimiter(c, "held", Config{LimitForPeriod: 9, LimitRefreshPeriod: period, FallbackLimitForPeriod: 3})
	require.NoError(t, err)
	defer func() { _ = rl.Close() }()
	cur := time.Now().UnixMicro() / rl.periodUs
	deadline := time.Now().Add(time.Hour).UnixMicro()
	seq := 0
	// check runs one check of replica r: promise or not, with a debt of the current cycle, and
	// returns the code (1 granted, 0 refused).
	timeout := int64(0)
	check := func(r string, promise bool, debt int) int64 {
		seq++
		vals, err := rl.script.Run(context.Background(), c, rl.keys, 1, rl.periodUs, 9, timeout, deadline,
			fmt.Sprintf("%s#%d", r, seq), r, 0, cur, debt, 3, boolArg(promise), 3, rl.keep).Int64Slice()
		require.NoError(t, err)
		return vals[0]
	}
	grants := func(r string, promise bool, debt int) int {
		n := 0
		for check(r, promise, debt) == 1 {
			n++
			require.LessOrEqual(t, n, 9)
		}
		return n
	}
	promises := rl.keys[4]

	// b alone in Redis: a and c, counted but unknown to Redis, keep their shares.
	require.Equal(t, 3, grants("b", true, 0))
	require.Equal(t, fmt.Sprintf("%d 3", cur+1), m.HGet(promises, "b"), "b stays out of this cycle and the next")
	// a promises too: only c's share is held back from it.
	require.Equal(t, 3, grants("a", true, 0))
	require.Equal(t, int64(0), check("b", true, 0), "c's share is c's")
	// c comes back from its local share with 2 granted this cycle, without a promise yet:
	// Redis takes the 2 and c may take what is left.
	require.Equal(t, 1, grants("c", false, 2))
	require.Equal(t, "", m.HGet(promises, "c"), "a check without a promise records none")
	require.Equal(t, int64(0), check("a", true, 0))

	// Next scenario, a fresh limiter state: a's promise lapsed (it decides alone), c is
	// unknown to Redis: b may take 9 - 3 - 3.
	m.FlushAll()
	m.HSet(promises, "a", fmt.Sprintf("%d 3", cur-1))
	require.Equal(t, 3, grants("b", true, 0))
	// A promise remembered longer than keep cycles is forgotten: its replica is then held
	// back as one the caller counts without a record.
	m.HSet(promises, "a", fmt.Sprintf("%d 3", cur-rl.keep-1))
	require.Equal(t, int64(0), check("b", true, 0))
	require.False(t, m.Exists(promises) && m.HGet(promises, "a") != "", "the old promise is deleted")

	// Reservations of the next cycle, where the replicas without a promise for it keep their
	// shares too: b alone takes 3 now, reserves 3 in the next cycle, and is refused the cycle
	// after (beyond its TimeoutDuration); the reservations are counted in the next cycle's 9,
	// not in this cycle's leftover held back for a and c.
	m.FlushAll()
	timeout = rl.periodUs
	require.Equal(t, 6, grants("b", true, 0))
	require.Equal(t, "-3", m.HGet(rl.keys[0], "p"), "3 of the next cycle reserved")
}
