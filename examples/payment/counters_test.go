package payment_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/examples/payment"
)

func TestMaxInFlightWithConcurrentRequests(t *testing.T) {
	gw, c := start(t)
	gw.SetMode(payment.ModeHang)
	const n = 8
	arrived := arrivals(gw, n)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { _, errs[i] = c.Charge(ctx, fmt.Sprint("DH", i)) })
	}
	seqs := map[int64]bool{}
	for range n {
		seqs[await(t, arrived).Seq] = true
	}
	assert.Len(t, seqs, n, "sequence numbers are distinct")
	assert.Equal(t, int64(n), gw.InFlight())
	assert.Equal(t, int64(n), gw.MaxInFlight())

	cancel()
	wg.Wait()
	for i, err := range errs {
		assert.ErrorIs(t, err, context.Canceled, "request %d", i)
	}
	waitIdle(t, gw)
	assert.Equal(t, int64(0), gw.InFlight())
	assert.Equal(t, int64(n), gw.MaxInFlight(), "the high-water mark stays")
	assert.Equal(t, int64(n), gw.Received())
	assert.Equal(t, int64(n), gw.CancelledByClient())
}

func TestCountersUnderLoad(t *testing.T) {
	gw, c := start(t)
	const workers, each = 64, 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	failures := 0
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				order := fmt.Sprintf("W%d-%d", w, i)
				if i%5 == 4 {
					order = "BAD" + order
				}
				receipt, err := c.Charge(context.Background(), order)
				ok := err == nil && receipt == "PAID:"+order
				if strings.HasPrefix(order, "BAD") {
					ok = errors.Is(err, payment.ErrInvalidOrder)
				}
				if !ok {
					mu.Lock()
					failures++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	assert.Zero(t, failures)
	assert.Equal(t, int64(workers*each), gw.Received())
	assert.Equal(t, int64(0), gw.InFlight())
	assert.GreaterOrEqual(t, gw.MaxInFlight(), int64(1))
	assert.LessOrEqual(t, gw.MaxInFlight(), int64(workers))
	assert.Equal(t, int64(0), gw.CancelledByClient())
}

func TestResetCounters(t *testing.T) {
	gw, c := start(t)
	gw.SetMode(payment.ModeHang)
	arrived := arrivals(gw, 4)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Charge(ctx, "HANG")
		errc <- err
	}()
	await(t, arrived)
	gw.SetMode(payment.ModeOK)
	_, err := c.Charge(context.Background(), "DH001")
	require.NoError(t, err)
	require.Equal(t, int64(2), gw.MaxInFlight())

	gw.ResetCounters()
	assert.Equal(t, int64(0), gw.Received())
	assert.Equal(t, int64(1), gw.InFlight(), "a live gauge, not reset")
	assert.Equal(t, int64(1), gw.MaxInFlight(), "reset to what is in flight")

	_, err = c.Charge(context.Background(), "DH002")
	require.NoError(t, err)
	assert.Equal(t, int64(1), gw.Received())
	assert.Equal(t, int64(2), await(t, arrived).Seq, "DH001 came after the hanging request")
	assert.Equal(t, int64(1), await(t, arrived).Seq, "DH002: sequence numbers restart")

	cancel()
	<-errc
	waitIdle(t, gw)
	assert.Equal(t, int64(1), gw.CancelledByClient())
	gw.ResetCounters()
	assert.Equal(t, int64(0), gw.CancelledByClient())
	assert.Equal(t, int64(0), gw.MaxInFlight())
}

func TestOnRequestReportsEachArrival(t *testing.T) {
	gw, c := start(t)
	arrived := arrivals(gw, 2)
	before := time.Now()
	_, err := c.Charge(context.Background(), "DH001")
	require.NoError(t, err)
	gw.SetMode(payment.ModeFail)
	_, err = c.Price(context.Background(), "book-1")
	require.Error(t, err)

	first, second := await(t, arrived), await(t, arrived)
	assert.Equal(t, "charge", first.Endpoint)
	assert.Equal(t, "DH001", first.Key)
	assert.Equal(t, payment.ModeOK, first.Mode)
	assert.Equal(t, int64(1), first.Seq)
	assert.False(t, first.Arrived.Before(before))
	assert.Equal(t, "price", second.Endpoint)
	assert.Equal(t, "book-1", second.Key)
	assert.Equal(t, payment.ModeFail, second.Mode)
	assert.Equal(t, int64(2), second.Seq)
	assert.False(t, second.Arrived.Before(first.Arrived))

	gw.OnRequest(nil)
	_, err = c.Charge(context.Background(), "DH002")
	require.Error(t, err)
	assert.Empty(t, arrived, "the hook is removed")
}

func TestWaitIdleHonoursContext(t *testing.T) {
	gw, c := start(t)
	require.NoError(t, gw.WaitIdle(context.Background()), "idle at start")

	gw.SetMode(payment.ModeHang)
	arrived := arrivals(gw, 1)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Charge(ctx, "HANG")
		errc <- err
	}()
	await(t, arrived)

	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer wcancel()
	assert.ErrorIs(t, gw.WaitIdle(wctx), context.DeadlineExceeded)

	cancel()
	<-errc
	waitIdle(t, gw)
}
