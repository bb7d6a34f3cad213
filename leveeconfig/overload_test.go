package leveeconfig_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/leveeconfig"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/throttle"
)

// levee.adaptive, levee.prioritizer and levee.throttle: Resilience4j's shape (configs,
// instances, baseConfig, configs.default), keys, relaxed binding and LEVEE_ variables.
func TestLeveeSections(t *testing.T) {
	c, err := leveeconfig.Load("testdata/overload/application.yml", leveeconfig.Options{Errors: paymentErrors,
		Environ: []string{"LEVEE_ADAPTIVE_INSTANCES_SEARCH_MAXLIMIT=50", "LEVEE_VERSION=3"}})
	require.NoError(t, err)
	checkGolden(t, "overload/settings.golden", renderLevee(c))

	o, err := c.NewOverload()
	require.NoError(t, err)
	require.Len(t, o.Limiters, 2)
	want := adaptive.DefaultConfig()
	want.Algorithm, want.InitialLimit, want.MinLimit, want.MaxLimit = adaptive.Gradient2, 40, 4, 200
	want.MaxQueued, want.MaxWaitDuration, want.Tolerance, want.QueueSize = 100, 250*time.Millisecond, 2, adaptive.NoQueueSize
	want.ProbeLimit = 4 // at least MinLimit
	assert.Equal(t, want, o.Limiters["checkout"].Config())
	want = adaptive.DefaultConfig()
	want.MaxLimit, want.ProbeInterval, want.LatencyCeiling = 50, 30*time.Second, 200*time.Millisecond
	assert.Equal(t, want, o.Limiters["search"].Config(), "baseConfig vegas over configs.default, as Resilience4j's other registries")

	assert.Equal(t, adaptive.PrioritizerConfig{QueueStart: 1.5, QueueFull: 3, CalibrationInterval: 500 * time.Millisecond},
		o.Prioritizers["shared"].Config())
	assert.Same(t, o.Prioritizers["shared"], c.PrioritizerOf(o, "checkout"))
	assert.Nil(t, c.PrioritizerOf(o, "search"))

	tc := o.Throttlers["backend"].Config()
	assert.Equal(t, 1.5, tc.K)
	assert.Equal(t, time.Minute, tc.Window)
	assert.Equal(t, 30, tc.WindowBuckets)
	assert.Equal(t, []error{payment.ErrGateway}, tc.RecordErrors)
	assert.Equal(t, throttle.Config{K: 1.5, Window: time.Minute, WindowBuckets: 30, RecordErrors: []error{payment.ErrGateway}},
		c.Throttlers.Instances["backend"])

	// A change is reported, not made: the registry does not hold these.
	next, err := leveeconfig.Load("testdata/overload/application.yml", leveeconfig.Options{Errors: paymentErrors,
		Environ: []string{"LEVEE_THROTTLE_INSTANCES_BACKEND_K=3"}})
	require.NoError(t, err)
	reg, err := c.Registry()
	require.NoError(t, err)
	rep, err := c.ReloadReport(reg, next)
	require.NoError(t, err)
	assert.Empty(t, rep.Applied)
	var un []string
	for _, u := range rep.Unchanged {
		un = append(un, u.String())
	}
	assert.Equal(t, []string{
		"adaptive search maxLimit 50 -> 200: levee's own sections are not in the registry: build them again with NewOverload",
		"throttle backend k 1.5 -> 3: levee's own sections are not in the registry: build them again with NewOverload",
	}, un)
}

// renderLevee renders the settings of levee's sections.
func renderLevee(c *leveeconfig.Config) string {
	out := ""
	for _, p := range []string{"adaptive", "prioritizer", "throttle"} {
		for _, name := range c.Names(leveeconfigPattern(p)) {
			out += p + " " + name + "\n"
			for _, s := range c.Settings(leveeconfigPattern(p), name) {
				out += "  " + s.Key + ": " + s.Value + "  (" + s.Source.String() + ")\n"
			}
		}
	}
	for _, w := range c.Warnings {
		out += w.Level.String() + ": " + w.String() + "\n"
	}
	return out
}

func leveeconfigPattern(p string) registry.Pattern {
	switch p {
	case "adaptive":
		return leveeconfig.Adaptive
	case "prioritizer":
		return leveeconfig.Prioritizer
	}
	return leveeconfig.Throttle
}

// Bad values of levee's sections are refused naming the key, its line and the range.
func TestLeveeSectionsRefuseBadValues(t *testing.T) {
	_, err := load(t, `levee:
  adaptive:
    instances:
      a:
        limitAlgorithm: CUBIC
        prioritizer: nobody
        backoffRatio: 1
      w:
        maxLimit: 10
        initialLimit: 20
  prioritizer:
    instances:
      p:
        queueStart: 2
        queueFull: 1
      q:
        queueStart: -1
  throttle:
    instances:
      t:
        k: 0.5
        window: -1s
      u:
        window: 10ns
        windowBuckets: 20
      v:
        recordExceptions: [io.github.resilience4j.circuitbreaker.CallNotPermittedException]
  bogus: {}
`)
	assert.EqualError(t, err, `app.yml:5: levee.adaptive.instances.a.limitAlgorithm: must be VEGAS, AIMD or GRADIENT2, got "CUBIC"
app.yml:6: levee.adaptive.instances.a.prioritizer: "nobody" names no instance of levee.prioritizer (have: p, q)
app.yml:7: levee.adaptive.instances.a.backoffRatio: must be in [0.5, 1), got 1
app.yml:10: levee.adaptive.instances.w.initialLimit: must be in [minLimit (1), maxLimit (10)], got 20 (minLimit: default, maxLimit: app.yml:9)
app.yml:15: levee.prioritizer.instances.p.queueFull: must be in (queueStart (2), 1e6], got 1 (queueStart: app.yml:14)
app.yml:17: levee.prioritizer.instances.q.queueStart: must be in [0, 1e6], got -1
app.yml:21: levee.throttle.instances.t.k: must be in [1, 1e6], got 0.5
app.yml:22: levee.throttle.instances.t.window: duration "-1s" is negative
app.yml:24: levee.throttle.instances.u.window: must be at least windowBuckets (20) ns, got 10ns (windowBuckets: app.yml:25)
app.yml:27: levee.throttle.instances.v.recordExceptions: lists a levee rejection (circuitbreaker: call not permitted): a rejection by an inner pattern never reached the backend, and a throttler never counts it
app.yml:28: levee.bogus: unknown key: levee reads adaptive, prioritizer, throttle`, err.Error())
}

// partitions makes an adaptive instance a PartitionedLimiter (Netflix's shares), maxKeys a
// keyed one; their errors name the keys in the file's words.
func TestAdaptivePartitions(t *testing.T) {
	c, err := load(t, `levee:
  adaptive:
    configs:
      default:
        limitAlgorithm: AIMD
    instances:
      api:
        maxLimit: 100
        rejectionDelay: 5ms
        partitions:
          live: {share: 0.9}
          batch:
            share: 0.1
            rejectionDelay: 20ms
      tenants:
        maxKeys: 50
        rejectionDelay: 1ms
        maxDelayedCalls: 10
`)
	require.NoError(t, err)
	assert.Empty(t, c.Warnings)
	o, err := c.NewOverload()
	require.NoError(t, err)
	assert.Empty(t, o.Limiters)
	api := o.Partitioned["api"].Config()
	assert.Equal(t, []adaptive.Partition{{Name: "live", Share: 0.9, RejectionDelay: 5 * time.Millisecond},
		{Name: "batch", Share: 0.1, RejectionDelay: 20 * time.Millisecond}}, api.Partitions, "in the file's order")
	assert.Equal(t, adaptive.AIMD, api.Algorithm)
	assert.Equal(t, 100, api.MaxLimit)
	assert.Equal(t, adaptive.DefaultMaxDelayedCalls, api.MaxDelayedCalls)
	assert.Equal(t, adaptive.KeyedConfig{Config: c.Adaptive.Instances["tenants"], MaxKeys: 50, RejectionDelay: time.Millisecond, MaxDelayedCalls: 10},
		c.AdaptiveKeyed["tenants"])
	require.NotNil(t, o.Partitioned["tenants"])
	assert.Equal(t, "{batch: {rejectionDelay: 20ms, share: 0.1}, live: {share: 0.9}}", settingOf(c, leveeconfig.Adaptive, "api", "partitions"))

	_, err = load(t, `levee:
  prioritizer.instances.p: {}
  adaptive:
    instances:
      a:
        partitions:
          live: {share: 0.9}
          batch: {share: 0.2}
      b:
        partitions: {live: {share: 0}, x: {weight: 1}, y: {}}
      c:
        maxKeys: 10
        partitions: {live: {share: 1}}
      d:
        maxQueued: 5
        maxKeys: 10
      e:
        partitions: {live: {share: 0.5}}
        prioritizer: p
      f:
        maxKeys: 0
`)
	assert.EqualError(t, err, `app.yml:6: levee.adaptive.instances.a.partitions: the shares sum to 1.1 (live 0.9, batch 0.2): they must sum to at most 1
app.yml:10: levee.adaptive.instances.b.partitions.live.share: must be in (0, 1], got 0
app.yml:10: levee.adaptive.instances.b.partitions.x: no share: a partition needs its share of the limit, in (0, 1]
app.yml:10: levee.adaptive.instances.b.partitions.x.weight: unknown key of a partition: it takes share and rejectionDelay
app.yml:10: levee.adaptive.instances.b.partitions.y: no share: a partition needs its share of the limit, in (0, 1]
app.yml:12: levee.adaptive.instances.c.maxKeys: conflicts with partitions (app.yml:13): a limiter is partitioned by names or by keys, not both
app.yml:15: levee.adaptive.instances.d.maxQueued: must be 0 with maxKeys (app.yml:16): a partitioned limiter queues nobody
app.yml:19: levee.adaptive.instances.e.prioritizer: a prioritizer serves an unpartitioned limiter: remove partitions or maxKeys, or the prioritizer
app.yml:21: levee.adaptive.instances.f.maxKeys: must be at least 1, got 0`, err.Error())

	c, err = load(t, "levee.adaptive.instances.a:\n  rejectionDelay: 1ms\n")
	require.NoError(t, err)
	assert.Equal(t, []string{"app.yml:2: levee.adaptive.instances.a.rejectionDelay: ignored without partitions or maxKeys: it applies to a partitioned limiter"},
		warningStrings(c))
}

func warningStrings(c *leveeconfig.Config) []string {
	var out []string
	for _, w := range c.Warnings {
		out = append(out, w.String())
	}
	return out
}

func settingOf(c *leveeconfig.Config, p registry.Pattern, name, key string) string {
	for _, s := range c.Settings(p, name) {
		if s.Key == key {
			return s.Value
		}
	}
	return "(none)"
}

// queueStart: 0 is a prioritizer that sheds from the first queued caller on, which the Go
// field says with adaptive.NoQueueStart (its zero means the default, 1).
func TestPrioritizerQueueStartZero(t *testing.T) {
	c, err := load(t, `levee:
  prioritizer:
    instances:
      eager:
        queueStart: 0
        queueFull: 1
`)
	require.NoError(t, err)
	o, err := c.NewOverload()
	require.NoError(t, err)
	assert.Equal(t, adaptive.PrioritizerConfig{QueueStart: adaptive.NoQueueStart, QueueFull: 1, CalibrationInterval: time.Second},
		o.Prioritizers["eager"].Config())
}
