package payment_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/examples/payment"
)

// bound is how long a test waits for something that should happen at once; reaching it means
// the test failed, never that it was slow to pass.
const bound = 5 * time.Second

// reach is the first deadline chargeUntilArrived gives a request: long enough for it to reach
// the gateway on an idle machine before it passes.
const reach = 50 * time.Millisecond

// chargeUntilArrived charges through c with a deadline, checking each answer with check, until
// a request reaches the gateway before its deadline passes: first with reach, then with deadlines
// four times longer each, up to bound. On a loaded machine a deadline can pass before the request
// is even sent, which the gateway never sees; what the tests check is what the gateway does with
// the requests it does see. It returns when the gateway is idle again.
func chargeUntilArrived(t *testing.T, gw *payment.Gateway, c *payment.Client, check func(error)) {
	t.Helper()
	for d := reach; ; d *= 4 {
		before := gw.Received()
		ctx, cancel := context.WithTimeout(context.Background(), d)
		_, err := c.Charge(ctx, "DH001")
		cancel()
		check(err)
		waitIdle(t, gw)
		if gw.Received() > before {
			return
		}
		require.Less(t, d, bound, "no request reached the gateway before its deadline")
	}
}

// start starts a gateway and a client for it, both closed when the test ends.
func start(t *testing.T) (*payment.Gateway, *payment.Client) {
	t.Helper()
	gw, err := payment.Start()
	require.NoError(t, err)
	c := payment.NewClient(gw.URL())
	t.Cleanup(func() {
		c.Close()
		require.NoError(t, gw.Close())
	})
	return gw, c
}

// arrivals returns a channel receiving each request as it reaches the gateway's handler.
func arrivals(gw *payment.Gateway, capacity int) <-chan payment.RequestInfo {
	ch := make(chan payment.RequestInfo, capacity)
	gw.OnRequest(func(r payment.RequestInfo) { ch <- r })
	return ch
}

// await receives from ch within bound.
func await[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(bound):
		require.FailNow(t, "nothing received within bound")
		panic("unreachable")
	}
}

// waitIdle waits, within bound, until the gateway has no request in flight.
func waitIdle(t *testing.T, gw *payment.Gateway) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	require.NoError(t, gw.WaitIdle(ctx))
}

// raw sends a request outside payment.Client and returns the answer's status and body.
func raw(t *testing.T, method, url string) (int, string) {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// rawStatus is raw's status alone.
func rawStatus(t *testing.T, method, url string) int {
	t.Helper()
	status, _ := raw(t, method, url)
	return status
}
