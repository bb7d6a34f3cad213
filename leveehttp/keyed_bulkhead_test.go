package leveehttp_test

import (
	"net/http"
	"net/url"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/keyed"
	"github.com/levee-go/levee/leveehttp"
)

// blockingNext holds every request until release is closed, counting those in flight.
type blockingNext struct {
	release       chan struct{}
	mu            sync.Mutex
	inFlight, max map[string]int
}

func (b *blockingNext) RoundTrip(req *http.Request) (*http.Response, error) {
	h := req.URL.Host
	b.mu.Lock()
	b.inFlight[h]++
	b.max[h] = max(b.max[h], b.inFlight[h])
	b.mu.Unlock()
	<-b.release
	b.mu.Lock()
	b.inFlight[h]--
	b.mu.Unlock()
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}}, nil
}

// A host whose bulkhead has a request in flight and one waiting is not evicted for another
// host: a new bulkhead would let a second request to the host through. The other host is
// refused instead, until the first host's requests end.
func TestKeyedTransportKeepsBusyBulkhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		next := &blockingNext{release: make(chan struct{}), inFlight: map[string]int{}, max: map[string]int{}}
		kt, err := leveehttp.NewKeyedTransport(next, func(host string) (levee.Patterns, error) {
			bh, err := bulkhead.New(host, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Hour})
			return levee.Patterns{Bulkhead: bh}, err
		}, leveehttp.KeyedConfig{Keyed: keyed.Config{MaxKeys: 1}})
		require.NoError(t, err)
		send := func(host string) (*http.Response, error) {
			return kt.RoundTrip(&http.Request{Method: http.MethodGet, URL: &url.URL{Scheme: "http", Host: host}, Header: http.Header{}})
		}
		var wg sync.WaitGroup
		errs := make([]error, 3)
		aGet := func(i int) {
			wg.Go(func() {
				resp, err := send("a")
				if err == nil {
					resp.Body.Close()
				}
				errs[i] = err
			})
			synctest.Wait()
		}
		aGet(0) // in flight
		aGet(1) // waiting in a's bulkhead
		for _, ps := range kt.All() {
			assert.Equal(t, bulkhead.Metrics{MaxAllowedConcurrentCalls: 1, NumberOfWaitingCalls: 1}, ps.Bulkhead.Metrics())
		}
		_, err = send("b")
		assert.ErrorIs(t, err, keyed.ErrAllKeysProtected)
		aGet(2) // waits in the same bulkhead, not a new one
		close(next.release)
		wg.Wait()
		assert.Equal(t, []error{nil, nil, nil}, errs)
		assert.Equal(t, map[string]int{"a": 1}, next.max, "a's bulkhead of 1 bounds a")

		resp, err := send("b") // a is idle now and goes
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, keyed.Metrics{Keys: 1, Hits: 2, Misses: 2, Created: 2, EvictedCapacity: 1, RefusedProtected: 1}, kt.Metrics())
	})
}
