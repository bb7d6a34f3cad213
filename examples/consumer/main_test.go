package main

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/internal/integration"
)

// TestMain runs the test binary as the consumer when the program under test starts it so
// (selfCommand names the running executable, here the test binary), and runs the tests
// otherwise.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == consumeCommand {
		os.Exit(consumeMain(os.Args[2:]))
	}
	goleak.VerifyTestMain(m)
}

// redisForTest starts a redis-server from PATH on a free loopback port for the test. Without
// one the test is skipped on a developer's machine and fails under CI (CI set), which
// installs it.
func redisForTest(t *testing.T) string {
	t.Helper()
	path := integration.Program(t, "apt-get install -y redis-server", "redis-server")
	srv, err := startRedis(t.Context(), path)
	require.NoError(t, err)
	t.Cleanup(srv.stop)
	return srv.addr
}

// TestConsumer runs the program's two runs, each through the outage and the kill, against a
// real redis-server, and checks the figures it prints: exact where they do not depend on
// timing, within the bounds the program states where they do.
func TestConsumer(t *testing.T) {
	cfg := defaultConfig()
	cfg.redis = redisForTest(t)
	cfg.self = selfCommand()
	var out bytes.Buffer
	reps, err := compare(t.Context(), cfg, &out)
	require.NoError(t, err, out.String())
	printSideBySide(&out, reps)
	t.Log("\n" + out.String())
	require.Len(t, reps, 2)
	paused, drain := reps[0], reps[1]
	assert.Equal(t, "paused", paused.name)
	assert.Equal(t, "drain", drain.name)

	for _, r := range reps {
		// Exact: every order priced, at least once, in each customer's order, at its price.
		assert.Equal(t, 10000, r.in, r.name)
		assert.Equal(t, 10000, r.distinct, r.name)
		assert.Equal(t, 0, r.lost, r.name)
		assert.Equal(t, 0, r.violations, r.name)
		assert.Equal(t, 0, r.wrongPrice, r.name)
		assert.Equal(t, 10000, r.live+r.fallback, r.name)
		assert.Equal(t, 10000+r.duplicates, r.stored, r.name)
		// Exact: the duplicates are the entries the killed consumer had stored and not
		// acknowledged, listed before the restart, and no other.
		assert.Equal(t, r.inFlightAtKill, r.duplicates, r.name)
		assert.Equal(t, 0, r.dupOutsideKill, r.name)
		assert.Equal(t, r.pendingAtKill, r.claimed, r.name)
		assert.Equal(t, 0, r.pendingAtEnd, r.name)
		// The Window alone bounds only the orders taken and not yet sent: with OrderByKey,
		// while one customer's order waits (a retry's backoff, a hold), the other customers'
		// results go out and are stored above the commit watermark, which stays below the
		// waiting order. MaxUncommitted bounds the orders taken and not below it, and so the
		// duplicates. The kill came once killAt results were stored.
		assert.LessOrEqual(t, r.duplicates, maxUncommitted, r.name)
		assert.GreaterOrEqual(t, r.storedAtKill, cfg.killAt, r.name)
		assert.Less(t, r.storedAtKill, cfg.orders, r.name)
		assert.Empty(t, failed(r.checks()), r.name)
	}

	// Paused: only the orders whose every attempt failed before the breaker opened are
	// answered by the fallback; every other order waited for the gateway.
	assert.LessOrEqual(t, paused.fallback, maxPausedFallback)
	assert.GreaterOrEqual(t, paused.live, 10000-maxPausedFallback)
	assert.Positive(t, paused.held)
	assert.GreaterOrEqual(t, paused.longest, minLongest(paused))
	assert.LessOrEqual(t, paused.longest, maxLongest(paused))
	// Drain: the backlog read during the outage went to the fallback; nothing was held.
	assert.GreaterOrEqual(t, drain.fallback, minDrainFallback)
	assert.Equal(t, 0, drain.held)
	assert.Equal(t, time.Duration(0), drain.paused)
}

// TestTally checks the counting on results written by hand: a duplicate of an order that was
// pending at the kill, one that was not, an order priced before an earlier order of its
// customer, a lost order, a wrong price and a fallback answer.
func TestTally(t *testing.T) {
	ctx := t.Context()
	rdb := redis.NewClient(&redis.Options{Addr: redisForTest(t)})
	defer rdb.Close()
	orders := makeOrders(8, 2, 5)
	require.NoError(t, produce(ctx, rdb, orders))
	ids := make([]string, len(orders))
	entries, err := rdb.XRange(ctx, ordersStream, "-", "+").Result()
	require.NoError(t, err)
	require.Len(t, entries, len(orders))
	for i, e := range entries {
		ids[i] = e.ID
	}
	// The first order of each customer, then every order of customer c-001 after the first
	// of c-000, in a mixed order.
	store := func(i int, live string, cents int64, pausedUS string) {
		o := orders[i]
		require.NoError(t, rdb.XAdd(ctx, &redis.XAddArgs{Stream: resultsStream, Values: []any{
			"order", o.ID, "customer", o.Customer, "seq", o.Seq, "sku", o.SKU, "entry", ids[i],
			"cents", cents, "live", live, "paused_us", pausedUS, "consumer", "test",
		}}).Err())
	}
	byCustomer := map[string][]int{}
	for i, o := range orders {
		byCustomer[o.Customer] = append(byCustomer[o.Customer], i)
	}
	a, b := byCustomer["c-000"], byCustomer["c-001"]
	require.GreaterOrEqual(t, len(a), 3, "orders of c-000: %v", orders)
	require.GreaterOrEqual(t, len(b), 3, "orders of c-001: %v", orders)
	price := func(i int) int64 { return payment.ListPrice(orders[i].SKU) }

	store(a[0], "1", price(a[0]), "0")
	store(a[2], "1", price(a[2]), "0")      // before a[1]
	store(a[1], "0", price(a[1]), "250000") // a violation, held for 0.25s
	store(a[0], "1", price(a[0]), "0")      // a duplicate of an entry pending at the kill
	store(b[0], "1", price(b[0])+1, "0")    // a wrong price
	store(b[0], "1", price(b[0]), "0")      // a duplicate of an entry not pending at the kill
	for _, i := range b[2:] {               // b[1] lost
		store(i, "1", price(i), "0")
	}
	for _, i := range a[3:] {
		store(i, "1", price(i), "0")
	}

	r := &report{inFlight: map[string]bool{ids[a[0]]: true}}
	require.NoError(t, r.tally(ctx, rdb, orders))
	assert.Equal(t, 8, r.in)
	assert.Equal(t, 7, r.distinct)
	assert.Equal(t, 1, r.lost)
	assert.Equal(t, 1, r.violations)
	assert.Equal(t, 2, r.duplicates)
	assert.Equal(t, 1, r.dupOutsideKill)
	assert.Equal(t, 1, r.wrongPrice)
	assert.Equal(t, 6, r.live)
	assert.Equal(t, 1, r.fallback)
	assert.Equal(t, 9, r.stored)
	assert.Equal(t, 1, r.held)
	assert.Equal(t, 250*time.Millisecond, r.paused)
	assert.Equal(t, 250*time.Millisecond, r.longest)
	assert.Equal(t, 0, r.pendingAtEnd) // nothing was read by the group
}

// TestMakeOrders pins the orders every run produces.
func TestMakeOrders(t *testing.T) {
	orders := makeOrders(10000, 200, 400)
	require.Len(t, orders, 10000)
	seq := map[string]int{}
	for i, o := range orders {
		assert.Equal(t, seq[o.Customer], o.Seq, "order %d", i)
		seq[o.Customer]++
	}
	assert.Len(t, seq, 200)
	assert.Equal(t, orders, makeOrders(10000, 200, 400))
}
