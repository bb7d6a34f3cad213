package leveehttp_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/keyed"
	"github.com/levee-go/levee/leveehttp"
)

// One client, two hosts, a breaker per host: the failing host's breaker opens and refuses
// its calls, while the healthy host is served as before.
func ExampleNewKeyedTransport() {
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer failing.Close()
	healthy := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer healthy.Close()

	cbc := leveehttp.CircuitBreakerConfig(circuitbreaker.Config{SlidingWindowSize: 2, MinimumNumberOfCalls: 2})
	next := &http.Transport{}
	defer next.CloseIdleConnections()
	kt, err := leveehttp.NewKeyedTransport(next, func(host string) (levee.Patterns, error) {
		return levee.NewPatterns(host, levee.Configs{CircuitBreaker: &cbc})
	}, leveehttp.KeyedConfig{Keyed: keyed.Config{MaxKeys: 100}})
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: kt}
	for i := 0; i < 3; i++ {
		for _, s := range []*httptest.Server{failing, healthy} {
			name := map[*httptest.Server]string{failing: "failing", healthy: "healthy"}[s]
			resp, err := client.Get(s.URL)
			if errors.Is(err, circuitbreaker.ErrCallNotPermitted) {
				fmt.Println(name, "refused by its breaker")
				continue
			} else if err != nil {
				panic(err)
			}
			resp.Body.Close()
			fmt.Println(name, resp.StatusCode)
		}
	}
	for _, s := range []*httptest.Server{failing, healthy} {
		ps, _ := kt.Patterns(s.Listener.Addr().String())
		fmt.Println(ps.CircuitBreaker.State())
	}
	// Output:
	// failing 503
	// healthy 200
	// failing 503
	// healthy 200
	// failing refused by its breaker
	// healthy 200
	// OPEN
	// CLOSED
}
