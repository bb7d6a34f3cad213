package leveetest_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveetest"
)

// An HTTP exchange over a PipeListener inside a bubble takes exactly the fake time the
// handler sleeps.
func TestPipeListenerServesHTTP(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := leveetest.NewPipeListenerNamed("pricing.test")
		assert.Equal(t, "pricing.test", ln.Addr().String())
		assert.Equal(t, "pipe", ln.Addr().Network())
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(time.Second)
			io.WriteString(w, "price=1999")
		})}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		tr := &http.Transport{DialContext: ln.Dial}
		start := time.Now()
		resp, err := (&http.Client{Transport: tr}).Get("http://pricing.test/price")
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, "price=1999", string(body))
		assert.Equal(t, time.Second, time.Since(start))
		tr.CloseIdleConnections()
		srv.Close()
		assert.ErrorIs(t, <-served, http.ErrServerClosed)
	})
}

func TestPipeListenerClosed(t *testing.T) {
	ln := leveetest.NewPipeListener()
	require.NoError(t, ln.Close())
	require.NoError(t, ln.Close())
	_, err := ln.Accept()
	assert.ErrorIs(t, err, net.ErrClosed)
	_, err = ln.Dial(context.Background(), "tcp", "x")
	assert.ErrorIs(t, err, net.ErrClosed)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = leveetest.NewPipeListener().Dial(ctx, "tcp", "x")
	assert.ErrorIs(t, err, context.Canceled)
}
