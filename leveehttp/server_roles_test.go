package leveehttp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/leveehttp"
	"github.com/levee-go/levee/ratelimiter"
)

// A core rate limiter given as a levee.PermissionLimiter answers with its own wait, as in
// the RateLimiter field.
func TestMiddlewareLimiterCoreRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := levee.Must(ratelimiter.New("api", ratelimiter.Config{
			LimitForPeriod: 1, LimitRefreshPeriod: 10 * time.Second, TimeoutDuration: ratelimiter.NoWait,
		}))
		h := middleware(t, leveehttp.ServerConfig{Limiter: rl}, okHandler)
		assert.Equal(t, http.StatusOK, serveOne(h).Code)
		w := serveOne(h)
		assert.Equal(t, http.StatusTooManyRequests, w.Code)
		assert.Equal(t, "10", w.Header().Get("Retry-After"))
		time.Sleep(3500 * time.Millisecond)
		w = serveOne(h)
		assert.Equal(t, http.StatusTooManyRequests, w.Code)
		assert.Equal(t, "7", w.Header().Get("Retry-After"), "6.5s left, rounded up")
	})
}

// sharedLimiter stands for a limiter of another kind (a fleet's): it refuses while refuse is
// set and says when to come back.
type sharedLimiter struct {
	refuse error
	after  time.Duration
}

func (s *sharedLimiter) AcquirePermission(context.Context, int) error { return s.refuse }
func (s *sharedLimiter) RetryAfter() time.Duration                    { return s.after }

// Another kind of limiter answers with its RetryAfter; an error that is no rejection (its
// store down) is 503 without Retry-After.
func TestMiddlewareLimiterRetryAdvisor(t *testing.T) {
	l := &sharedLimiter{refuse: ratelimiter.ErrRequestNotPermitted, after: 4200 * time.Millisecond}
	h := middleware(t, leveehttp.ServerConfig{Limiter: l}, okHandler)
	w := serveOne(h)
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, "5", w.Header().Get("Retry-After"))

	l.refuse = errors.New("store down")
	w = serveOne(h)
	assert.Equal(t, http.StatusServiceUnavailable, w.Code)
	assert.Empty(t, w.Header().Get("Retry-After"))

	l.refuse = nil
	assert.Equal(t, http.StatusOK, serveOne(h).Code)
}

// An adaptive limit of 1: a request while another runs is refused 503 with the limiter's
// wait (the latency it measured, 2.5s, rounded up), or BulkheadRetryAfter before it has
// measured any call. Every permit comes back.
func TestMiddlewareConcurrencyLimiterAdaptiveRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		al := levee.Must(adaptive.New("api", adaptive.Config{InitialLimit: 1, MinLimit: 1, MaxLimit: 1}))
		release := make(chan struct{})
		h := middleware(t, leveehttp.ServerConfig{ConcurrencyLimiter: al, BulkheadRetryAfter: 7 * time.Second},
			http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/slow" {
					time.Sleep(2500 * time.Millisecond)
					return
				}
				<-release
			}))
		hold := func() chan int {
			code := make(chan int, 1)
			go func() { code <- serveOne(h).Code }()
			synctest.Wait()
			return code
		}
		held := hold()
		w := serveOne(h)
		assert.Equal(t, http.StatusServiceUnavailable, w.Code)
		assert.Equal(t, "7", w.Header().Get("Retry-After"), "nothing measured yet: BulkheadRetryAfter")
		release <- struct{}{}
		assert.Equal(t, http.StatusOK, <-held)

		w = serveOneAt(h, "/slow")
		assert.Equal(t, http.StatusOK, w.Code)
		assert.Equal(t, 2500*time.Millisecond, al.Metrics().NoLoadLatency)
		held = hold()
		w = serveOne(h)
		assert.Equal(t, http.StatusServiceUnavailable, w.Code)
		assert.Equal(t, "3", w.Header().Get("Retry-After"))
		release <- struct{}{}
		assert.Equal(t, http.StatusOK, <-held)
		m := al.Metrics()
		assert.Equal(t, uint64(3), m.Permitted)
		assert.Equal(t, uint64(2), m.Rejected)
		assert.Equal(t, 0, m.InFlight)
	})
}

// Past the time limit the permit ends as dropped: the adaptive limit learns the handler
// overran, once the handler returns.
func TestMiddlewareConcurrencyLimiterTimeoutIsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		al := levee.Must(adaptive.New("api", adaptive.Config{InitialLimit: 1, MinLimit: 1, MaxLimit: 1}))
		h := middleware(t, leveehttp.ServerConfig{ConcurrencyLimiter: al, Timeout: time.Second},
			http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(2 * time.Second) }))
		assert.Equal(t, http.StatusServiceUnavailable, serveOne(h).Code)
		assert.Equal(t, 1, al.Metrics().InFlight, "the handler still runs")
		time.Sleep(time.Second)
		synctest.Wait()
		m := al.Metrics()
		assert.Equal(t, 0, m.InFlight)
		assert.Equal(t, uint64(1), m.Dropped)
	})
}

// A panic ends the permit with OnError and the *levee.PanicError.
func TestMiddlewareConcurrencyLimiterPanic(t *testing.T) {
	rec := &recorder{}
	h := middleware(t, leveehttp.ServerConfig{ConcurrencyLimiter: rec},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic("boom") }))
	assert.Equal(t, http.StatusInternalServerError, serveOne(h).Code)
	assert.Equal(t, []string{"error: levee: panic: boom"}, rec.ends)
	require.Len(t, rec.errs, 1)
	var perr *levee.PanicError
	require.ErrorAs(t, rec.errs[0], &perr)
	assert.Equal(t, "boom", perr.Value)
}

type recorder struct {
	ends []string
	errs []error
}

func (r *recorder) Admit(context.Context) (levee.Permit, error) { return recorderPermit{r}, nil }

type recorderPermit struct{ r *recorder }

func (p recorderPermit) OnSuccess() { p.r.ends = append(p.r.ends, "success") }
func (p recorderPermit) OnError(err error) {
	p.r.ends = append(p.r.ends, "error: "+err.Error())
	p.r.errs = append(p.r.errs, err)
}
func (p recorderPermit) Release() { p.r.ends = append(p.r.ends, "release") }

func serveOneAt(h http.Handler, path string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return w
}

// A nil pointer in a role's field is a limiter left unset.
func TestMiddlewareNilPointerRolesAreUnset(t *testing.T) {
	var rl *ratelimiter.RateLimiter
	var al *adaptive.Limiter
	h := middleware(t, leveehttp.ServerConfig{Limiter: rl, ConcurrencyLimiter: al}, okHandler)
	assert.Equal(t, http.StatusOK, serveOne(h).Code)
}
