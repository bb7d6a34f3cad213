package leveehttp_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveehttp"
	"github.com/levee-go/levee/leveetest"
	"github.com/levee-go/levee/retry"
)

// server is an httptest server that counts its connections.
type server struct {
	*httptest.Server
	client *http.Transport // the transport the Transport under test sends with

	mu     sync.Mutex
	opened int // connections accepted so far
	open   int // connections not yet closed or hijacked
	change chan struct{}
}

// newServer starts h behind an in-memory listener (for synctest bubbles) or, with real, a
// loopback socket. shutdown runs when the test ends.
func newServer(t *testing.T, h http.Handler, real bool) *server {
	t.Helper()
	s := &server{change: make(chan struct{}, 1)}
	s.Server = httptest.NewUnstartedServer(h)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		s.mu.Lock()
		switch st {
		case http.StateNew:
			s.opened++
			s.open++
		case http.StateClosed, http.StateHijacked:
			s.open--
		}
		s.mu.Unlock()
		select {
		case s.change <- struct{}{}:
		default:
		}
	}
	t.Cleanup(func() { s.shutdown(t) })
	if real {
		s.Start()
		s.client = s.Server.Client().Transport.(*http.Transport)
		return s
	}
	s.Listener.Close()
	pl := leveetest.NewPipeListenerNamed("dependency.test")
	s.Listener = pl
	s.Start()
	s.client = &http.Transport{DialContext: pl.Dial}
	return s
}

// counts returns the number of connections accepted and still open.
func (s *server) counts() (opened, open int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opened, s.open
}

// shutdown closes the client's idle connections, checks that the server then holds no open
// connection (none was left busy by an unclosed body), and closes the server.
func (s *server) shutdown(t *testing.T) {
	t.Helper()
	s.client.CloseIdleConnections()
	deadline := time.After(5 * time.Second) // a bound for a failing test, never reached by a passing one
	for {
		if _, open := s.counts(); open == 0 {
			break
		}
		select {
		case <-s.change:
		case <-deadline:
			_, open := s.counts()
			t.Errorf("server still holds %d open connections", open)
			s.Close()
			return
		}
	}
	s.Close()
}

// patterns returns a breaker and a retry built with the package's configs.
func patterns(t *testing.T, cbc circuitbreaker.Config, rc retry.Config) (*circuitbreaker.CircuitBreaker, *retry.Retry) {
	t.Helper()
	b, err := circuitbreaker.New("dependency", leveehttp.CircuitBreakerConfig(cbc))
	require.NoError(t, err)
	r, err := retry.New("dependency", leveehttp.RetryConfig(rc))
	require.NoError(t, err)
	return b, r
}

// clientFor returns an http.Client sending to s through p.
func clientFor(t *testing.T, s *server, p *levee.Pipeline[*http.Response], cfg leveehttp.Config) *http.Client {
	t.Helper()
	tr, err := leveehttp.NewTransport(s.client, p, cfg)
	require.NoError(t, err)
	return &http.Client{Transport: tr}
}
