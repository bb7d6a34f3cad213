package bench

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	fscb "github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/failsafehttp"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveehttp"
	"github.com/levee-go/levee/retry"
)

// BenchmarkHTTPGet sends one successful GET over loopback, reading and closing its body, with
// a bare http.Transport, with leveehttp's Transport (Retry + CircuitBreaker, built with
// leveehttp's configs) and with failsafehttp's RoundTripper (its HTTP retry policy and a
// breaker), with leveehttp's KeyedTransport holding the same patterns for the one host, all in
// one run so that their allocations and times compare: the difference of
// allocs/op to impl=bare is what each adapter costs a request.
func BenchmarkHTTPGet(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "price=1999")
	}))
	defer srv.Close()

	cb := levee.Must(circuitbreaker.New("pricing", leveehttp.CircuitBreakerConfig(circuitbreaker.Config{})))
	rt := levee.Must(retry.New("pricing", leveehttp.RetryConfig(retry.Config{MaxAttempts: 3})))
	p := levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: rt, CircuitBreaker: cb}, nil)

	for _, impl := range []struct {
		name string
		rt   func(next *http.Transport) http.RoundTripper
	}{
		{"bare", func(next *http.Transport) http.RoundTripper { return next }},
		{"levee", func(next *http.Transport) http.RoundTripper {
			return levee.Must(leveehttp.NewTransport(next, p, leveehttp.Config{}))
		}},
		{"levee-keyed", func(next *http.Transport) http.RoundTripper {
			// The same patterns, held per host by a KeyedTransport: one host, found at each request.
			return levee.Must(leveehttp.NewKeyedTransport(next, func(string) (levee.Patterns, error) {
				return levee.Patterns{Retry: rt, CircuitBreaker: cb}, nil
			}, leveehttp.KeyedConfig{}))
		}},
		{"failsafehttp", func(next *http.Transport) http.RoundTripper {
			return failsafehttp.NewRoundTripper(next, failsafehttp.NewRetryPolicyBuilder().Build(),
				fscb.NewWithDefaults[*http.Response]())
		}},
	} {
		b.Run("impl="+impl.name, func(b *testing.B) {
			next := &http.Transport{}
			defer next.CloseIdleConnections()
			client := &http.Client{Transport: impl.rt(next)}
			b.ReportAllocs()
			for b.Loop() {
				resp, err := client.Get(srv.URL)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}
