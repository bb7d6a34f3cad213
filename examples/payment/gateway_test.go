package payment_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/examples/payment"
)

func TestStartListensOnLoopback(t *testing.T) {
	gw, _ := start(t)
	assert.True(t, strings.HasPrefix(gw.URL(), "http://127.0.0.1:"), gw.URL())
	assert.NotEqual(t, "http://127.0.0.1:0", gw.URL())
	assert.Equal(t, payment.ModeOK, gw.Mode())
	assert.Equal(t, payment.DefaultLatency, gw.Latency())
}

func TestTwoGatewaysHaveDistinctPorts(t *testing.T) {
	a, _ := start(t)
	b, _ := start(t)
	assert.NotEqual(t, a.URL(), b.URL())
}

func TestModeOKCharges(t *testing.T) {
	gw, c := start(t)
	receipt, err := c.Charge(context.Background(), "DH001")
	require.NoError(t, err)
	assert.Equal(t, "PAID:DH001", receipt)
	assert.Equal(t, int64(1), gw.Received())
	assert.Equal(t, int64(0), gw.InFlight())
	assert.Equal(t, int64(1), gw.MaxInFlight())
	assert.Equal(t, int64(0), gw.CancelledByClient())
}

func TestModeOKChargeEscapesOrderID(t *testing.T) {
	_, c := start(t)
	receipt, err := c.Charge(context.Background(), "a b&c=d/é")
	require.NoError(t, err)
	assert.Equal(t, "PAID:a b&c=d/é", receipt)
}

func TestModeFailAnswers503(t *testing.T) {
	gw, c := start(t)
	gw.SetMode(payment.ModeFail)

	receipt, err := c.Charge(context.Background(), "DH001")
	assert.Empty(t, receipt)
	var ge *payment.GatewayError
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, 503, ge.Status)
	assert.NoError(t, ge.Err)
	assert.EqualError(t, err, "gateway 503")
	assert.ErrorIs(t, err, payment.ErrGateway)
	assert.NotErrorIs(t, err, payment.ErrInvalidOrder)

	cents, err := c.Price(context.Background(), "book-1")
	assert.Zero(t, cents)
	assert.EqualError(t, err, "gateway 503")
	assert.Equal(t, int64(2), gw.Received())
}

func TestModeSwitchesAtRuntime(t *testing.T) {
	gw, c := start(t)
	for i, m := range []payment.Mode{payment.ModeOK, payment.ModeFail, payment.ModeOK, payment.ModeFail} {
		gw.SetMode(m)
		assert.Equal(t, m, gw.Mode())
		_, err := c.Charge(context.Background(), fmt.Sprint("DH", i))
		if m == payment.ModeOK {
			assert.NoError(t, err, "request %d", i)
		} else {
			assert.ErrorIs(t, err, payment.ErrGateway, "request %d", i)
		}
	}
	assert.Equal(t, int64(4), gw.Received())
}

// The 422 rule holds in every mode, and at once: the slow and hanging modes would otherwise make
// these requests wait far beyond bound.
func TestInvalidOrderIn422EveryMode(t *testing.T) {
	gw, c := start(t)
	gw.SetLatency(time.Hour)
	modes := []payment.Mode{payment.ModeOK, payment.ModeFail, payment.ModeSlow, payment.ModeHang}
	for i, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			gw.SetMode(m)
			ctx, cancel := context.WithTimeout(context.Background(), bound)
			defer cancel()

			_, err := c.Charge(ctx, "BAD1")
			var ie *payment.InvalidOrderError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, payment.InvalidOrderError{Order: "BAD1", Status: 422}, *ie)
			assert.EqualError(t, err, "invalid order BAD1 (HTTP 422)")
			assert.ErrorIs(t, err, payment.ErrInvalidOrder)
			assert.NotErrorIs(t, err, payment.ErrGateway)

			_, err = c.Price(ctx, "BADSKU")
			assert.EqualError(t, err, "invalid order BADSKU (HTTP 422)")
			assert.Equal(t, int64(2*(i+1)), gw.Received())
		})
	}
	assert.Equal(t, int64(0), gw.CancelledByClient())
}

func TestOnlyThePrefixBADIsInvalid(t *testing.T) {
	_, c := start(t)
	for _, order := range []string{"DHBAD", "bad1", "BA", "xBAD"} {
		receipt, err := c.Charge(context.Background(), order)
		require.NoError(t, err, order)
		assert.Equal(t, "PAID:"+order, receipt)
	}
}

func TestMissingOrderAnswers400(t *testing.T) {
	gw, c := start(t)
	_, err := c.Charge(context.Background(), "")
	var ie *payment.InvalidOrderError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, 400, ie.Status)
	_, err = c.Price(context.Background(), "")
	assert.EqualError(t, err, "invalid order  (HTTP 400)")
	assert.Equal(t, int64(2), gw.Received())
}

func TestWrongMethodOrPathNeverReachesHandler(t *testing.T) {
	gw, _ := start(t)
	assert.Equal(t, 405, rawStatus(t, "GET", gw.URL()+"/charge?order=DH1"))
	assert.Equal(t, 405, rawStatus(t, "POST", gw.URL()+"/price?sku=s"))
	assert.Equal(t, 404, rawStatus(t, "GET", gw.URL()+"/refund"))
	assert.Equal(t, 200, rawStatus(t, "GET", gw.URL()+"/price?sku=s"))
	assert.Equal(t, int64(1), gw.Received())
}

func TestModeSlowAnswersAfterLatency(t *testing.T) {
	gw, c := start(t)
	const latency = 20 * time.Millisecond
	gw.SetLatency(latency)
	gw.SetMode(payment.ModeSlow)

	begin := time.Now()
	receipt, err := c.Charge(context.Background(), "DH001")
	took := time.Since(begin)
	require.NoError(t, err)
	assert.Equal(t, "PAID:DH001", receipt)
	assert.GreaterOrEqual(t, took, latency)

	begin = time.Now()
	cents, err := c.Price(context.Background(), "book-1")
	require.NoError(t, err)
	assert.Equal(t, payment.ListPrice("book-1"), cents)
	assert.GreaterOrEqual(t, time.Since(begin), latency)
	assert.Equal(t, int64(0), gw.CancelledByClient())
}

func TestModeSlowHonoursClientDeadline(t *testing.T) {
	gw, c := start(t)
	gw.SetLatency(time.Hour)
	gw.SetMode(payment.ModeSlow)

	chargeUntilArrived(t, gw, c, func(err error) {
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.NotErrorIs(t, err, payment.ErrGateway)
	})
	// Every request that reached the gateway saw its client's deadline end it there.
	assert.GreaterOrEqual(t, gw.Received(), int64(1))
	assert.Equal(t, gw.Received(), gw.CancelledByClient())
	assert.Equal(t, int64(0), gw.InFlight())
}

func TestModeSlowHonoursClientCancel(t *testing.T) {
	gw, c := start(t)
	gw.SetLatency(time.Hour)
	gw.SetMode(payment.ModeSlow)
	arrived := arrivals(gw, 1)

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Charge(ctx, "DH001")
		errc <- err
	}()
	info := await(t, arrived)
	assert.Equal(t, payment.ModeSlow, info.Mode)
	assert.Equal(t, int64(1), gw.InFlight())
	assert.Equal(t, int64(0), gw.CancelledByClient())

	cancel()
	err := await(t, errc)
	assert.Equal(t, context.Canceled, err, "the context's error, as is")
	waitIdle(t, gw)
	assert.Equal(t, int64(1), gw.CancelledByClient())
}

func TestModeSlowKeepsTheLatencyItArrivedWith(t *testing.T) {
	gw, c := start(t)
	gw.SetLatency(time.Hour)
	gw.SetMode(payment.ModeSlow)
	arrived := arrivals(gw, 1)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Charge(ctx, "DH001")
		errc <- err
	}()
	await(t, arrived)
	gw.SetLatency(0)
	_, err := c.Charge(context.Background(), "DH002")
	require.NoError(t, err, "a request arriving now has no latency")
	select {
	case err := <-errc:
		require.FailNow(t, "answered before its latency", "err: %v", err)
	default:
	}
	cancel()
	assert.ErrorIs(t, await(t, errc), context.Canceled)
}

func TestSetLatencyNegativeCountsAsZero(t *testing.T) {
	gw, c := start(t)
	gw.SetLatency(-time.Second)
	assert.Equal(t, time.Duration(0), gw.Latency())
	gw.SetMode(payment.ModeSlow)
	_, err := c.Charge(context.Background(), "DH001")
	assert.NoError(t, err)
}

// Each attempt of a time-limited retry ends at its own deadline, and the gateway sees each
// request's context end.
func TestModeHangAnswersOnlyWhenContextEnds(t *testing.T) {
	gw, c := start(t)
	gw.SetMode(payment.ModeHang)
	for attempt := 1; attempt <= 3; attempt++ {
		chargeUntilArrived(t, gw, c, func(err error) {
			require.ErrorIs(t, err, context.DeadlineExceeded, "attempt %d", attempt)
		})
		assert.Equal(t, gw.Received(), gw.CancelledByClient(), "attempt %d", attempt)
	}
	assert.GreaterOrEqual(t, gw.Received(), int64(3))
	assert.Equal(t, gw.Received(), gw.CancelledByClient())
	assert.Equal(t, int64(1), gw.MaxInFlight())
}

func TestModeHangKeepsHangingAfterModeSwitch(t *testing.T) {
	gw, c := start(t)
	gw.SetMode(payment.ModeHang)
	arrived := arrivals(gw, 2)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Charge(ctx, "HANG")
		errc <- err
	}()
	await(t, arrived)
	gw.SetMode(payment.ModeOK)
	receipt, err := c.Charge(context.Background(), "DH001")
	require.NoError(t, err)
	assert.Equal(t, "PAID:DH001", receipt)
	assert.Equal(t, int64(1), gw.InFlight(), "the hanging request is still waiting")
	assert.Equal(t, int64(2), gw.MaxInFlight())

	cancel()
	assert.ErrorIs(t, await(t, errc), context.Canceled)
	waitIdle(t, gw)
	assert.Equal(t, int64(1), gw.CancelledByClient())
}

func TestAlreadyCancelledContextNeverReachesGateway(t *testing.T) {
	gw, c := start(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Charge(ctx, "DH001")
	assert.Equal(t, context.Canceled, err)
	assert.Equal(t, int64(0), gw.Received())
}

func TestModeString(t *testing.T) {
	for m, want := range map[payment.Mode]string{
		payment.ModeOK: "ok", payment.ModeFail: "fail", payment.ModeSlow: "slow",
		payment.ModeHang: "hang", payment.Mode(9): "Mode(9)",
	} {
		assert.Equal(t, want, m.String())
	}
}

func TestUnknownModeAnswers500(t *testing.T) {
	gw, c := start(t)
	gw.SetMode(payment.Mode(9))
	_, err := c.Charge(context.Background(), "DH001")
	assert.EqualError(t, err, "gateway 500")
}
