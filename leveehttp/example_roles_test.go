package leveehttp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/leveehttp"
	"github.com/levee-go/levee/ratelimiter"
)

// Limiters of any kind guard a server through the fields of their role: Limiter takes any
// levee.PermissionLimiter (here levee's own; a fleet's shared limiter fits the same field),
// ConcurrencyLimiter any levee.Admitter (an adaptive limit). Each refusal carries the
// limiter's own wait in Retry-After; an adaptive limit that has measured no call yet leaves it
// to BulkheadRetryAfter.
func ExampleServerConfig_roles() {
	rl := levee.Must(ratelimiter.New("api", ratelimiter.Config{
		LimitForPeriod: 3, LimitRefreshPeriod: time.Hour, TimeoutDuration: ratelimiter.NoWait,
	}))
	al := levee.Must(adaptive.New("api", adaptive.Config{InitialLimit: 1, MinLimit: 1, MaxLimit: 1}))
	mw := levee.Must(leveehttp.Middleware(leveehttp.ServerConfig{
		Limiter: rl, ConcurrencyLimiter: al, BulkheadRetryAfter: 5 * time.Second,
	}))
	var h http.Handler
	h = mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/outer" {
			// While this request holds the adaptive limit's one permit, another comes in: the
			// first time it is refused by the adaptive limit, the second time by the rate
			// limiter, whose 3 permissions of the hour are then taken.
			inner := httptest.NewRecorder()
			h.ServeHTTP(inner, httptest.NewRequest(http.MethodGet, "/inner", nil))
			fmt.Printf("inner: %d, Retry-After %q\n", inner.Code, inner.Header().Get("Retry-After"))
		}
	}))
	for range 2 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/outer", nil))
		fmt.Printf("outer: %d\n", w.Code)
	}
	// Output:
	// inner: 503, Retry-After "5"
	// outer: 200
	// inner: 429, Retry-After "3600"
	// outer: 200
}
