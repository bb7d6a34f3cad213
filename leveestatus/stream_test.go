package leveestatus_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveestatus"
	"github.com/levee-go/levee/registry"
)

// sse is one server-sent event.
type sse struct{ event, data string }

// readEvent reads the next event from a text/event-stream, skipping comments and fields
// other than event and data.
func readEvent(t *testing.T, r *bufio.Reader) sse {
	t.Helper()
	var e sse
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && e.event != "":
			return e
		case strings.HasPrefix(line, "event: "):
			e.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			e.data += strings.TrimPrefix(line, "data: ")
		}
	}
}

// snapshotOf decodes a snapshot event, leaving its times out.
type snapshotOf struct {
	Instances []struct {
		Pattern, Name, State string
		CallsPerSecond       float64
		Calls                int64
		Transitions          []struct{ From, To string }
	}
}

func TestStreamOverHTTP(t *testing.T) {
	reg := registry.New()
	cb := must(circuitbreaker.New("payment", circuitbreaker.Config{}))
	require.NoError(t, reg.AddCircuitBreaker(cb))
	// An hour between snapshots: every event after the first comes from a transition.
	h := must(leveestatus.NewHandler(reg, leveestatus.SnapshotInterval(time.Hour)))
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := must(http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/stream", nil))
	resp := must(srv.Client().Do(req))
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	r := bufio.NewReader(resp.Body)

	first := readEvent(t, r)
	require.Equal(t, "snapshot", first.event)
	var snap snapshotOf
	require.NoError(t, json.Unmarshal([]byte(first.data), &snap))
	require.Len(t, snap.Instances, 1)
	assert.Equal(t, "CLOSED", snap.Instances[0].State)
	assert.Empty(t, snap.Instances[0].Transitions)

	require.NoError(t, cb.TransitionToForcedOpenState())
	tr := readEvent(t, r)
	require.Equal(t, "transition", tr.event)
	var got struct{ Pattern, Name, From, To, Time string }
	require.NoError(t, json.Unmarshal([]byte(tr.data), &got))
	assert.Equal(t, "circuitbreaker", got.Pattern)
	assert.Equal(t, "payment", got.Name)
	assert.Equal(t, "CLOSED", got.From)
	assert.Equal(t, "FORCED_OPEN", got.To)
	_, err := time.Parse(time.RFC3339Nano, got.Time)
	assert.NoError(t, err)

	next := readEvent(t, r)
	require.Equal(t, "snapshot", next.event)
	require.NoError(t, json.Unmarshal([]byte(next.data), &snap))
	assert.Equal(t, "FORCED_OPEN", snap.Instances[0].State)
	require.Len(t, snap.Instances[0].Transitions, 1)
	assert.Equal(t, "CLOSED", snap.Instances[0].Transitions[0].From)
	assert.Equal(t, "FORCED_OPEN", snap.Instances[0].Transitions[0].To)

	// Closing the handler ends the stream.
	require.NoError(t, h.Close())
	_, err = io.ReadAll(r)
	assert.NoError(t, err)
}

func TestStreamEndsWithTheRequest(t *testing.T) {
	h := must(leveestatus.NewHandler(registry.New()))
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req := must(http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/stream", nil))
	resp := must(srv.Client().Do(req))
	r := bufio.NewReader(resp.Body)
	e := readEvent(t, r)
	require.Equal(t, "snapshot", e.event)
	var snap struct {
		Time      string
		Instances []any
	}
	require.NoError(t, json.Unmarshal([]byte(e.data), &snap))
	assert.Equal(t, []any{}, snap.Instances)
	_, err := time.Parse(time.RFC3339Nano, snap.Time)
	assert.NoError(t, err)
	cancel()
	_ = resp.Body.Close()
	// srv.Close waits for the handler to return; goleak checks that nothing is left.
}

// pipeWriter is an http.ResponseWriter writing into a pipe, so that a stream can be read in
// a synctest bubble, on the fake clock.
type pipeWriter struct {
	hdr http.Header
	w   *io.PipeWriter
}

func (p *pipeWriter) Header() http.Header         { return p.hdr }
func (p *pipeWriter) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *pipeWriter) WriteHeader(int)             {}

func TestStreamSnapshotsAndCallsPerSecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := registry.New()
		cb := must(circuitbreaker.New("payment", circuitbreaker.Config{SlidingWindowSize: 10, MinimumNumberOfCalls: 5, FailureRateThreshold: 100}))
		require.NoError(t, reg.AddCircuitBreaker(cb))
		h := must(leveestatus.NewHandler(reg, leveestatus.SnapshotInterval(2*time.Second)))
		defer h.Close()

		pr, pw := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(&pipeWriter{hdr: http.Header{}, w: pw}, httptest.NewRequestWithContext(ctx, http.MethodGet, "/stream", nil))
			_ = pw.Close()
		}()
		r := bufio.NewReader(pr)
		view := func(at, state string, cps float64, calls, failed int, rate string, trans string) string {
			b := must(json.Marshal(cps))
			return `{"time":"` + at + `","instances":[{"pattern":"circuitbreaker","name":"payment","state":"` + state +
				`","callsPerSecond":` + string(b) + `,"calls":` + itoa(calls) + `,"details":{"failureRate":` + rate +
				`,"failureRateThreshold":100,"slowCallRate":` + map[bool]string{true: "-1", false: "0"}[rate == "-1"] +
				`,"slowCallRateThreshold":100,"bufferedCalls":` + itoa(calls) + `,"failedCalls":` + itoa(failed) +
				`,"slowCalls":0,"slowFailedCalls":0,"notPermittedCalls":0,"state":"` + state + `"}` + trans + `}]}`
		}
		e := readEvent(t, r)
		assert.Equal(t, "snapshot", e.event)
		assert.JSONEq(t, view(t0, "CLOSED", 0, 0, 0, "-1", ""), e.data)

		// Six calls in the first two seconds, three of them failures: 3 calls per second.
		for i := range 6 {
			_, _ = circuitbreaker.Execute(ctx, cb, func(context.Context) (int, error) {
				if i%2 == 0 {
					return 0, errDown
				}
				return 1, nil
			})
		}
		e = readEvent(t, r)
		assert.Equal(t, "snapshot", e.event)
		assert.JSONEq(t, view(t2, "CLOSED", 3, 6, 3, "50", ""), e.data)

		// A transition is sent at once, with a snapshot repeating the last rate.
		time.Sleep(time.Second)
		require.NoError(t, cb.TransitionToOpenState())
		e = readEvent(t, r)
		assert.Equal(t, sse{"transition", `{"pattern":"circuitbreaker","name":"payment","from":"CLOSED","to":"OPEN","time":"` + t3 + `"}`}, e)
		e = readEvent(t, r)
		assert.Equal(t, "snapshot", e.event)
		assert.JSONEq(t, view(t3, "OPEN", 3, 6, 3, "50", `,"transitions":[{"from":"CLOSED","to":"OPEN","time":"`+t3+`"}]`), e.data)

		// At 00:00:04 no call came in the last two seconds.
		e = readEvent(t, r)
		assert.JSONEq(t, view("2000-01-01T00:00:04Z", "OPEN", 0, 6, 3, "50", `,"transitions":[{"from":"CLOSED","to":"OPEN","time":"`+t3+`"}]`), e.data)

		cancel()
		_ = pr.Close()
		<-done
	})
}

func itoa(n int) string { return string(must(json.Marshal(n))) }

func TestStreamEndsWhenTheHandlerCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := must(leveestatus.NewHandler(registry.New()))
		pr, pw := io.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(&pipeWriter{hdr: http.Header{}, w: pw}, httptest.NewRequest(http.MethodGet, "/stream", nil))
			_ = pw.Close()
		}()
		r := bufio.NewReader(pr)
		assert.JSONEq(t, `{"time":"`+t0+`","instances":[]}`, readEvent(t, r).data)
		require.NoError(t, h.Close())
		rest, err := io.ReadAll(r)
		assert.NoError(t, err)
		assert.Empty(t, rest)
		<-done
	})
}

func TestDashboard(t *testing.T) {
	h := must(leveestatus.NewHandler(registry.New()))
	defer h.Close()
	code, ct, body := do(t, h, http.MethodGet, "/", "")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "text/html; charset=utf-8", ct)
	assert.True(t, strings.HasPrefix(body, "<!doctype html>"))
	assert.Contains(t, body, `new EventSource("stream")`)
	// Self-contained: nothing is loaded from elsewhere.
	for _, ref := range []string{"http://", "https://", "<link", "src="} {
		assert.NotContains(t, body, ref)
	}
	code, _, _ = do(t, h, http.MethodGet, "/missing", "")
	assert.Equal(t, http.StatusNotFound, code)
}
