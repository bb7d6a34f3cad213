package leveehttp_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/keyed"
	"github.com/levee-go/levee/leveehttp"
)

// countingNext counts the requests it is given and answers 200.
type countingNext struct {
	mu   sync.Mutex
	sent int
}

func (c *countingNext) RoundTrip(*http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.sent++
	c.mu.Unlock()
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}}, nil
}

// A Key function that panics fails its request with a *levee.PanicError; the body is closed
// and nothing is sent.
func TestKeyedTransportKeyPanicIsAnError(t *testing.T) {
	next := &countingNext{}
	built := 0
	kt, err := leveehttp.NewKeyedTransport(next, func(string) (levee.Patterns, error) { built++; return levee.Patterns{}, nil },
		leveehttp.KeyedConfig{Key: func(*http.Request) string { panic("key bug") }})
	require.NoError(t, err)
	body := &closeCounter{Reader: strings.NewReader("x")}
	req, err := http.NewRequest(http.MethodPost, "http://a.example/", body)
	require.NoError(t, err)
	resp, err := kt.RoundTrip(req)
	assert.Nil(t, resp)
	var pe *levee.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "key bug", pe.Value)
	assert.EqualError(t, err, "levee: panic: key bug")
	assert.Equal(t, int64(1), body.closed.Load(), "the body of a request never sent is closed")
	assert.Zero(t, next.sent)
	assert.Zero(t, built)
	assert.Equal(t, keyed.Metrics{}, kt.Metrics())
}

// A request without a URL fails as net/http's Transport fails it (and so as a Transport in
// front of it does), its body closed, whatever the Key function.
func TestKeyedTransportNilURL(t *testing.T) {
	plain, err := leveehttp.NewTransport(nil, nil, leveehttp.Config{})
	require.NoError(t, err)
	_, plainErr := plain.RoundTrip(&http.Request{Method: http.MethodGet, Header: http.Header{}})
	require.EqualError(t, plainErr, "http: nil Request.URL")

	for _, key := range []func(*http.Request) string{nil, func(r *http.Request) string { return r.URL.Path }} {
		next := &countingNext{}
		kt, err := leveehttp.NewKeyedTransport(next, func(string) (levee.Patterns, error) { return levee.Patterns{}, nil },
			leveehttp.KeyedConfig{Key: key})
		require.NoError(t, err)
		body := &closeCounter{Reader: strings.NewReader("x")}
		resp, err := kt.RoundTrip(&http.Request{Method: http.MethodPut, Header: http.Header{}, Body: body})
		assert.Nil(t, resp)
		assert.EqualError(t, err, plainErr.Error())
		assert.Equal(t, int64(1), body.closed.Load())
		assert.Zero(t, next.sent)
		assert.Equal(t, keyed.Metrics{}, kt.Metrics())
	}
}

// A nil request fails with ErrNilRequest through both transports, sending nothing.
func TestNilRequest(t *testing.T) {
	next := &countingNext{}
	plain, err := leveehttp.NewTransport(next, nil, leveehttp.Config{})
	require.NoError(t, err)
	resp, err := plain.RoundTrip(nil)
	require.ErrorIs(t, err, leveehttp.ErrNilRequest)
	require.Nil(t, resp)

	kt, err := leveehttp.NewKeyedTransport(next, func(string) (levee.Patterns, error) { return levee.Patterns{}, nil }, leveehttp.KeyedConfig{})
	require.NoError(t, err)
	resp, err = kt.RoundTrip(nil)
	require.ErrorIs(t, err, leveehttp.ErrNilRequest)
	require.Nil(t, resp)
	require.Equal(t, 0, next.sent, "nothing sent")
}

// A nil or zero Transport or KeyedTransport fails every request with ErrNilTransport, closing
// its body and sending nothing; its other methods answer as an empty one's, without a panic.
func TestZeroTransportsFailWithErrNilTransport(t *testing.T) {
	for name, rt := range map[string]http.RoundTripper{
		"zero Transport":      &leveehttp.Transport{},
		"nil Transport":       (*leveehttp.Transport)(nil),
		"zero KeyedTransport": &leveehttp.KeyedTransport{},
		"nil KeyedTransport":  (*leveehttp.KeyedTransport)(nil),
	} {
		t.Run(name, func(t *testing.T) {
			body := &closeCounter{Reader: strings.NewReader("order")}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://127.0.0.1:1/pay", body)
			require.NoError(t, err)
			resp, err := rt.RoundTrip(req)
			require.ErrorIs(t, err, leveehttp.ErrNilTransport)
			require.Nil(t, resp)
			assert.Equal(t, int64(1), body.closed.Load(), "body closed")
			rt.(interface{ CloseIdleConnections() }).CloseIdleConnections()
		})
	}
	var kt leveehttp.KeyedTransport
	_, err := kt.Patterns("host")
	require.ErrorIs(t, err, leveehttp.ErrNilTransport)
	assert.Equal(t, keyed.Metrics{}, kt.Metrics())
	for range kt.All() {
		t.Fatal("a zero KeyedTransport holds no key")
	}
}
