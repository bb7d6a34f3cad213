package leveetest

import (
	"context"
	"net"
	"sync"
)

// PipeListener is an in-memory net.Listener for running an HTTP (or any) server and its
// clients inside a testing/synctest bubble: each Dial is one net.Pipe, whose blocking is
// durable inside a bubble, as a socket's is not, so fake time advances while a request is in
// flight. Serve it with http.Server.Serve (or set it as an httptest.Server's Listener before
// Start) and give its Dial to the client's transport:
//
//	ln := leveetest.NewPipeListener()
//	go srv.Serve(ln)
//	client := &http.Client{Transport: &http.Transport{DialContext: ln.Dial}}
//
// Every Dial connects to the listener whatever the address, so a URL's host is only a name.
// Close makes Accept and later Dials fail with net.ErrClosed; it does not close connections
// already made.
type PipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	addr  pipeAddr
}

// NewPipeListener returns a PipeListener whose Addr is "pipe.test".
func NewPipeListener() *PipeListener { return NewPipeListenerNamed("pipe.test") }

// NewPipeListenerNamed returns a PipeListener whose Addr().String() is name, the host a client's
// URL names (http://name/...).
func NewPipeListenerNamed(name string) *PipeListener {
	return &PipeListener{conns: make(chan net.Conn), done: make(chan struct{}), addr: pipeAddr(name)}
}

// Accept waits for the next Dial, and returns net.ErrClosed once the listener is closed.
func (l *PipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops the listener; it is safe to call more than once.
func (l *PipeListener) Close() error { l.once.Do(func() { close(l.done) }); return nil }

// Addr returns the listener's name, of network "pipe".
func (l *PipeListener) Addr() net.Addr { return l.addr }

// Dial connects to the listener, with http.Transport.DialContext's signature: the network and
// address are ignored. It waits for Accept, and returns net.ErrClosed when the listener is
// closed and ctx's error when ctx ends first.
func (l *PipeListener) Dial(ctx context.Context, _, _ string) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		server.Close()
		client.Close()
		return nil, net.ErrClosed
	case <-ctx.Done():
		server.Close()
		client.Close()
		return nil, ctx.Err()
	}
}

type pipeAddr string

func (pipeAddr) Network() string  { return "pipe" }
func (a pipeAddr) String() string { return string(a) }
