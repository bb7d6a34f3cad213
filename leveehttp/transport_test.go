package leveehttp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveehttp"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

// attempts records what the server received.
type attempts struct {
	mu     sync.Mutex
	n      int
	keys   []string
	bodies []string
}

func (a *attempts) record(r *http.Request) int {
	body, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n++
	a.keys = append(a.keys, r.Header.Get("Idempotency-Key"))
	a.bodies = append(a.bodies, string(body))
	return a.n
}

func (a *attempts) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

// failing answers status to the first fail requests (with a body naming the attempt), then 200.
func failing(a *attempts, fail int, status int, header http.Header) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := a.record(r)
		if n <= fail {
			for k, v := range header {
				w.Header()[k] = v
			}
			w.WriteHeader(status)
			fmt.Fprintf(w, "busy %d", n)
			return
		}
		fmt.Fprintf(w, "ok %d", n)
	})
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return string(b)
}

// Over a real loopback socket: two 503s then a 200 take three attempts on one connection,
// since the failed attempts' bodies were read and closed; the breaker records 2 failures and
// 1 success.
func TestTransportRetriesFailuresOnOneConnection(t *testing.T) {
	a := &attempts{}
	s := newServer(t, failing(a, 2, http.StatusServiceUnavailable, nil), true)
	b, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
	client := clientFor(t, s, levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: r, CircuitBreaker: b}, nil), leveehttp.Config{})

	resp, err := client.Get(s.URL)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "ok 3", readAll(t, resp))
	assert.Equal(t, 3, a.count())
	opened, _ := s.counts()
	assert.Equal(t, 1, opened, "failed attempts' bodies drained: the connection was reused")
	m := b.Metrics()
	assert.Equal(t, 2, m.NumberOfFailedCalls)
	assert.Equal(t, 1, m.NumberOfSuccessfulCalls)
}

// When every attempt fails the caller gets the last 503 as a response, its body buffered.
func TestTransportReturnsLastFailedResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attempts{}
		s := newServer(t, failing(a, 10, http.StatusServiceUnavailable, nil), false)
		b, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 3, WaitDuration: time.Second})
		client := clientFor(t, s, levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: r, CircuitBreaker: b}, nil), leveehttp.Config{})

		start := time.Now()
		resp, err := client.Get(s.URL)
		require.NoError(t, err)
		assert.Equal(t, 2*time.Second, time.Since(start), "two waits of 1s")
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Equal(t, int64(6), resp.ContentLength)
		assert.Equal(t, "busy 3", readAll(t, resp))
		assert.Equal(t, 3, a.count())
		assert.Equal(t, 3, b.Metrics().NumberOfFailedCalls)
	})
}

// A 404 is a client error: sent once, returned as it is, ignored by the breaker.
func TestTransportClientErrorIsNotRetriedNorRecorded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attempts{}
		s := newServer(t, failing(a, 10, http.StatusNotFound, nil), false)
		b, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 3})
		client := clientFor(t, s, levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: r, CircuitBreaker: b}, nil), leveehttp.Config{})

		resp, err := client.Get(s.URL)
		require.NoError(t, err)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
		assert.Equal(t, "busy 1", readAll(t, resp))
		assert.Equal(t, 1, a.count())
		m := b.Metrics()
		assert.Equal(t, 0, m.NumberOfFailedCalls+m.NumberOfSuccessfulCalls, "ignored")
		assert.Equal(t, int64(1), r.Metrics().NumberOfFailedCallsWithoutRetryAttempt)
	})
}

// A custom Failure makes 408 a failure, retried.
func TestTransportCustomFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attempts{}
		s := newServer(t, failing(a, 1, http.StatusRequestTimeout, nil), false)
		_, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
		client := clientFor(t, s, levee.Compose[*http.Response]().WithRetry(r), leveehttp.Config{
			Failure: func(resp *http.Response) bool {
				return leveehttp.DefaultFailure(resp) || resp.StatusCode == http.StatusRequestTimeout
			},
		})
		resp, err := client.Get(s.URL)
		require.NoError(t, err)
		assert.Equal(t, "ok 2", readAll(t, resp))
	})
}

// onlyReader hides bytes.Reader's type, so that http.NewRequest sets no GetBody.
type onlyReader struct{ io.Reader }

func TestTransportReplaysOnlyWhatItCan(t *testing.T) {
	cases := []struct {
		name     string
		method   string
		body     func() io.Reader
		key      string // set by the caller
		generate bool
		sent     int
		status   int
		sameKey  bool
	}{
		{name: "PUT with GetBody is retried", method: http.MethodPut, body: func() io.Reader { return strings.NewReader("order") }, sent: 3, status: 200},
		{name: "PUT without GetBody is sent once", method: http.MethodPut, body: func() io.Reader { return onlyReader{strings.NewReader("order")} }, sent: 1, status: 503},
		{name: "POST without key is sent once", method: http.MethodPost, body: func() io.Reader { return strings.NewReader("order") }, sent: 1, status: 503},
		{name: "POST with the caller's key is retried", method: http.MethodPost, body: func() io.Reader { return strings.NewReader("order") }, key: "k-42", sent: 3, status: 200, sameKey: true},
		{name: "POST with a generated key is retried", method: http.MethodPost, body: func() io.Reader { return strings.NewReader("order") }, generate: true, sent: 3, status: 200, sameKey: true},
		{name: "POST with key but no GetBody is sent once", method: http.MethodPost, body: func() io.Reader { return onlyReader{strings.NewReader("order")} }, key: "k-42", sent: 1, status: 503},
		{name: "PATCH without body nor key is sent once", method: http.MethodPatch, body: func() io.Reader { return nil }, sent: 1, status: 503},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := &attempts{}
				s := newServer(t, failing(a, 2, http.StatusServiceUnavailable, nil), false)
				b, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
				client := clientFor(t, s, levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: r, CircuitBreaker: b}, nil),
					leveehttp.Config{GenerateIdempotencyKey: tc.generate})
				req, err := http.NewRequest(tc.method, s.URL, tc.body())
				require.NoError(t, err)
				if tc.key != "" {
					req.Header.Set("Idempotency-Key", tc.key)
				}
				resp, err := client.Do(req)
				require.NoError(t, err)
				assert.Equal(t, tc.status, resp.StatusCode)
				readAll(t, resp)
				assert.Equal(t, tc.sent, a.count())
				assert.Equal(t, tc.key, req.Header.Get("Idempotency-Key"), "the caller's request is not modified")
				assert.Equal(t, tc.sent, b.Metrics().NumberOfBufferedCalls)
				for i := range tc.sent {
					if tc.body() != nil {
						assert.Equal(t, "order", a.bodies[i], "attempt %d's body", i+1)
					}
					if tc.sameKey {
						assert.Equal(t, a.keys[0], a.keys[i], "attempt %d's key", i+1)
					}
				}
				switch {
				case tc.key != "":
					assert.Equal(t, tc.key, a.keys[0])
				case tc.generate:
					assert.Regexp(t, `^"[0-9a-f]{32}"$`, a.keys[0], "an RFC 8941 sf-string")
				default:
					assert.Equal(t, "", a.keys[0])
				}
			})
		})
	}
}

// Two requests with generated keys get different keys.
func TestTransportGeneratedKeysDiffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attempts{}
		s := newServer(t, failing(a, 0, 0, nil), false)
		client := clientFor(t, s, nil, leveehttp.Config{GenerateIdempotencyKey: true, IdempotencyKeyHeader: "idempotency-key"})
		for range 2 {
			resp, err := client.Post(s.URL, "text/plain", strings.NewReader("x"))
			require.NoError(t, err)
			readAll(t, resp)
		}
		require.Len(t, a.keys, 2)
		assert.NotEqual(t, a.keys[0], a.keys[1])
	})
}

// A retry config not made by RetryConfig retries a POST without key anyway: the Transport
// sends nothing and the caller gets the one 503 sent; the breaker records one failure, not
// the refused attempt.
func TestTransportRefusesToResendWithoutRetryConfig(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attempts{}
		s := newServer(t, failing(a, 10, http.StatusServiceUnavailable, nil), false)
		b := levee.Must(circuitbreaker.New("dependency", circuitbreaker.Config{}))
		r := levee.Must(retry.New("dependency", retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait}))
		client := clientFor(t, s, levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: r, CircuitBreaker: b}, nil), leveehttp.Config{})
		resp, err := client.Post(s.URL, "text/plain", strings.NewReader("order"))
		require.NoError(t, err)
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Equal(t, "busy 1", readAll(t, resp))
		assert.Equal(t, 1, a.count())
		m := b.Metrics()
		assert.Equal(t, 1, m.NumberOfFailedCalls)
		assert.Equal(t, 0, m.NumberOfSuccessfulCalls)
	})
}

// Connections closed by the server: before the headers (a transport error, retried) and in
// the middle of a failed answer's body (the attempt fails with what was read).
func TestTransportConnectionClosedMidway(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int64
		s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch n.Add(1) {
			case 1: // no answer at all
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close()
				}
			case 2: // a 503 cut after 4 of its 100 bytes
				conn, buf, err := http.NewResponseController(w).Hijack()
				if err == nil {
					buf.WriteString("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 100\r\n\r\nbusy")
					buf.Flush()
					conn.Close()
				}
			default:
				io.WriteString(w, "ok")
			}
		}), false)
		b, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
		client := clientFor(t, s, levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: r, CircuitBreaker: b}, nil), leveehttp.Config{})
		resp, err := client.Get(s.URL)
		require.NoError(t, err)
		assert.Equal(t, "ok", readAll(t, resp))
		assert.Equal(t, int64(3), n.Load())
		assert.Equal(t, 2, b.Metrics().NumberOfFailedCalls)
		opened, _ := s.counts()
		assert.Equal(t, 3, opened, "each closed connection is replaced")
	})
}

// A success whose body is cut short reaches the caller, who sees the read fail; nothing leaks.
func TestTransportSuccessBodyCutShort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err == nil {
				buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
				buf.Flush()
				conn.Close()
			}
		}), false)
		_, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
		client := clientFor(t, s, levee.Compose[*http.Response]().WithRetry(r), leveehttp.Config{})
		resp, err := client.Get(s.URL)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		assert.Equal(t, "partial", string(body))
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
		require.NoError(t, resp.Body.Close())
	})
}

// A hanging server: each attempt is cut by the time limiter at 2s, three attempts, and the
// server sees each request cancelled.
func TestTransportHangingServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var started, cancelled atomic.Int64
		s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			started.Add(1)
			<-r.Context().Done()
			cancelled.Add(1)
		}), false)
		b, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
		tl := levee.Must(timelimiter.New("dependency", timelimiter.Config{TimeoutDuration: 2 * time.Second}))
		client := clientFor(t, s, levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: r, CircuitBreaker: b, TimeLimiter: tl}, nil), leveehttp.Config{})
		start := time.Now()
		resp, err := client.Get(s.URL)
		assert.Nil(t, resp)
		assert.ErrorIs(t, err, timelimiter.ErrTimeout)
		assert.Equal(t, 6*time.Second, time.Since(start))
		synctest.Wait()
		assert.Equal(t, int64(3), started.Load())
		assert.Equal(t, int64(3), cancelled.Load())
		assert.Equal(t, 3, b.Metrics().NumberOfFailedCalls)
	})
}

// A time limiter does not cut the body of a successful response: it bounds the time to the
// headers, and the body is read under the request's context afterwards.
func TestTransportTimeLimiterLeavesBodyReadable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "head ")
			http.NewResponseController(w).Flush()
			time.Sleep(5 * time.Second) // the body's second half comes after the time limit
			io.WriteString(w, "tail")
		}), false)
		tl := levee.Must(timelimiter.New("dependency", timelimiter.Config{TimeoutDuration: time.Second}))
		client := clientFor(t, s, levee.Compose[*http.Response]().WithTimeLimiter(tl), leveehttp.Config{})
		resp, err := client.Get(s.URL)
		require.NoError(t, err)
		assert.Equal(t, "head tail", readAll(t, resp))
	})
}

func TestTransportRetryAfter(t *testing.T) {
	cases := []struct {
		name       string
		status     int
		retryAfter func(now time.Time) string
		max        time.Duration
		wait       time.Duration
	}{
		{name: "503 seconds", status: 503, retryAfter: func(time.Time) string { return "3" }, wait: 3 * time.Second},
		{name: "429 HTTP date", status: 429, retryAfter: func(now time.Time) string { return now.Add(10 * time.Second).UTC().Format(http.TimeFormat) }, wait: 10 * time.Second},
		{name: "capped by MaxRetryAfter", status: 503, retryAfter: func(time.Time) string { return "120" }, max: 5 * time.Second, wait: 5 * time.Second},
		{name: "shorter than the retry's wait", status: 503, retryAfter: func(time.Time) string { return "0" }, wait: 100 * time.Millisecond},
		{name: "malformed", status: 503, retryAfter: func(time.Time) string { return "soon" }, wait: 100 * time.Millisecond},
		{name: "ignored on 500", status: 500, retryAfter: func(time.Time) string { return "3" }, wait: 100 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := &attempts{}
				s := newServer(t, failing(a, 1, tc.status, http.Header{"Retry-After": {tc.retryAfter(time.Now())}}), false)
				_, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 2, WaitDuration: 100 * time.Millisecond})
				client := clientFor(t, s, levee.Compose[*http.Response]().WithRetry(r), leveehttp.Config{MaxRetryAfter: tc.max})
				start := time.Now()
				resp, err := client.Get(s.URL)
				require.NoError(t, err)
				assert.Equal(t, "ok 2", readAll(t, resp))
				assert.Equal(t, tc.wait, time.Since(start))
			})
		})
	}
}

// Without RetryConfig's interval, the Transport itself holds the next attempt until the
// Retry-After has passed.
func TestTransportRetryAfterWithoutRetryConfig(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attempts{}
		s := newServer(t, failing(a, 1, 429, http.Header{"Retry-After": {"4"}}), false)
		r := levee.Must(retry.New("dependency", retry.Config{MaxAttempts: 2, WaitDuration: retry.NoWait}))
		client := clientFor(t, s, levee.Compose[*http.Response]().WithRetry(r), leveehttp.Config{})
		start := time.Now()
		resp, err := client.Get(s.URL)
		require.NoError(t, err)
		assert.Equal(t, "ok 2", readAll(t, resp))
		assert.Equal(t, 4*time.Second, time.Since(start))
	})
}

// A Retry-After past the caller's deadline fails the call at once with a *RetryAfterError.
func TestTransportRetryAfterPastDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attempts{}
		s := newServer(t, failing(a, 1, 503, http.Header{"Retry-After": {"30"}}), false)
		b, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 3})
		client := clientFor(t, s, levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: r, CircuitBreaker: b}, nil), leveehttp.Config{})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
		require.NoError(t, err)
		start := time.Now()
		resp, err := client.Do(req)
		assert.Nil(t, resp)
		assert.Equal(t, time.Duration(0), time.Since(start), "failed at once")
		assert.ErrorIs(t, err, leveehttp.ErrRetryAfter)
		assert.ErrorIs(t, err, leveehttp.ErrNotRetryable)
		var rae *leveehttp.RetryAfterError
		require.ErrorAs(t, err, &rae)
		assert.Equal(t, 30*time.Second, rae.RetryAfter)
		assert.Equal(t, 2*time.Second, rae.Remaining)
		assert.Equal(t, "leveehttp: Retry-After 30s exceeds the 2s left before the deadline (503 Service Unavailable)", rae.Error())
		var se *leveehttp.StatusError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "busy 1", readAll(t, se.Response))
		assert.Equal(t, 1, a.count())
		assert.Equal(t, 1, b.Metrics().NumberOfFailedCalls)
	})
}

// OpenOnRetryAfter: a 429 with Retry-After opens the breaker until then; a call meanwhile is
// refused without reaching the server; after it, the breaker lets a probe through.
func TestOpenOnRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attempts{}
		s := newServer(t, failing(a, 1, 429, http.Header{"Retry-After": {"10"}}), false)
		b := levee.Must(circuitbreaker.New("dependency", leveehttp.CircuitBreakerConfig(circuitbreaker.Config{
			TransitionOnResult: leveehttp.OpenOnRetryAfter,
		})))
		var transitions []string
		b.Subscribe(func(e circuitbreaker.Event) {
			if e.Type == circuitbreaker.EventStateTransition {
				transitions = append(transitions, fmt.Sprintf("%v %v->%v", time.Since(time.Unix(946684800, 0)), e.From, e.To))
			}
		})
		client := clientFor(t, s, levee.Compose[*http.Response]().WithCircuitBreaker(b), leveehttp.Config{})

		resp, err := client.Get(s.URL)
		require.NoError(t, err)
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		readAll(t, resp)
		assert.Equal(t, circuitbreaker.Open, b.State())

		time.Sleep(9 * time.Second)
		_, err = client.Get(s.URL)
		assert.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
		assert.Equal(t, 1, a.count(), "refused calls never reach the server")

		time.Sleep(time.Second)
		resp, err = client.Get(s.URL)
		require.NoError(t, err)
		assert.Equal(t, "ok 2", readAll(t, resp))
		assert.Equal(t, []string{"0s CLOSED->OPEN", "10s OPEN->HALF_OPEN"}, transitions)
	})
}

func TestOpenOnRetryAfterAsksNothingOtherwise(t *testing.T) {
	assert.False(t, leveehttp.OpenOnRetryAfter(nil, nil).Opens())
	assert.False(t, leveehttp.OpenOnRetryAfter(nil, errors.New("x")).Opens())
	assert.False(t, leveehttp.OpenOnRetryAfter(nil, &leveehttp.StatusError{StatusCode: 503}).Opens())
	assert.True(t, leveehttp.OpenOnRetryAfter(nil, &leveehttp.StatusError{StatusCode: 503, RetryAt: time.Now()}).Opens())
}

// With a retry around the breaker, the attempt after a Retry-After finds the breaker ready for
// a probe at RetryAt.
func TestOpenOnRetryAfterWithRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attempts{}
		s := newServer(t, failing(a, 1, 503, http.Header{"Retry-After": {"10"}}), false)
		b, r := patterns(t, circuitbreaker.Config{TransitionOnResult: leveehttp.OpenOnRetryAfter, PermittedNumberOfCallsInHalfOpenState: 1},
			retry.Config{MaxAttempts: 2, WaitDuration: time.Second})
		var transitions []string
		b.Subscribe(func(e circuitbreaker.Event) {
			if e.Type == circuitbreaker.EventStateTransition {
				transitions = append(transitions, fmt.Sprintf("%v %v->%v", time.Since(time.Unix(946684800, 0)), e.From, e.To))
			}
		})
		client := clientFor(t, s, levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: r, CircuitBreaker: b}, nil), leveehttp.Config{})
		resp, err := client.Get(s.URL)
		require.NoError(t, err)
		assert.Equal(t, "ok 2", readAll(t, resp))
		assert.Equal(t, []string{"0s CLOSED->OPEN", "10s OPEN->HALF_OPEN", "10s HALF_OPEN->CLOSED"}, transitions)
	})
}

// A breaker that opens between two attempts of a retry refuses the next one: the caller gets
// the rejection, not the last 5xx, as Resilience4j's Retry ends on CallNotPermittedException.
func TestBreakerOpeningMidRetryReturnsTheRejection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attempts{}
		s := newServer(t, failing(a, 10, 503, nil), false)
		b, r := patterns(t, circuitbreaker.Config{SlidingWindowSize: 2, MinimumNumberOfCalls: 2},
			retry.Config{MaxAttempts: 4, WaitDuration: time.Second})
		client := clientFor(t, s, levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: r, CircuitBreaker: b}, nil), leveehttp.Config{})
		resp, err := client.Get(s.URL)
		assert.Nil(t, resp)
		require.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
		assert.True(t, levee.IsRejection(err))
		var se *leveehttp.StatusError
		assert.False(t, errors.As(err, &se), "the last 503 is not in the error")
		assert.Equal(t, 2, a.count(), "two 503s opened the breaker; the third attempt was refused")
		assert.Equal(t, circuitbreaker.Open, b.State())
	})
}

// A breaker that is open refuses the request: the caller gets the rejection, and a request
// body that was never sent is closed.
func TestTransportRejectionClosesRequestBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attempts{}
		s := newServer(t, failing(a, 0, 0, nil), false)
		b := levee.Must(circuitbreaker.New("dependency", circuitbreaker.Config{InitialState: circuitbreaker.Open}))
		client := clientFor(t, s, levee.Compose[*http.Response]().WithCircuitBreaker(b), leveehttp.Config{})
		body := &closeCounter{Reader: strings.NewReader("order")}
		req, err := http.NewRequest(http.MethodPost, s.URL, body)
		require.NoError(t, err)
		_, err = client.Do(req)
		assert.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
		assert.True(t, levee.IsRejection(err))
		assert.Equal(t, int64(1), body.closed.Load())
		assert.Equal(t, 0, a.count())
	})
}

type closeCounter struct {
	io.Reader
	closed atomic.Int64
}

func (c *closeCounter) Close() error { c.closed.Add(1); return nil }

// A failed response longer than MaxBodyBuffer keeps its first bytes only.
func TestTransportBuffersAtMostMaxBodyBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
			w.Write(bytes.Repeat([]byte("x"), 1000))
		}), false)
		client := clientFor(t, s, nil, leveehttp.Config{MaxBodyBuffer: 10})
		resp, err := client.Get(s.URL)
		require.NoError(t, err)
		assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
		assert.Equal(t, "xxxxxxxxxx", readAll(t, resp))
	})
}

func TestNewTransportRefusesInvalidConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg leveehttp.Config
		msg string
	}{
		{leveehttp.Config{MaxRetryAfter: -time.Second}, "leveehttp: MaxRetryAfter must be >= 0, got -1s"},
		{leveehttp.Config{MaxBodyBuffer: -1}, "leveehttp: MaxBodyBuffer must be in [0, 16777216], got -1"},
		{leveehttp.Config{MaxBodyBuffer: 16<<20 + 1}, "leveehttp: MaxBodyBuffer must be in [0, 16777216], got 16777217"},
		{leveehttp.Config{IdempotencyKeyHeader: "Idempotency Key"}, `leveehttp: IdempotencyKeyHeader must be a valid header name, got "Idempotency Key"`},
	} {
		tr, err := leveehttp.NewTransport(nil, nil, tc.cfg)
		assert.Nil(t, tr)
		assert.EqualError(t, err, tc.msg)
	}
}

func TestStatusErrorMessage(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "http://user:secret@pricing/quote", nil)
	se := &leveehttp.StatusError{Response: &http.Response{Request: req, StatusCode: 503}, StatusCode: 503}
	assert.Equal(t, "leveehttp: GET http://user:xxxxx@pricing/quote: 503 Service Unavailable", se.Error())
	assert.Equal(t, "leveehttp: 599", (&leveehttp.StatusError{StatusCode: 599}).Error())
}

// RetryConfig keeps a negative interval's meaning (stop retrying) and the user's lists.
func TestRetryConfig(t *testing.T) {
	c := leveehttp.RetryConfig(retry.Config{IntervalFunction: func(int) time.Duration { return -1 }, IgnoreErrors: []error{io.EOF}})
	assert.Equal(t, []error{io.EOF, leveehttp.ErrNotRetryable}, c.IgnoreErrors)
	assert.Equal(t, time.Duration(-1), c.IntervalBiFunction(1, &leveehttp.StatusError{RetryAt: time.Now().Add(time.Hour)}, nil))
	assert.Equal(t, retry.DefaultWaitDuration, leveehttp.RetryConfig(retry.Config{}).IntervalBiFunction(1, io.EOF, nil))
	assert.Equal(t, time.Duration(0), leveehttp.RetryConfig(retry.Config{WaitDuration: retry.NoWait}).IntervalBiFunction(1, io.EOF, nil))
	_, err := retry.New("x", leveehttp.RetryConfig(retry.DefaultConfig()))
	assert.NoError(t, err)
}

func TestCircuitBreakerConfigKeepsPredicate(t *testing.T) {
	c := leveehttp.CircuitBreakerConfig(circuitbreaker.Config{IgnoreErrorPredicate: func(err error) bool { return err == io.EOF }})
	assert.True(t, c.IgnoreErrorPredicate(io.EOF))
	assert.True(t, c.IgnoreErrorPredicate(&leveehttp.StatusError{StatusCode: 404}))
	assert.False(t, c.IgnoreErrorPredicate(&leveehttp.StatusError{StatusCode: 503, Failure: true}))
	assert.False(t, c.IgnoreErrorPredicate(io.ErrUnexpectedEOF))
}

// Twenty concurrent requests, each failing once: every caller gets its 200, the server sees
// 40 attempts, and no connection is left open (checked when the test ends).
func TestTransportConcurrentRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		seen := map[string]int{}
		s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id := r.URL.Query().Get("id")
			mu.Lock()
			seen[id]++
			n := seen[id]
			mu.Unlock()
			if n == 1 {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			io.WriteString(w, id)
		}), false)
		b, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 2, WaitDuration: 10 * time.Millisecond})
		client := clientFor(t, s, levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: r, CircuitBreaker: b}, nil), leveehttp.Config{})
		var wg sync.WaitGroup
		bodies := make([]string, 20)
		for i := range bodies {
			wg.Go(func() {
				resp, err := client.Get(fmt.Sprintf("%s/?id=%d", s.URL, i))
				if err == nil {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					bodies[i] = fmt.Sprintf("%d %s", resp.StatusCode, b)
				}
			})
		}
		wg.Wait()
		for i, b := range bodies {
			assert.Equal(t, fmt.Sprintf("200 %d", i), b)
		}
		m := b.Metrics()
		assert.Equal(t, 20, m.NumberOfFailedCalls)
		assert.Equal(t, 20, m.NumberOfSuccessfulCalls)
		total := 0
		for _, n := range seen {
			total += n
		}
		assert.Equal(t, 40, total)
	})
}

// A GET answered 503 with Retry-After: 2 and cancelled by its caller at 1s, during the wait,
// returns at once with the caller's context.Canceled, not the earlier 503.
func TestTransportCancelledDuringRetryAfterWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attempts{}
		s := newServer(t, failing(a, 5, 503, http.Header{"Retry-After": {"2"}}), false)
		b, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 3})
		client := clientFor(t, s, levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: r, CircuitBreaker: b}, nil), leveehttp.Config{})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		time.AfterFunc(time.Second, cancel)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
		require.NoError(t, err)
		start := time.Now()
		resp, err := client.Do(req)
		assert.Nil(t, resp)
		require.ErrorIs(t, err, context.Canceled)
		var ue interface{ Unwrap() error }
		require.ErrorAs(t, err, &ue)
		assert.Same(t, context.Canceled, ue.Unwrap(), "the cancellation itself, as http.Client wraps it")
		assert.Equal(t, time.Second, time.Since(start))
		assert.Equal(t, 1, a.count())
	})
}

// A retry that cannot finish before the caller's deadline returns the last real answer (the
// last 503) at once, not context.DeadlineExceeded after sleeping into the deadline.
func TestTransportRetryRespectsCallerDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attempts{}
		s := newServer(t, failing(a, 5, 503, nil), false)
		b, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 5, WaitDuration: time.Second})
		client := clientFor(t, s, levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: r, CircuitBreaker: b}, nil), leveehttp.Config{})
		ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
		require.NoError(t, err)
		start := time.Now()
		resp, err := client.Do(req)
		require.NoError(t, err)
		assert.Equal(t, 503, resp.StatusCode)
		assert.Equal(t, "busy 3", readAll(t, resp))
		assert.Equal(t, 2*time.Second, time.Since(start), "attempts at 0, 1s and 2s; none could finish after")
		assert.Equal(t, 3, a.count())
		assert.Equal(t, 3, b.Metrics().NumberOfFailedCalls)
	})
}

// A deadline already passed at call time: nothing is sent, the caller gets its deadline.
func TestTransportDeadlinePassedAtCallTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attempts{}
		s := newServer(t, failing(a, 0, 503, nil), false)
		b, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 3})
		client := clientFor(t, s, levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: r, CircuitBreaker: b}, nil), leveehttp.Config{})
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
		require.NoError(t, err)
		resp, err := client.Do(req)
		assert.Nil(t, resp)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 0, a.count())
		assert.Equal(t, 0, b.Metrics().NumberOfBufferedCalls)
	})
}

// onceReader is a body without GetBody, of unknown length.
type onceReader struct{ io.Reader }

func (onceReader) Close() error { return nil }

// A POST whose body cannot be replayed and whose connection resets is not retried; the caller
// gets a *NotReplayableError saying so, matching ErrNotReplayable (not only ErrNotRetryable,
// which 4xx answers match) and wrapping the transport's own error.
func TestTransportNotReplayableConnectionReset(t *testing.T) {
	for _, tc := range []struct {
		name   string
		method string
		body   func() io.Reader
		reason string
	}{
		{"body of unknown length without GetBody", http.MethodPut, func() io.Reader { return onceReader{strings.NewReader("order")} },
			"its body cannot be sent again (the request has no GetBody)"},
		{"POST without a key", http.MethodPost, func() io.Reader { return strings.NewReader("order") },
			"its method POST is not idempotent and the request has no Idempotency-Key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var n atomic.Int64
				s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					n.Add(1)
					io.ReadAll(r.Body)
					if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
						conn.Close() // reset: no answer at all
					}
				}), false)
				b, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
				client := clientFor(t, s, levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: r, CircuitBreaker: b}, nil), leveehttp.Config{})
				req, err := http.NewRequest(tc.method, s.URL+"/charge", tc.body())
				require.NoError(t, err)
				resp, err := client.Do(req)
				assert.Nil(t, resp)
				require.ErrorIs(t, err, leveehttp.ErrNotReplayable)
				require.ErrorIs(t, err, leveehttp.ErrNotRetryable)
				require.ErrorIs(t, err, io.EOF)
				var nre *leveehttp.NotReplayableError
				require.ErrorAs(t, err, &nre)
				assert.Equal(t, tc.method, nre.Method)
				assert.Equal(t, tc.reason, nre.Reason)
				assert.Equal(t, "leveehttp: "+tc.method+" "+s.URL+"/charge not retried: "+tc.reason+": "+nre.Err.Error(), nre.Error())
				assert.Equal(t, int64(1), n.Load(), "sent once")
				assert.Equal(t, 1, b.Metrics().NumberOfFailedCalls)
			})
		})
	}
}

// A 4xx answer does not match ErrNotReplayable.
func TestClientErrorIsNotNotReplayable(t *testing.T) {
	assert.NotErrorIs(t, &leveehttp.StatusError{StatusCode: 404}, leveehttp.ErrNotReplayable)
}

// Each retry carries its attempt number in X-Envoy-Attempt-Count, replacing the caller's; the
// first attempt is the caller's request as it is. A request body of unknown length with
// GetBody is replayed on each.
func TestTransportSendsAttemptCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var got [][]string
		var bodies, accepts []string
		s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			got = append(got, append(r.Header.Values("X-Envoy-Attempt-Count"), r.Header.Values("X-Levee-Attempt")...))
			accepts = append(accepts, r.Header.Values("Accept")...)
			bodies = append(bodies, string(body))
			n := len(got)
			mu.Unlock()
			if n < 3 {
				w.WriteHeader(503)
			}
		}), false)
		_, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
		client := clientFor(t, s, levee.Compose[*http.Response]().WithRetry(r), leveehttp.Config{})
		req, err := http.NewRequest(http.MethodPut, s.URL, onceReader{strings.NewReader("stock")})
		require.NoError(t, err)
		req.GetBody = func() (io.ReadCloser, error) { return onceReader{strings.NewReader("stock")}, nil }
		req.Header.Set("X-Envoy-Attempt-Count", "7")
		resp, err := client.Do(req)
		require.NoError(t, err)
		assert.Equal(t, 200, resp.StatusCode)
		readAll(t, resp)
		assert.Equal(t, [][]string{{"1"}, {"2"}, {"3"}}, got, "every attempt of a retrying pipeline, the caller's value replaced")
		assert.Equal(t, []string{"stock", "stock", "stock"}, bodies)
		assert.Equal(t, "7", req.Header.Get("X-Envoy-Attempt-Count"), "the caller's request is not modified")
		assert.Len(t, req.Header, 1, "the caller's header is not modified")

		// One attempt that succeeds: the number 1 when the pipeline retries, the caller's other
		// headers kept.
		for _, tc := range []struct {
			name string
			p    *levee.Pipeline[*http.Response]
			cfg  leveehttp.Config
			want [][]string
		}{
			{"no pipeline", nil, leveehttp.Config{}, [][]string{nil}},
			{"no retry", levee.Compose[*http.Response]().WithCircuitBreaker(levee.Must(circuitbreaker.New("no-retry", leveehttp.CircuitBreakerConfig(circuitbreaker.Config{})))), leveehttp.Config{}, [][]string{nil}},
			{"retry", levee.Compose[*http.Response]().WithRetry(r), leveehttp.Config{}, [][]string{{"1"}}},
			{"retry with a time limiter", levee.Compose[*http.Response]().WithTimeLimiter(levee.Must(timelimiter.New("tl", timelimiter.Config{TimeoutDuration: time.Minute}))).WithRetry(r), leveehttp.Config{}, [][]string{{"1"}}},
			{"retry, OmitAttemptCount", levee.Compose[*http.Response]().WithRetry(r), leveehttp.Config{OmitAttemptCount: true}, [][]string{nil}},
			{"retry, another header", levee.Compose[*http.Response]().WithRetry(r), leveehttp.Config{AttemptCountHeader: "x-levee-attempt"}, [][]string{{"1"}}},
		} {
			mu.Lock()
			got, accepts = [][]string{nil, nil}, nil // the next answer is a success
			mu.Unlock()
			client = clientFor(t, s, tc.p, tc.cfg)
			req, err := http.NewRequest(http.MethodGet, s.URL, nil)
			require.NoError(t, err)
			req.Header.Set("Accept", "text/plain")
			resp, err := client.Do(req)
			require.NoError(t, err, tc.name)
			readAll(t, resp)
			mu.Lock()
			assert.Equal(t, tc.want, got[2:], tc.name)
			assert.Equal(t, []string{"text/plain"}, accepts, tc.name)
			mu.Unlock()
			assert.Equal(t, http.Header{"Accept": {"text/plain"}}, req.Header, tc.name)
		}
	})
}

func TestNewTransportRefusesInvalidAttemptCountHeader(t *testing.T) {
	_, err := leveehttp.NewTransport(nil, nil, leveehttp.Config{AttemptCountHeader: "bad header"})
	assert.EqualError(t, err, `leveehttp: AttemptCountHeader must be a valid header name, got "bad header"`)
}
