package payment_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/levee-go/levee/examples/payment"
)

func TestCloseEndsHangingRequestsAndLeaksNothing(t *testing.T) {
	gw, err := payment.Start()
	require.NoError(t, err)
	c := payment.NewClient(gw.URL())
	gw.SetMode(payment.ModeHang)
	const n = 4
	arrived := arrivals(gw, n)

	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := c.Charge(context.Background(), fmt.Sprint("DH", i))
			errs <- err
		}()
	}
	for range n {
		await(t, arrived)
	}
	require.NoError(t, gw.Close())
	for range n {
		err := await(t, errs)
		var ge *payment.GatewayError
		require.ErrorAs(t, err, &ge)
		assert.Equal(t, 0, ge.Status)
		assert.Error(t, ge.Err)
	}
	assert.Equal(t, int64(0), gw.InFlight())
	assert.Equal(t, int64(0), gw.CancelledByClient(), "closing is not the client's cancellation")
	assert.NoError(t, gw.Close(), "a second Close returns the first's result")

	_, err = c.Charge(context.Background(), "DH9")
	var ge *payment.GatewayError
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, 0, ge.Status)
	assert.ErrorIs(t, err, payment.ErrGateway)
	assert.True(t, strings.HasPrefix(err.Error(), "gateway unreachable: "), err.Error())

	c.Close()
	goleak.VerifyNone(t)
}

func TestCloseEndsSlowRequests(t *testing.T) {
	gw, err := payment.Start()
	require.NoError(t, err)
	c := payment.NewClient(gw.URL())
	defer c.Close()
	gw.SetLatency(time.Hour)
	gw.SetMode(payment.ModeSlow)
	arrived := arrivals(gw, 1)

	errc := make(chan error, 1)
	go func() {
		_, err := c.Charge(context.Background(), "DH001")
		errc <- err
	}()
	await(t, arrived)
	require.NoError(t, gw.Close())
	err = await(t, errc)
	assert.ErrorIs(t, err, payment.ErrGateway)
	assert.NotErrorIs(t, err, context.Canceled)
	assert.Equal(t, int64(0), gw.CancelledByClient())
}

func TestCloseConcurrentlyAndWithIdleConnections(t *testing.T) {
	gw, err := payment.Start()
	require.NoError(t, err)
	c := payment.NewClient(gw.URL())
	defer c.Close()
	for i := range 3 {
		_, err := c.Charge(context.Background(), fmt.Sprint("DH", i))
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = gw.Close() })
	}
	wg.Wait()
	for _, err := range errs {
		assert.NoError(t, err)
	}
}
