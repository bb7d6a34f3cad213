package leveehttp_test

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/keyed"
	"github.com/levee-go/levee/leveehttp"
)

// twoHosts starts a host answering 503 and one answering 200, on loopback sockets, and returns
// their URLs and a plain transport to both, its idle connections closed before the servers.
func twoHosts(t *testing.T) (failing, healthy string, next *http.Transport) {
	t.Helper()
	bad := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}), true)
	good := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}), true)
	next = &http.Transport{}
	t.Cleanup(next.CloseIdleConnections)
	return bad.URL, good.URL, next
}

// perHost builds a breaker per host that opens after two failures out of two calls, and
// records the hosts built in order.
func perHost(built *[]string, mu *sync.Mutex) func(string) (levee.Patterns, error) {
	cfg := leveehttp.CircuitBreakerConfig(circuitbreaker.Config{SlidingWindowSize: 2, MinimumNumberOfCalls: 2})
	return func(host string) (levee.Patterns, error) {
		mu.Lock()
		*built = append(*built, host)
		mu.Unlock()
		return levee.NewPatterns(host, levee.Configs{CircuitBreaker: &cfg})
	}
}

func TestKeyedTransportOpenBreakerRefusesOnlyItsHost(t *testing.T) {
	bad, good, next := twoHosts(t)
	var built []string
	var mu sync.Mutex
	kt, err := leveehttp.NewKeyedTransport(next, perHost(&built, &mu), leveehttp.KeyedConfig{})
	require.NoError(t, err)
	client := &http.Client{Transport: kt}

	for range 2 {
		resp, err := client.Get(bad)
		require.NoError(t, err)
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		resp.Body.Close()
	}
	_, err = client.Get(bad)
	assert.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
	for range 3 {
		resp, err := client.Get(good)
		require.NoError(t, err, "the other host's breaker is closed")
		assert.Equal(t, "ok", readAll(t, resp))
	}

	badHost, goodHost := host(t, bad), host(t, good)
	assert.Equal(t, []string{badHost, goodHost}, built, "one set of patterns per host, built once")
	states := map[string]circuitbreaker.State{}
	for k, ps := range kt.All() {
		states[k] = ps.CircuitBreaker.State()
		assert.Equal(t, k, ps.CircuitBreaker.Name())
	}
	assert.Equal(t, map[string]circuitbreaker.State{badHost: circuitbreaker.Open, goodHost: circuitbreaker.Closed}, states)
	ps, err := kt.Patterns(goodHost)
	require.NoError(t, err)
	assert.Equal(t, 2, ps.CircuitBreaker.Metrics().NumberOfSuccessfulCalls, "the last two calls of the window of two")
	m := kt.Metrics()
	assert.Equal(t, keyed.Metrics{Keys: 2, Hits: 5, Misses: 2, Created: 2}, m)
}

func TestKeyedTransportMaxKeys(t *testing.T) {
	bad, good, next := twoHosts(t)
	var built []string
	var mu sync.Mutex
	kt, err := leveehttp.NewKeyedTransport(next, perHost(&built, &mu), leveehttp.KeyedConfig{Keyed: keyed.Config{MaxKeys: 1}})
	require.NoError(t, err)
	client := &http.Client{Transport: kt}

	get := func(u string) error {
		resp, err := client.Get(u)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	require.NoError(t, get(bad))  // bad's breaker: one failure, CLOSED
	require.NoError(t, get(good)) // evicts bad, the least recently used
	require.NoError(t, get(bad))  // evicts good; bad's breaker is a fresh one
	require.NoError(t, get(bad))  // two failures of two: bad's breaker opens
	err = get(good)
	assert.ErrorIs(t, err, keyed.ErrAllKeysProtected, "the open breaker is not evicted")
	assert.True(t, levee.IsRejection(err))
	err = get(bad)
	assert.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)

	badHost, goodHost := host(t, bad), host(t, good)
	assert.Equal(t, []string{badHost, goodHost, badHost}, built)
	m := kt.Metrics()
	assert.Equal(t, 1, m.Keys)
	assert.Equal(t, uint64(2), m.EvictedCapacity)
	assert.Equal(t, uint64(1), m.RefusedProtected)
}

func TestKeyedTransportCustomKeyAndBuildError(t *testing.T) {
	_, good, next := twoHosts(t)
	var built []string
	var mu sync.Mutex
	build := perHost(&built, &mu)
	kt, err := leveehttp.NewKeyedTransport(next, func(key string) (levee.Patterns, error) {
		if key == "" {
			return levee.Patterns{}, errors.New("no tenant")
		}
		return build(key)
	}, leveehttp.KeyedConfig{Key: func(r *http.Request) string { return r.Header.Get("Tenant") }})
	require.NoError(t, err)

	for _, tenant := range []string{"a", "b", "a"} {
		req, err := http.NewRequest(http.MethodGet, good, nil)
		require.NoError(t, err)
		req.Header.Set("Tenant", tenant)
		resp, err := kt.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	assert.Equal(t, []string{"a", "b"}, built)

	body := &closeCounter{Reader: strings.NewReader("x")}
	req, err := http.NewRequest(http.MethodPut, good, body)
	require.NoError(t, err)
	_, err = kt.RoundTrip(req)
	assert.EqualError(t, err, "no tenant")
	assert.Equal(t, int64(1), body.closed.Load(), "the body of a request never sent is closed")
}

func TestNewKeyedTransportRefusesInvalidConfig(t *testing.T) {
	build := func(string) (levee.Patterns, error) { return levee.Patterns{}, nil }
	_, err := leveehttp.NewKeyedTransport(nil, nil, leveehttp.KeyedConfig{})
	assert.EqualError(t, err, "leveehttp: build must be a non-nil function, got nil")
	_, err = leveehttp.NewKeyedTransport(nil, build, leveehttp.KeyedConfig{Config: leveehttp.Config{MaxRetryAfter: -1}})
	assert.EqualError(t, err, "leveehttp: MaxRetryAfter must be >= 0, got -1ns")
	_, err = leveehttp.NewKeyedTransport(nil, build, leveehttp.KeyedConfig{Keyed: keyed.Config{MaxKeys: -1}})
	assert.EqualError(t, err, "keyed: MaxKeys must be in [1, 1073741824], got -1")
}

// fixed answers every request with the same response and no network.
type fixed struct{ resp *http.Response }

func (f fixed) RoundTrip(*http.Request) (*http.Response, error) { return f.resp, nil }

func TestKeyedTransportHitAllocatesNothingMore(t *testing.T) {
	next := fixed{&http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}}}
	cbc := leveehttp.CircuitBreakerConfig(circuitbreaker.Config{})
	plain, err := leveehttp.NewTransport(next, levee.DefaultPipeline[*http.Response](levee.Patterns{CircuitBreaker: levee.Must(circuitbreaker.New("a", cbc))}, nil), leveehttp.Config{})
	require.NoError(t, err)
	kt, err := leveehttp.NewKeyedTransport(next, func(host string) (levee.Patterns, error) {
		return levee.NewPatterns(host, levee.Configs{CircuitBreaker: &cbc})
	}, leveehttp.KeyedConfig{})
	require.NoError(t, err)
	req := &http.Request{Method: http.MethodGet, URL: &url.URL{Scheme: "http", Host: "a.example"}, Header: http.Header{}}
	_, err = kt.RoundTrip(req) // creates the key
	require.NoError(t, err)

	plainAllocs := testing.AllocsPerRun(100, func() { _, _ = plain.RoundTrip(req) })
	keyedAllocs := testing.AllocsPerRun(100, func() { _, _ = kt.RoundTrip(req) })
	assert.Equal(t, plainAllocs, keyedAllocs, "the key's lookup allocates nothing")
}

// host returns the authority of the URL u.
func host(t *testing.T, u string) string {
	t.Helper()
	pu, err := url.Parse(u)
	require.NoError(t, err)
	return pu.Host
}
