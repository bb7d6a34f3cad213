package leveehttp_test

import (
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveehttp"
)

// A 103 Early Hints is an informational response, not the start of the handler's response
// (net/http writes it at once and still takes the final status): a handler that sent one and
// then ignores its context past the time limit is answered 503 at the limit, as one that
// wrote nothing, and the client saw the hint first.
func TestMiddlewareTimeoutAfterEarlyHints(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		h := middleware(t, leveehttp.ServerConfig{Timeout: 100 * time.Millisecond},
			http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Link", "</style.css>; rel=preload")
				w.WriteHeader(http.StatusEarlyHints)
				<-release // ignores its context
			}))
		s := newServer(t, h, false)
		var hints []int
		ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{
			Got1xxResponse: func(code int, _ textproto.MIMEHeader) error { hints = append(hints, code); return nil },
		})
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
		require.NoError(t, err)
		done := make(chan struct{})
		var code int
		go func() {
			defer close(done)
			resp, err := (&http.Client{Transport: s.client}).Do(req)
			if err == nil {
				code = resp.StatusCode
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		time.Sleep(time.Second)
		synctest.Wait()
		answered := chanClosed(done)
		close(release)
		<-done
		require.True(t, answered, "no answer at the time limit: the 103 was taken for the start of the response")
		assert.Equal(t, http.StatusServiceUnavailable, code)
		assert.Equal(t, []int{http.StatusEarlyHints}, hints)
	})
}

// A handler that sent a 103 Early Hints and then panics is answered 500, as one that wrote
// nothing: the informational response started nothing, and net/http can still send a status.
func TestMiddlewarePanicAfterEarlyHints(t *testing.T) {
	for _, timeout := range []time.Duration{0, time.Second} {
		synctest.Test(t, func(t *testing.T) {
			h := middleware(t, leveehttp.ServerConfig{Timeout: timeout},
				http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.WriteHeader(http.StatusEarlyHints)
					panic("boom")
				}))
			s := newServer(t, h, false)
			resp, err := (&http.Client{Transport: s.client}).Get(s.URL)
			require.NoError(t, err, "timeout %v: the connection was aborted", timeout)
			defer resp.Body.Close()
			assert.Equal(t, http.StatusInternalServerError, resp.StatusCode, "timeout %v", timeout)
		})
	}
}

func chanClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
