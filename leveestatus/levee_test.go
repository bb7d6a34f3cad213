package leveestatus_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/internal/leveefixture"
	"github.com/levee-go/levee/keyed"
	"github.com/levee-go/levee/leveestatus"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/throttle"
)

var update = flag.Bool("update", false, "rewrite testdata/levee-details.json")

// leveePaths are the endpoints of levee's own patterns, in the order leveefixture.Populate adds them.
var leveePaths = []string{
	"/details/adaptivelimiters", "/details/adaptivelimiters/api",
	"/details/partitionedlimiters", "/details/prioritizers", "/details/throttlers",
	"/details/keyed", "/details/keyed/hosts",
	"/details/sharedratelimiters", "/details/sharedcircuitbreakers", "/details/sharedcircuitbreakers/payments",
}

// The details of levee's own patterns: every figure of the scenario of leveefixture.Populate,
// exactly, as in testdata/levee-details.json (path → body).
func TestLeveeDetails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := registry.New()
		release := leveefixture.Populate(t, reg)
		defer release()
		h, err := leveestatus.NewHandler(reg)
		require.NoError(t, err)
		defer h.Close()

		got := map[string]json.RawMessage{}
		for _, p := range leveePaths {
			got[p] = json.RawMessage(get(t, h, p))
		}
		if *update {
			b, err := json.MarshalIndent(got, "", "  ")
			require.NoError(t, err)
			require.NoError(t, os.WriteFile("testdata/levee-details.json", append(b, '\n'), 0o644))
		}
		raw, err := os.ReadFile("testdata/levee-details.json")
		require.NoError(t, err)
		want := map[string]json.RawMessage{}
		require.NoError(t, json.Unmarshal(raw, &want))
		require.Len(t, want, len(leveePaths))
		for _, p := range leveePaths {
			assert.JSONEq(t, string(want[p]), string(got[p]), p)
		}

		code, ct, body := do(t, h, http.MethodGet, "/details/throttlers/nope", "")
		assert.Equal(t, http.StatusNotFound, code)
		assert.Equal(t, "application/json", ct)
		assert.JSONEq(t, `{"status":404,"error":"Not Found","message":"leveestatus: no throttle named \"nope\"",
			"path":"/details/throttlers/nope"}`, body)
		code, _, _ = do(t, h, http.MethodPost, "/details/keyed", "")
		assert.Equal(t, http.StatusMethodNotAllowed, code)
	})
}

// An evicted key leaves a family's instances; a removed family leaves the list.
func TestKeyedEvictionLeavesDetails(t *testing.T) {
	reg := registry.New()
	hosts, err := keyed.New(keyed.Config{MaxKeys: 2}, func(host string) (*circuitbreaker.CircuitBreaker, error) {
		return circuitbreaker.New(host, circuitbreaker.Config{})
	})
	require.NoError(t, err)
	kf, err := registry.NewKeyedFamily("hosts", hosts, registry.KeyedFamilyConfig{PerKeySeries: true})
	require.NoError(t, err)
	require.NoError(t, reg.AddKeyed(kf))
	h, err := leveestatus.NewHandler(reg)
	require.NoError(t, err)
	defer h.Close()
	for _, k := range []string{"a", "b"} {
		_, err := hosts.Get(k)
		require.NoError(t, err)
	}
	var d struct {
		Instances map[string]map[string]any `json:"instances"`
		Removed   int                       `json:"removed"`
	}
	require.NoError(t, json.Unmarshal([]byte(get(t, h, "/details/keyed/hosts")), &d))
	assert.Equal(t, map[string]map[string]any{"a": {"state": "CLOSED"}, "b": {"state": "CLOSED"}}, d.Instances)
	require.True(t, hosts.Remove("a"))
	d.Instances = nil
	require.NoError(t, json.Unmarshal([]byte(get(t, h, "/details/keyed/hosts")), &d))
	assert.Equal(t, map[string]map[string]any{"b": {"state": "CLOSED"}}, d.Instances)
	assert.Equal(t, 1, d.Removed)
	_, ok := reg.RemoveKeyed("hosts")
	require.True(t, ok)
	assert.JSONEq(t, `{"keyed":{}}`, get(t, h, "/details/keyed"))
}

// The dashboard's stream shows levee's own patterns with their details, their calls counted
// from their own counters.
func TestStreamShowsLeveePatterns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := registry.New()
		th, err := throttle.New("inventory", throttle.Config{})
		require.NoError(t, err)
		require.NoError(t, reg.AddThrottler(th))
		for range 3 {
			_, err := throttle.Execute(context.Background(), th, func(context.Context) (int, error) { return 1, nil })
			require.NoError(t, err)
		}
		require.NoError(t, reg.AddSharedCircuitBreaker(leveefixture.StoreBreaker{}))
		h, err := leveestatus.NewHandler(reg)
		require.NoError(t, err)
		defer h.Close()

		pr, pw := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(&pipeWriter{hdr: http.Header{}, w: pw}, httptest.NewRequestWithContext(ctx, http.MethodGet, "/stream", nil))
			_ = pw.Close()
		}()
		e := readEvent(t, bufio.NewReader(pr))
		assert.Equal(t, "snapshot", e.event)
		assert.JSONEq(t, `{"time":"`+t0+`","instances":[
			{"pattern":"throttle","name":"inventory","callsPerSecond":0,"calls":3,"details":{"k":2,"windowInMs":120000,
				"requests":3,"accepts":3,"rejectionProbability":0,"permittedCalls":3,"throttledCalls":0}},
			{"pattern":"sharedcircuitbreaker","name":"payments","callsPerSecond":0,"calls":0,"details":{"state":"OPEN",
				"version":7,"origin":"host-b:34","replica":"host-a:12","published":2,"adopted":5,"conflicts":1,
				"storeErrors":3,"localDecisions":1,"trialRefusals":4,"storeAvailable":true}}]}`, e.data)
		cancel()
		_ = pr.Close()
		<-done
	})
}

// An adaptive limiter's events are kept and listed as the other patterns'.
func TestAdaptiveLimiterEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := registry.New()
		h, err := leveestatus.NewHandler(reg)
		require.NoError(t, err)
		defer h.Close()
		l, err := adaptive.New("api", leveefixture.FixedLimit(1))
		require.NoError(t, err)
		require.NoError(t, reg.AddAdaptiveLimiter(l))
		p, err := l.Acquire(context.Background())
		require.NoError(t, err)
		_, err = l.Acquire(context.Background())
		require.ErrorIs(t, err, adaptive.ErrLimitExceeded)
		p.OnSuccess()
		ev := func(typ string) string {
			return `{"adaptiveLimiterName":"api","type":"` + typ + `","creationTime":"` + t0 + `"}`
		}
		assert.JSONEq(t, `{"adaptiveLimiterEvents":[`+ev("CALL_PERMITTED")+`,`+ev("CALL_REJECTED")+`]}`,
			get(t, h, "/details/adaptivelimiterevents"))
		assert.JSONEq(t, `{"adaptiveLimiterEvents":[`+ev("CALL_REJECTED")+`]}`,
			get(t, h, "/details/adaptivelimiterevents/api/call_rejected"))
		aimd, err := adaptive.New("aimd", adaptive.Config{Algorithm: adaptive.AIMD, InitialLimit: 10})
		require.NoError(t, err)
		require.NoError(t, reg.AddAdaptiveLimiter(aimd))
		p, err = aimd.Acquire(context.Background())
		require.NoError(t, err)
		p.OnDropped() // AIMD backs off: 10 × 0.9
		assert.JSONEq(t, `{"adaptiveLimiterEvents":[{"adaptiveLimiterName":"aimd","type":"LIMIT_CHANGED","creationTime":"`+t0+`","limit":9}]}`,
			get(t, h, "/details/adaptivelimiterevents/aimd/LIMIT_CHANGED"))
		code, _, body := do(t, h, http.MethodGet, "/details/adaptivelimiterevents/nope", "")
		assert.Equal(t, http.StatusNotFound, code)
		assert.Contains(t, body, `leveestatus: no adaptive named \"nope\"`)
	})
}
