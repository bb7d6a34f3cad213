package leveehttp_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/leveehttp"
	"github.com/levee-go/levee/priority"
	"github.com/levee-go/levee/retry"
)

// seen is what a handler behind Middleware found in its request's context.
type seen struct {
	carried  string // priority.Carried, "" when none
	priority priority.Priority
}

func priorityHandler(got *seen) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.carried, _ = priority.Carried(r.Context())
		got.priority = priority.FromContext(r.Context())
		w.WriteHeader(http.StatusNoContent)
	})
}

// The middleware puts the priority of the request's header in its context: a name, or a name
// and an offset for an exact level; values that are not valid leave the request Normal's and
// are served all the same.
func TestMiddlewareReadsThePriorityHeader(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     leveehttp.ServerConfig
		header  string
		values  []string
		carried string
		want    priority.Priority
	}{
		{"a name", leveehttp.ServerConfig{}, "Levee-Priority", []string{"critical"}, "critical", priority.Critical},
		{"case and spaces", leveehttp.ServerConfig{}, "levee-priority", []string{" Sheddable "}, "sheddable", priority.Sheddable},
		{"a level", leveehttp.ServerConfig{}, "Levee-Priority", []string{"high/37"}, "high/37", priority.High},
		{"none", leveehttp.ServerConfig{}, "", nil, "", priority.Normal},
		{"an unknown name", leveehttp.ServerConfig{}, "Levee-Priority", []string{"urgent"}, "", priority.Normal},
		{"an offset out of range", leveehttp.ServerConfig{}, "Levee-Priority", []string{"high/100"}, "", priority.Normal},
		{"two values", leveehttp.ServerConfig{}, "Levee-Priority", []string{"critical", "low"}, "", priority.Normal},
		{"another header", leveehttp.ServerConfig{PriorityHeader: "x-priority"}, "X-Priority", []string{"low"}, "low", priority.Low},
		{"another header, the default one ignored", leveehttp.ServerConfig{PriorityHeader: "x-priority"}, "Levee-Priority", []string{"low"}, "", priority.Normal},
		{"IgnorePriority", leveehttp.ServerConfig{IgnorePriority: true}, "Levee-Priority", []string{"critical"}, "", priority.Normal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got seen
			s := newServer(t, middleware(t, tc.cfg, priorityHandler(&got)), true)
			req, err := http.NewRequest(http.MethodGet, s.URL, nil)
			require.NoError(t, err)
			for _, v := range tc.values {
				req.Header.Add(tc.header, v)
			}
			resp, err := (&http.Client{Transport: s.client}).Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusNoContent, resp.StatusCode, "served, not refused")
			assert.Equal(t, seen{tc.carried, tc.want}, got)
		})
	}
}

// The Transport sends the priority its request's context carries, on every attempt; a value
// the caller set stays; OmitPriority sends none.
func TestTransportSendsThePriority(t *testing.T) {
	var mu sync.Mutex
	var got [][]string // each request's Levee-Priority and X-Priority values
	var fail bool      // the next request is answered 503
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, []string{strings.Join(r.Header.Values("Levee-Priority"), ","), strings.Join(r.Header.Values("X-Priority"), ",")})
		if fail {
			fail = false
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}), true)
	r, err := retry.New("dependency", leveehttp.RetryConfig(retry.Config{MaxAttempts: 2, WaitDuration: time.Millisecond}))
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		p      *levee.Pipeline[*http.Response]
		cfg    leveehttp.Config
		ctx    context.Context
		set    string // the caller's own Levee-Priority value
		fail   bool
		expect [][]string
	}{
		{"a priority", nil, leveehttp.Config{}, priority.WithPriority(context.Background(), priority.Critical), "", false, [][]string{{"critical", ""}}},
		{"a level", nil, leveehttp.Config{}, priority.WithLevel(context.Background(), 337), "", false, [][]string{{"high/37", ""}}},
		{"none", nil, leveehttp.Config{}, context.Background(), "", false, [][]string{{"", ""}}},
		{"the caller's value", nil, leveehttp.Config{}, priority.WithPriority(context.Background(), priority.Critical), "low", false, [][]string{{"low", ""}}},
		{"another header", nil, leveehttp.Config{PriorityHeader: "x-priority"}, priority.WithPriority(context.Background(), priority.Low), "", false, [][]string{{"", "low"}}},
		{"OmitPriority", nil, leveehttp.Config{OmitPriority: true}, priority.WithPriority(context.Background(), priority.Critical), "", false, [][]string{{"", ""}}},
		{"every attempt", levee.Compose[*http.Response]().WithRetry(r), leveehttp.Config{}, priority.WithPriority(context.Background(), priority.Sheddable), "", true, [][]string{{"sheddable", ""}, {"sheddable", ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			got, fail = nil, tc.fail
			mu.Unlock()
			client := clientFor(t, s, tc.p, tc.cfg)
			req, err := http.NewRequestWithContext(tc.ctx, http.MethodGet, s.URL, nil)
			require.NoError(t, err)
			if tc.set != "" {
				req.Header.Set("Levee-Priority", tc.set)
			}
			resp, err := client.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusNoContent, resp.StatusCode)
			mu.Lock()
			assert.Equal(t, tc.expect, got)
			mu.Unlock()
			assert.Len(t, req.Header.Values("Levee-Priority"), len(strings.Fields(tc.set)), "the caller's request is not modified")
		})
	}
}

// From a client's context to a server's: the exact level crosses the wire.
func TestPriorityFromClientToServer(t *testing.T) {
	var level priority.Level
	s := newServer(t, middleware(t, leveehttp.ServerConfig{PriorityHeader: "X-Priority"}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		level = priority.LevelFromContext(r.Context())
	})), true)
	client := clientFor(t, s, nil, leveehttp.Config{PriorityHeader: "X-Priority"})
	req, err := http.NewRequestWithContext(priority.WithLevel(context.Background(), 412), http.MethodGet, s.URL, nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, priority.Level(412), level)
}

func TestPriorityHeaderMustBeAHeaderName(t *testing.T) {
	_, err := leveehttp.Middleware(leveehttp.ServerConfig{PriorityHeader: "a b"})
	assert.EqualError(t, err, `leveehttp: PriorityHeader must be a valid header name, got "a b"`)
	_, err = leveehttp.NewTransport(nil, nil, leveehttp.Config{PriorityHeader: "a:b"})
	assert.EqualError(t, err, `leveehttp: PriorityHeader must be a valid header name, got "a:b"`)
}
