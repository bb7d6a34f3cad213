package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// smallRun is the program's run scaled down for a test: the first 320 orders, with no pacing
// and short retry waits. Without pacing, orders refused by an open breaker pass in
// microseconds, so a phase could go by before the breaker's wait ends; with no wait, the
// breaker probes at the next call instead, and every phase meets it as it would in the program,
// however fast the machine.
func smallRun() config {
	return config{
		Limit:       320,
		Concurrency: 8,
		Phases: []phase{
			{"healthy", 0, payment.ModeOK, 0},
			{"failing", 100, payment.ModeFail, 0},
			{"slow", 180, payment.ModeSlow, 0},
			{"healthy again", 220, payment.ModeOK, 0},
		},
		TimeLimit:   50 * time.Millisecond,
		Backoff:     5 * time.Millisecond,
		SlowLatency: 250 * time.Millisecond,
	}
}

// backlogRun is the paused run of the program scaled down for a test: the first 320 orders
// as a backlog, the gateway failing from the 100th for 300ms, then slow for 300ms. The
// breaker waits 100ms when open: a held order is retried when the wait ends, and with no wait
// its every attempt would probe, and could use up its retries in HALF_OPEN.
func backlogRun(pause bool) config {
	cfg := smallRun()
	cfg.Phases = []phase{
		{"healthy", 0, payment.ModeOK, 0},
		{"failing", 100, payment.ModeFail, 300 * time.Millisecond},
		{"slow", -1, payment.ModeSlow, 300 * time.Millisecond},
		{"healthy again", -1, payment.ModeOK, 0},
	}
	cfg.OpenWait = 100 * time.Millisecond
	cfg.Pause = pause
	if pause {
		cfg.MaxPause = 5 * time.Second
	}
	return cfg
}

// The paused run against the real loopback gateway: the consumer waits the outage out, so the
// fallback answers only the orders whose retries ran out before the breaker opened, and the
// rest are priced live once the gateway is healthy again.
func TestPausedRunPricesTheBacklogLive(t *testing.T) {
	f, err := os.Open(ordersFile)
	require.NoError(t, err)
	defer f.Close()

	rep, err := priceOrders(context.Background(), backlogRun(true), f)
	require.NoError(t, err)
	var summary strings.Builder
	rep.print(&summary, ordersFile)
	t.Log("\n" + summary.String())

	var out []string
	for _, c := range failed(rep.checks()) {
		out = append(out, c.name+": "+c.measured)
	}
	require.Empty(t, out, "checks that failed")

	assert.Equal(t, 320, rep.in)
	assert.Equal(t, 320, rep.out)
	assert.Equal(t, 100, rep.phases[0].orders, "healthy: the first 100 orders, by count")
	total := rep.total()
	assert.Equal(t, 320, total.live+total.cached+total.noPrice)
	assert.GreaterOrEqual(t, total.live, 320-minimumCalls*attempts-int(rep.healthyTimeouts()))
	assert.Zero(t, total.causes[causeOpen], "no order answered for an open breaker")
	assert.Positive(t, rep.held)
	// One hold lasts at most until the outage is over and the breaker's wait has ended.
	assert.Less(t, rep.longest, 5*time.Second, "no hold ran into MaxPause")
	assert.GreaterOrEqual(t, rep.phases[3].began, 600*time.Millisecond, "the outage lasted its time")
	assert.Positive(t, rep.phases[3].live, "orders priced live after the outage")
	assertClosedBarTimeouts(t, rep)
	assert.LessOrEqual(t, rep.goroutinesAfter, rep.goroutinesBefore)
}

// assertClosedBarTimeouts asserts that the breaker ended CLOSED, unless attempts of the last,
// healthy, phase timed out: on a loaded machine a healthy answer may take longer than the time
// limit, and those timeouts may leave the breaker OPEN or HALF_OPEN at the end.
func assertClosedBarTimeouts(t *testing.T, rep *report) {
	t.Helper()
	if last := len(rep.timedOut) - 1; rep.timedOut[last].Load() == 0 {
		assert.Equal(t, circuitbreaker.Closed, rep.finalState, "no attempt of the last phase timed out")
	}
}

// The same backlog without the pause drains into the fallback once the breaker opens.
func TestDrainedBacklogAnswersFromTheFallback(t *testing.T) {
	f, err := os.Open(ordersFile)
	require.NoError(t, err)
	defer f.Close()

	rep, err := priceOrders(context.Background(), backlogRun(false), f)
	require.NoError(t, err)
	var out []string
	for _, c := range failed(rep.checks()) {
		out = append(out, c.name+": "+c.measured)
	}
	require.Empty(t, out, "checks that failed")
	assert.Equal(t, 320, rep.out)
	assert.Equal(t, 100, rep.phases[0].orders)
	total := rep.total()
	assert.GreaterOrEqual(t, total.cached+total.noPrice, 80, "a quarter of the orders, at least")
	assert.Positive(t, total.causes[causeOpen], "orders answered for an open breaker")
	assert.Zero(t, rep.held)
	assert.Zero(t, rep.paused)
}

// The program's core against the real loopback gateway: every invariant it checks holds, and
// the figures it reports add up.
func TestPriceOrdersKeepsTheInvariants(t *testing.T) {
	f, err := os.Open(ordersFile)
	require.NoError(t, err)
	defer f.Close()

	rep, err := priceOrders(context.Background(), smallRun(), f)
	require.NoError(t, err)
	var summary strings.Builder
	rep.print(&summary, ordersFile)
	t.Log("\n" + summary.String())

	var out []string
	for _, c := range failed(rep.checks()) {
		out = append(out, c.name+": "+c.measured)
	}
	require.Empty(t, out, "checks that failed")

	assert.Equal(t, 320, rep.in)
	assert.Equal(t, 320, rep.out)
	wantOrders := []int{100, 80, 40, 100}
	for i, p := range rep.phases {
		assert.Equal(t, wantOrders[i], p.orders, "orders of phase %d", i)
		assert.Equal(t, p.orders, p.live+p.cached+p.noPrice, "phase %d adds up", i)
		assert.GreaterOrEqual(t, p.began, time.Duration(0), "phase %d was reached", i)
	}
	// Healthy: every order not priced live timed out (a loaded machine may take longer than
	// the 50ms limit to carry an answer) or met the outage; the checks above count the rest.
	assert.Positive(t, rep.phases[0].live, "healthy: orders priced live")
	assert.Zero(t, rep.phases[1].live, "failing: no order priced live")
	// Orders of the slow phase time out, but for the last 8, whose retries may meet the
	// gateway healthy again.
	assert.LessOrEqual(t, rep.phases[2].live, 8, "slow: every attempt times out")
	assert.Positive(t, rep.phases[1].cached+rep.phases[2].cached, "the last known prices answered")
	assert.Positive(t, rep.answered503[1].Load(), "the failing gateway was asked")
	assert.Positive(t, rep.timedOut[2].Load(), "the slow gateway was asked and cut off")

	var requests int64
	for i := range rep.requests {
		requests += rep.requests[i].Load()
	}
	assert.Equal(t, rep.received, requests, "the hook saw every request the gateway counted")
	assert.LessOrEqual(t, rep.maxInFlight, int64(8))
	assertClosedBarTimeouts(t, rep)
	assert.LessOrEqual(t, rep.goroutinesAfter, rep.goroutinesBefore)
}

// A run cancelled before it starts prices nothing: the report says that orders were lost, by
// the name of the check, and the run still leaves no goroutine behind.
func TestPriceOrdersReportsACancelledRun(t *testing.T) {
	f, err := os.Open(ordersFile)
	require.NoError(t, err)
	defer f.Close()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := priceOrders(ctx, smallRun(), f)
	require.NoError(t, err)
	assert.Zero(t, rep.out)
	names := []string{}
	for _, c := range failed(rep.checks()) {
		names = append(names, c.name)
	}
	assert.Contains(t, names, "orders in = results out")
	assert.LessOrEqual(t, rep.goroutinesAfter, rep.goroutinesBefore)
}
