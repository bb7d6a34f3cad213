package leveestatus_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/keyed"
	"github.com/levee-go/levee/leveestatus"
	"github.com/levee-go/levee/priority"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/throttle"
)

var update = flag.Bool("update", false, "rewrite testdata/levee-details.json")

// leveePaths are the endpoints of levee's own patterns, in the fixture's order.
var leveePaths = []string{
	"/details/adaptivelimiters", "/details/adaptivelimiters/api",
	"/details/partitionedlimiters", "/details/prioritizers", "/details/throttlers",
	"/details/keyed", "/details/keyed/hosts",
	"/details/sharedratelimiters", "/details/sharedcircuitbreakers", "/details/sharedcircuitbreakers/payments",
}

type fakeStoreLimiter struct{}

func (fakeStoreLimiter) Name() string { return "partner" }
func (fakeStoreLimiter) StoreLimiterMetrics() registry.StoreLimiterMetrics {
	return registry.StoreLimiterMetrics{
		Permitted: 40, Refused: 7, StoreRefused: 2, LocalPermitted: 5, LocalRefused: 3,
		StoreFailures: 4, BreakerRejections: 9, Episodes: 1, Degraded: true, Replicas: 3,
		Replica: "host-a:12", LimitForPeriod: 20, FallbackLimitForPeriod: 6,
		AvailablePermissions: -1, NumberOfWaitingCalls: 2,
	}
}

type fakeStoreBreaker struct{}

func (fakeStoreBreaker) Name() string { return "payments" }
func (fakeStoreBreaker) StoreBreakerMetrics() registry.StoreBreakerMetrics {
	return registry.StoreBreakerMetrics{
		State: circuitbreaker.Open, Version: 7, Origin: "host-b:34", Replica: "host-a:12",
		Published: 2, Adopted: 5, Conflicts: 1, StoreErrors: 3, LocalDecisions: 1, TrialRefusals: 4,
		StoreAvailable: true,
	}
}

func fixedLimit(n int) adaptive.Config {
	return adaptive.Config{InitialLimit: n, MinLimit: n, MaxLimit: n}
}

// populateLevee fills reg with one instance of each of levee's own patterns, used as
// testdata/levee.prom says, and returns the function that ends the calls still held.
func populateLevee(t *testing.T, reg *registry.Registry) (release func()) {
	t.Helper()
	ctx := context.Background()
	var held []adaptive.Permit
	take := func(p adaptive.Permit, err error) {
		t.Helper()
		require.NoError(t, err)
		held = append(held, p)
	}

	// An adaptive limiter of 2: two calls hold a permit, a third is rejected.
	al, err := adaptive.New("api", fixedLimit(2))
	require.NoError(t, err)
	require.NoError(t, reg.AddAdaptiveLimiter(al))
	take(al.Acquire(ctx))
	take(al.Acquire(ctx))
	_, err = al.Acquire(ctx)
	require.ErrorIs(t, err, adaptive.ErrLimitExceeded)

	// Gradient2 after one call of 10ms.
	g2cfg := fixedLimit(4)
	g2cfg.Algorithm = adaptive.Gradient2
	g2, err := adaptive.New("search", g2cfg)
	require.NoError(t, err)
	require.NoError(t, reg.AddAdaptiveLimiter(g2))
	pm, err := g2.Acquire(ctx)
	require.NoError(t, err)
	time.Sleep(10 * time.Millisecond)
	pm.OnSuccess()

	// Partitions live 0.9 and batch 0.1 of a limit of 2: live takes 2, batch 1 (its share,
	// past the limit), and batch's second is rejected.
	pl, err := adaptive.NewPartitioned("tenants", adaptive.PartitionedConfig{
		Config:     fixedLimit(2),
		Partitions: []adaptive.Partition{{Name: "live", Share: 0.9}, {Name: "batch", Share: 0.1}},
	})
	require.NoError(t, err)
	require.NoError(t, reg.AddPartitionedLimiter(pl))
	take(pl.AcquirePartition(ctx, "live"))
	take(pl.AcquirePartition(ctx, "live"))
	take(pl.AcquirePartition(ctx, "batch"))
	_, err = pl.AcquirePartition(ctx, "batch")
	require.ErrorIs(t, err, adaptive.ErrLimitExceeded)

	// A limit of 2 per key, one key at most: a takes both, b is one key too many, a's third
	// is past its share.
	kl, err := adaptive.NewKeyed("users", adaptive.KeyedConfig{Config: adaptive.Config{InitialLimit: 2, MinLimit: 2, MaxLimit: 2}, MaxKeys: 1})
	require.NoError(t, err)
	require.NoError(t, reg.AddPartitionedLimiter(kl))
	take(kl.AcquirePartition(ctx, "a"))
	take(kl.AcquirePartition(ctx, "a"))
	_, err = kl.AcquirePartition(ctx, "b")
	require.ErrorIs(t, err, adaptive.ErrLimitExceeded)
	_, err = kl.AcquirePartition(ctx, "a")
	require.ErrorIs(t, err, adaptive.ErrLimitExceeded)

	// A prioritizer over a limit of 2 with a queue: two normal calls hold permits, three wait,
	// and after a calibration (rate 0.5) a sheddable call is shed.
	ql, err := adaptive.New("queue", adaptive.Config{InitialLimit: 2, MinLimit: 2, MaxLimit: 2, MaxQueued: 10, MaxWaitDuration: time.Hour})
	require.NoError(t, err)
	pr, err := adaptive.NewPrioritizer("service", adaptive.PrioritizerConfig{CalibrationInterval: time.Second})
	require.NoError(t, err)
	pr.Register(ql)
	require.NoError(t, reg.AddPrioritizer(pr))
	normal := priority.WithLevel(ctx, 250)
	var queued []adaptive.Permit
	for range 2 {
		pm, err := pr.Acquire(normal, ql)
		require.NoError(t, err)
		queued = append(queued, pm)
	}
	done := make(chan struct{}, 3)
	for range 3 {
		go func() {
			if pm, err := pr.Acquire(normal, ql); err == nil {
				pm.OnIgnore()
			}
			done <- struct{}{}
		}()
	}
	synctest.Wait()
	time.Sleep(time.Second)
	_, err = pr.Acquire(priority.WithPriority(ctx, priority.Sheddable), ql)
	require.ErrorIs(t, err, adaptive.ErrShed)

	// A throttler after 4 rejections by the backend: probability (4 − 2×0)/(4+1) = 0.8, and
	// the fifth call (random 0.75, which the fourth passed at 3/4) is throttled.
	th, err := throttle.New("inventory", throttle.Config{Random: func() float64 { return 0.75 }})
	require.NoError(t, err)
	require.NoError(t, reg.AddThrottler(th))
	overloaded := errors.New("503")
	for range 4 {
		_, err := throttle.Execute(ctx, th, func(context.Context) (int, error) { return 0, overloaded })
		require.ErrorIs(t, err, overloaded)
	}
	_, err = throttle.Execute(ctx, th, func(context.Context) (int, error) { return 1, nil })
	require.ErrorIs(t, err, throttle.ErrThrottled)

	// Breakers per host, 2 keys at most: a is forced open, c's creation evicts b.
	hosts, err := keyed.New(keyed.Config{MaxKeys: 2}, func(host string) (*circuitbreaker.CircuitBreaker, error) {
		return circuitbreaker.New(host, circuitbreaker.Config{})
	})
	require.NoError(t, err)
	kf, err := registry.NewKeyedFamily("hosts", hosts, registry.KeyedFamilyConfig{PerKeySeries: true})
	require.NoError(t, err)
	require.NoError(t, reg.AddKeyed(kf))
	a, err := hosts.Get("a")
	require.NoError(t, err)
	require.NoError(t, a.TransitionToForcedOpenState())
	_, err = hosts.Get("b")
	require.NoError(t, err)
	_, err = hosts.Get("c")
	require.NoError(t, err)
	_, err = hosts.Get("a")
	require.NoError(t, err)

	require.NoError(t, reg.AddSharedRateLimiter(fakeStoreLimiter{}))
	require.NoError(t, reg.AddSharedCircuitBreaker(fakeStoreBreaker{}))

	return func() {
		for _, p := range append(held, queued...) {
			p.OnIgnore()
		}
		for range 3 {
			<-done
		}
	}
}

// The details of levee's own patterns: every figure of the scenario above, exactly, as in
// testdata/levee-details.json (path → body).
func TestLeveeDetails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := registry.New()
		release := populateLevee(t, reg)
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
		require.NoError(t, reg.AddSharedCircuitBreaker(fakeStoreBreaker{}))
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
		l, err := adaptive.New("api", fixedLimit(1))
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
