package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/stream"
	"github.com/levee-go/levee/timelimiter"
)

func TestClassifyNamesThePipelinesLastError(t *testing.T) {
	gateway := &payment.GatewayError{Status: 503}
	exhausted := &retry.MaxRetriesExceededError{Name: "pricing", Attempts: 3, LastErr: gateway}
	noPrice := &fallback.Error{Name: "x", Cause: &circuitbreaker.CallNotPermittedError{Name: "pricing"},
		Err: fmt.Errorf("sku MUG-001: %w", fallback.ErrNoLastKnown)}
	for _, tc := range []struct {
		err  error
		want cause
	}{
		{&circuitbreaker.CallNotPermittedError{Name: "pricing", State: circuitbreaker.Open}, causeOpen},
		{noPrice, causeOpen},
		{exhausted, causeGateway},
		{gateway, causeGateway},
		{&retry.MaxRetriesExceededError{LastErr: &timelimiter.TimeoutError{Name: "pricing"}}, causeTimeout},
		{bulkhead.ErrBulkheadFull, causeRefused},
		{ratelimiter.ErrRequestNotPermitted, causeRefused},
		{&payment.InvalidOrderError{Order: "BAD-1", Status: 422}, causeOther},
		{io.ErrUnexpectedEOF, causeOther},
	} {
		assert.Equal(t, tc.want, classify(tc.err), "%v", tc.err)
	}
}

func TestLastKnownServesTheLastLivePriceMarkedStale(t *testing.T) {
	p := &pricer{}
	ctx := context.Background()
	mug := Order{ID: "ORD-1", SKU: "MUG-001"}

	_, err := p.lastKnown(ctx, mug, payment.ErrGateway)
	require.ErrorIs(t, err, fallback.ErrNoLastKnown, "nothing priced yet")
	assert.Contains(t, err.Error(), "MUG-001")

	at := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	p.last.Put("MUG-001", Quote{SKU: "MUG-001", UnitCents: 1250, PricedAt: at})
	q, err := p.lastKnown(ctx, mug, payment.ErrGateway)
	require.NoError(t, err)
	assert.Equal(t, Quote{SKU: "MUG-001", UnitCents: 1250, Stale: true, PricedAt: at}, q)
	stored, _ := p.last.Get("MUG-001")
	assert.False(t, stored.Stale, "the cache keeps the live quote; only the answer is marked")

	_, err = p.lastKnown(ctx, Order{SKU: "MUG-002"}, payment.ErrGateway)
	assert.ErrorIs(t, err, fallback.ErrNoLastKnown, "another SKU's price is not an answer")
}

// The schedule switches the gateway's mode at each phase's first order, and only there.
func TestScheduleSwitchesTheGatewayByOrderCount(t *testing.T) {
	gw, err := payment.Start()
	require.NoError(t, err)
	defer gw.Close()
	phases := []phase{{"a", 0, payment.ModeOK, 0}, {"b", 3, payment.ModeFail, 0}, {"c", 5, payment.ModeSlow, 0}}
	s := newSchedule(gw, phases, time.Now())
	wantPhase := []int{0, 0, 0, 1, 1, 2, 2}
	wantMode := []payment.Mode{payment.ModeOK, payment.ModeOK, payment.ModeOK, payment.ModeFail,
		payment.ModeFail, payment.ModeSlow, payment.ModeSlow}
	for i := range wantPhase {
		if i == 4 {
			gw.SetMode(payment.ModeHang) // not the schedule's doing: it must leave it alone
		}
		s.enter(i)
		assert.Equal(t, wantPhase[i], s.of(i), "phase of order %d", i)
		assert.Equal(t, wantPhase[i], s.now(), "phase in force at order %d", i)
		if i != 4 {
			assert.Equal(t, wantMode[i], gw.Mode(), "mode at order %d", i)
		}
	}
	assert.Equal(t, payment.ModeSlow, gw.Mode())
	for i, b := range s.began {
		assert.GreaterOrEqual(t, b, time.Duration(0), "phase %d began", i)
	}
	assert.LessOrEqual(t, s.began[0], s.began[1])
	assert.LessOrEqual(t, s.began[1], s.began[2])
}

// A phase that lasts a time hands over to the next one on the clock, orders arriving or not;
// orders then arrive in the phase in force. Stopped, the schedule switches no more.
func TestScheduleEndsATimedPhaseByTheClock(t *testing.T) {
	gw, err := payment.Start()
	require.NoError(t, err)
	defer gw.Close()
	synctest.Test(t, func(t *testing.T) {
		phases := []phase{{"a", 0, payment.ModeOK, 0}, {"b", 2, payment.ModeFail, time.Second},
			{"c", -1, payment.ModeSlow, 2 * time.Second}, {"d", -1, payment.ModeOK, 0}}
		start := time.Now()
		s := newSchedule(gw, phases, start)
		defer s.stop()
		s.enter(0)
		s.enter(1)
		s.enter(2)
		assert.Equal(t, payment.ModeFail, gw.Mode())
		for i := 3; i < 10; i++ {
			s.enter(i) // orders counted past b's start do not end it
		}
		assert.Equal(t, 1, s.now())

		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, 2, s.now())
		assert.Equal(t, payment.ModeSlow, gw.Mode())
		s.enter(10)

		time.Sleep(2 * time.Second)
		synctest.Wait()
		assert.Equal(t, 3, s.now())
		assert.Equal(t, payment.ModeOK, gw.Mode())
		s.enter(11)

		want := []int{0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3}
		for i, ph := range want {
			assert.Equal(t, ph, s.of(i), "phase of order %d", i)
		}
		assert.Equal(t, []time.Duration{0, 0, time.Second, 3 * time.Second}, s.beganAt())
	})
}

// A stopped schedule leaves the gateway alone: the timer of a phase under way does not fire.
func TestScheduleStoppedSwitchesNoMore(t *testing.T) {
	gw, err := payment.Start()
	require.NoError(t, err)
	defer gw.Close()
	synctest.Test(t, func(t *testing.T) {
		phases := []phase{{"a", 0, payment.ModeFail, time.Second}, {"b", -1, payment.ModeOK, 0}}
		s := newSchedule(gw, phases, time.Now())
		s.enter(0)
		s.stop()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		assert.Equal(t, 0, s.now())
		assert.Equal(t, payment.ModeFail, gw.Mode())
		assert.Equal(t, []time.Duration{0, -1}, s.beganAt())
	})
}

func result(i int, sku string, v Quote, fb bool, cause, err error) stream.Result[Order, Quote] {
	return stream.Result[Order, Quote]{Index: i, In: Order{SKU: sku}, Value: v, Fallback: fb, Cause: cause, Err: err}
}

// add sorts each result into exactly one bin and spots every wrong answer.
func TestReportAddSortsEachResult(t *testing.T) {
	cfg := config{Concurrency: 2, Phases: []phase{{"ok", 0, payment.ModeOK, 0}, {"fail", 4, payment.ModeFail, 0}}}
	r := newReport(cfg, "")
	mug := payment.ListPrice("MUG-001")
	open := &circuitbreaker.CallNotPermittedError{Name: "pricing"}
	noPrice := &fallback.Error{Cause: open, Err: fallback.ErrNoLastKnown}

	r.add(result(0, "MUG-001", Quote{SKU: "MUG-001", UnitCents: mug}, false, nil, nil), 0)               // live
	r.add(result(1, "MUG-001", Quote{SKU: "MUG-001", UnitCents: mug + 1}, false, nil, nil), 0)           // live, wrong price
	r.add(result(2, "MUG-001", Quote{SKU: "MUG-001", UnitCents: mug, Stale: true}, true, open, nil), 0)  // cached, in flight at the switch
	r.add(result(3, "MUG-001", Quote{}, false, nil, noPrice), 0)                                         // no price, in flight at the switch
	r.add(result(5, "MUG-001", Quote{SKU: "MUG-001", UnitCents: mug}, true, payment.ErrGateway, nil), 1) // out of order, cached not marked
	r.add(result(5, "MUG-002", Quote{}, false, nil, errors.New("boom")), 1)                              // unexpected
	r.add(result(6, "MUG-001", Quote{SKU: "MUG-001", UnitCents: mug, Stale: true}, true, open, nil), 1)  // cached
	r.add(result(7, "MUG-001", Quote{SKU: "MUG-001", UnitCents: mug, Stale: true}, false, nil, nil), 1)  // live, marked stale

	assert.Equal(t, 8, r.out)
	assert.Equal(t, 1, r.outOfOrder, "index 5 came in the 5th place, where 4 belonged")
	assert.Equal(t, 2, r.wrongLive)
	assert.Equal(t, 1, r.wrongCached)
	assert.Equal(t, 1, r.unexpected)
	assert.EqualError(t, r.firstUnexpected, "boom")
	assert.Equal(t, 0, r.settledMisses, "orders 2 and 3 may meet the failing gateway")
	assert.Equal(t, phaseTally{orders: 4, live: 2, cached: 1, noPrice: 1,
		causes: [numCauses]int{causeOpen: 2}}, r.phases[0])
	assert.Equal(t, phaseTally{orders: 4, live: 1, cached: 2,
		causes: [numCauses]int{causeOpen: 1, causeGateway: 1}}, r.phases[1])

	assert.Equal(t, 1, r.missedCache, "MUG-001 was priced live at 0, 3 places (≥ Concurrency) before 3")
	mug4 := payment.ListPrice("MUG-004")
	r.add(result(8, "MUG-004", Quote{SKU: "MUG-004", UnitCents: mug4}, false, nil, nil), 1)
	r.add(result(9, "MUG-004", Quote{}, false, nil, noPrice), 1)
	r.add(result(10, "MUG-003", Quote{}, false, nil, noPrice), 1)
	assert.Equal(t, 1, r.missedCache, "order 9 may have been read before order 8 was priced; "+
		"MUG-003 was never priced")

	r2 := newReport(cfg, "")
	failed := &fallback.Error{Cause: payment.ErrGateway, Err: fallback.ErrNoLastKnown}
	r2.add(result(0, "MUG-001", Quote{}, false, nil, failed), 0)
	r2.add(result(1, "MUG-001", Quote{}, false, nil, failed), 0)
	r2.add(result(2, "MUG-001", Quote{}, false, nil, failed), 0)
	assert.Equal(t, 2, r2.settledMisses, "orders 0 and 1 had their answer before the switch")

	// A timeout in the healthy phase, and the refusal of the breaker it opened, are the
	// machine's speed, not a miss; an error of no known kind is one.
	r3 := newReport(cfg, "")
	timedOut := &fallback.Error{Cause: timelimiter.ErrTimeout, Err: fallback.ErrNoLastKnown}
	r3.add(result(0, "MUG-001", Quote{}, false, nil, timedOut), 0)
	r3.add(result(1, "MUG-001", Quote{}, false, nil, noPrice), 0)
	r3.add(result(2, "MUG-001", Quote{}, false, nil, errors.New("boom")), 0)
	assert.Equal(t, 0, r3.settledMisses, "order 2 may meet the failing gateway")
	r3.add(result(0, "MUG-001", Quote{}, false, nil, errors.New("boom")), 0)
	assert.Equal(t, 1, r3.settledMisses, "an unknown error before the switch")
}

// goodReport is a report whose every check holds.
func goodReport() *report {
	cfg := config{Concurrency: 8, Phases: []phase{
		{"healthy", 0, payment.ModeOK, 0}, {"failing", 10, payment.ModeFail, 0}, {"healthy again", 20, payment.ModeOK, 0}}}
	r := newReport(cfg, "http://127.0.0.1:1")
	r.in, r.out = 30, 30
	r.phases[0] = phaseTally{orders: 10, live: 10}
	r.phases[1] = phaseTally{orders: 10, cached: 9, noPrice: 1, causes: [numCauses]int{causeOpen: 10}}
	r.phases[2] = phaseTally{orders: 10, live: 9, cached: 1, causes: [numCauses]int{causeOpen: 1}}
	r.transitions = []transition{
		{phase: 1, from: circuitbreaker.Closed, to: circuitbreaker.Open},
		{phase: 2, from: circuitbreaker.Open, to: circuitbreaker.HalfOpen},
		{phase: 2, from: circuitbreaker.HalfOpen, to: circuitbreaker.Closed},
	}
	r.finalState = circuitbreaker.Closed
	r.maxInFlight, r.limit = 8, 8
	r.permitsBack = true
	r.goroutinesBefore, r.goroutinesAfter = 3, 3
	return r
}

// Each invariant can fail, and when it does it is the only check that fails, by name.
func TestChecksNameTheBrokenInvariant(t *testing.T) {
	require.Empty(t, failed(goodReport().checks()))
	for _, tc := range []struct {
		check string
		brk   func(r *report)
	}{
		{"orders in = results out", func(r *report) { r.out = 29 }},
		{"orders in = results out", func(r *report) { r.in, r.out = 0, 0 }},
		{"results in input order", func(r *report) { r.outOfOrder = 1 }},
		{"every result is live, cached or has no cached price", func(r *report) { r.unexpected = 1 }},
		{"live answers are the gateway's price", func(r *report) { r.wrongLive = 1 }},
		{"cached answers are the last known price, marked stale", func(r *report) { r.wrongCached = 1 }},
		{"no price only for SKUs not priced live before", func(r *report) { r.missedCache = 1 }},
		{"every order not priced live has a known cause", func(r *report) { r.phases[1].causes[causeOther] = 1 }},
		{"healthy phase: no order failed for a 503, bar the 8 in flight at the switch", func(r *report) { r.settledMisses = 1 }},
		{"the breaker opened while the gateway failed, or was open already", func(r *report) {
			r.transitions = []transition{
				{phase: 0, from: circuitbreaker.Closed, to: circuitbreaker.Open},
				{phase: 0, from: circuitbreaker.Open, to: circuitbreaker.HalfOpen},
				{phase: 0, from: circuitbreaker.HalfOpen, to: circuitbreaker.Closed},
			}
		}},
		{"breaker transitions chain from CLOSED to its final state", func(r *report) {
			r.transitions = append(r.transitions[:1], r.transitions[2]) // OPEN → HALF_OPEN lost
		}},
		{"breaker transitions chain from CLOSED to its final state", func(r *report) { r.transitions = r.transitions[:2] }},
		{"last phase (healthy): the breaker closed again, bar timeouts", func(r *report) { r.phases[2].live = 0 }},
		{"last phase (healthy): the breaker closed again, bar timeouts", func(r *report) {
			r.transitions = r.transitions[:2]
			r.finalState = circuitbreaker.HalfOpen
		}},
		{"max calls in flight at the gateway ≤ bulkhead size = concurrency", func(r *report) { r.maxInFlight = 9 }},
		{"max calls in flight at the gateway ≤ bulkhead size = concurrency", func(r *report) { r.limit = 16 }},
		{"every bulkhead permit is back", func(r *report) { r.permitsBack = false }},
		{"no goroutine left behind (after ≤ before, client and gateway closed)", func(r *report) { r.goroutinesAfter = 4 }},
		{"drain: fallback answers ≥ a quarter of the orders", func(r *report) {
			r.phases[1] = phaseTally{orders: 10, live: 4, cached: 6, causes: [numCauses]int{causeOpen: 6}}
			r.phases[2].cached, r.phases[2].live = 0, 10 // 6 of 30 answered by the fallback
		}},
	} {
		r := goodReport()
		tc.brk(r)
		var names []string
		for _, c := range failed(r.checks()) {
			names = append(names, c.name)
		}
		assert.Equal(t, []string{tc.check}, names)
	}
}

// pausedReport is a paused run's report whose every check holds: 1,000 orders, 60 of them
// answered by the fallback.
func pausedReport() *report {
	r := goodReport()
	r.cfg.Pause = true
	r.in, r.out = 1000, 1000
	r.phases[0] = phaseTally{orders: 300, live: 300}
	r.phases[1] = phaseTally{orders: 10, cached: 9, noPrice: 1, causes: [numCauses]int{causeGateway: 10}}
	r.phases[2] = phaseTally{orders: 690, live: 640, cached: 50, causes: [numCauses]int{causeGateway: 50}}
	r.held, r.paused, r.longest = 3, 2*time.Second, time.Second
	return r
}

// The paused run's checks hold at their bounds and fail one by one past them; a drained
// run's check is not among them.
func TestPausedChecksBoundTheFallback(t *testing.T) {
	var names []string
	for _, c := range pausedReport().checks() {
		require.True(t, c.ok, "%s: %s", c.name, c.measured)
		names = append(names, c.name)
	}
	assert.Contains(t, names, "paused: fallback answers ≤ minimum calls × attempts = 60, + healthy timeouts")
	assert.NotContains(t, names, "drain: fallback answers ≥ a quarter of the orders")
	for _, tc := range []struct {
		checks []string
		brk    func(r *report)
	}{
		{[]string{"paused: fallback answers ≤ minimum calls × attempts = 60, + healthy timeouts", "paused: priced live ≥ orders − 60 − healthy timeouts"},
			func(r *report) { r.phases[2].live, r.phases[2].cached = 639, 51 }},
		{[]string{"paused: priced live ≥ orders − 60 − healthy timeouts"}, func(r *report) { r.in, r.out = 1001, 1001 }},
		{[]string{"paused: orders were held while the breaker refused them"}, func(r *report) { r.held, r.paused = 0, 0 }},
	} {
		r := pausedReport()
		tc.brk(r)
		var names []string
		for _, c := range failed(r.checks()) {
			names = append(names, c.name)
		}
		assert.Equal(t, tc.checks, names)
	}

	// Attempts cut off while the gateway was healthy widen both bounds by their number.
	r := pausedReport()
	r.phases[2].live, r.phases[2].cached = 635, 55
	r.timedOut[2].Store(5)
	assert.Empty(t, failed(r.checks()))
	r.timedOut[2].Store(4)
	assert.Len(t, failed(r.checks()), 2)
}

// A healthy last phase whose few orders the open breaker all refused leaves it OPEN: no call
// was let in to close it, which the check accepts; one order let in and not priced live is a
// failure.
func TestLastPhaseAllRefusedByTheOpenBreaker(t *testing.T) {
	r := goodReport()
	r.phases[2] = phaseTally{orders: 2, cached: 2, causes: [numCauses]int{causeOpen: 2}}
	r.transitions = r.transitions[:1]
	r.finalState = circuitbreaker.Open
	require.Empty(t, failed(r.checks()))

	r.phases[2] = phaseTally{orders: 2, cached: 2, causes: [numCauses]int{causeOpen: 1, causeGateway: 1}}
	var names []string
	for _, c := range failed(r.checks()) {
		names = append(names, c.name)
	}
	require.Equal(t, []string{"last phase (healthy): the breaker closed again, bar timeouts"}, names)
}
