package payment

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Mode is how the gateway answers the requests that arrive while it is set. A request keeps the
// mode and latency it arrived under: switching modes affects the next requests, not the ones
// already waiting.
type Mode int32

const (
	// ModeOK answers 200 at once. It is the mode of a new gateway.
	ModeOK Mode = iota
	// ModeFail answers 503 Service Unavailable at once.
	ModeFail
	// ModeSlow answers 200 after the gateway's latency (see Gateway.SetLatency), or gives up
	// without answering as soon as the request's context ends.
	ModeSlow
	// ModeHang never answers: the handler waits until the request's context ends, as a
	// dependency that accepted the connection and then stalled. Only the caller's deadline or
	// cancellation (or Gateway.Close) ends such a request.
	ModeHang
)

// String returns "ok", "fail", "slow" or "hang".
func (m Mode) String() string {
	switch m {
	case ModeOK:
		return "ok"
	case ModeFail:
		return "fail"
	case ModeSlow:
		return "slow"
	case ModeHang:
		return "hang"
	}
	return fmt.Sprintf("Mode(%d)", int32(m))
}

// DefaultLatency is the latency of ModeSlow until Gateway.SetLatency changes it: the 300 ms of a
// healthy but slow payment provider.
const DefaultLatency = 300 * time.Millisecond

// Gateway is a payment and pricing gateway served over HTTP on 127.0.0.1. Its mode, latency,
// hook and counters may be used from any goroutine while it serves.
type Gateway struct {
	srv       *http.Server
	url       string
	serveDone chan struct{}
	// stop cancels the base context of every request, so that Close ends slow and hanging
	// handlers instead of waiting for their callers.
	stop context.CancelFunc
	base context.Context
	// conns counts open connections (through ConnState) so Close can wait for the goroutine
	// serving each one, which http.Server.Close does not.
	conns     sync.WaitGroup
	closing   atomic.Bool // set before anything closes, so no request's end counts as a cancel
	closeOnce sync.Once
	closeErr  error

	mode    atomic.Int32
	latency atomic.Int64 // nanoseconds
	hook    atomic.Pointer[func(RequestInfo)]

	c counters
}

// Start starts a gateway in ModeOK on a free port of 127.0.0.1 and returns once it accepts
// connections. The caller must Close it.
func Start() (*Gateway, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("payment: listen: %w", err)
	}
	g := &Gateway{
		url:       "http://" + ln.Addr().String(),
		serveDone: make(chan struct{}),
	}
	g.base, g.stop = context.WithCancel(context.Background())
	g.latency.Store(int64(DefaultLatency))
	g.c.idle = closedChan()

	mux := http.NewServeMux()
	mux.HandleFunc("POST /charge", g.charge)
	mux.HandleFunc("GET /price", g.price)
	g.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return g.base },
		ConnState:         g.trackConn,
		// Connections cut by cancelling clients are expected here; keep them off stderr so the
		// examples' output stays readable.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	go func() {
		defer close(g.serveDone)
		_ = g.srv.Serve(ln) // always http.ErrServerClosed once Close has run
	}()
	return g, nil
}

// trackConn runs on the server's goroutines. StateNew is reported by the accept loop before it
// starts the connection's goroutine, so every Add happens before Serve returns, hence before
// Close calls Wait.
func (g *Gateway) trackConn(_ net.Conn, s http.ConnState) {
	switch s {
	case http.StateNew:
		g.conns.Add(1)
	case http.StateClosed, http.StateHijacked:
		g.conns.Done()
	}
}

// URL returns the gateway's base URL, such as "http://127.0.0.1:41234", for NewClient.
func (g *Gateway) URL() string { return g.url }

// Close stops the gateway: it refuses new connections, ends every request still waiting in
// ModeSlow or ModeHang (their callers see the connection close; these are not counted as
// cancelled by the client), closes every connection, and returns once every goroutine the
// gateway started has ended. Later calls return the first call's result.
func (g *Gateway) Close() error {
	g.closeOnce.Do(func() {
		g.closing.Store(true)
		g.stop()
		g.closeErr = g.srv.Close()
		<-g.serveDone
		g.conns.Wait()
	})
	return g.closeErr
}

// SetMode switches how the gateway answers requests arriving from now on.
func (g *Gateway) SetMode(m Mode) { g.mode.Store(int32(m)) }

// Mode returns the current mode.
func (g *Gateway) Mode() Mode { return Mode(g.mode.Load()) }

// SetLatency sets how long ModeSlow takes to answer requests arriving from now on; a negative d
// counts as zero. It does not change the mode.
func (g *Gateway) SetLatency(d time.Duration) { g.latency.Store(int64(max(d, 0))) }

// Latency returns the latency of ModeSlow.
func (g *Gateway) Latency() time.Duration { return time.Duration(g.latency.Load()) }

// RequestInfo describes a request as it reaches a handler, for Gateway.OnRequest.
type RequestInfo struct {
	Endpoint string    // "charge" or "price"
	Key      string    // the order id for "charge", the SKU for "price"
	Mode     Mode      // the gateway's mode when the request arrived
	Seq      int64     // the request's number, counting from 1 since Start or ResetCounters
	Arrived  time.Time // when the handler received it
}

// OnRequest sets fn to be called for each request as it reaches a handler, after it is counted
// and before it is answered; nil removes the hook. fn runs on the server's goroutines,
// concurrently for concurrent requests, and delays the answer while it runs, so it must be quick
// and safe for concurrent use. Examples use it to print when each attempt arrived; tests use it
// to learn that a request is in flight.
func (g *Gateway) OnRequest(fn func(RequestInfo)) {
	if fn == nil {
		g.hook.Store(nil)
		return
	}
	g.hook.Store(&fn)
}
