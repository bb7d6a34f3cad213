package adaptive_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/adaptive"
)

func feed(a adaptive.LimitAlgorithm, n int, rtt time.Duration, inFlight int) float64 {
	var e float64
	for range n {
		e = a.OnSample(adaptive.Sample{RTT: rtt, InFlight: inFlight})
	}
	return e
}

// Gradient2's formula, window by window: 10 samples of 10 ms (the long average starts there,
// gradient 1: 10 × 0.8 + (10 + 4) × 0.2), then 20 ms (long 15 ms, 1.5 × 15 / 20 caps at 1),
// then 40 ms (long 23.3 ms, gradient 0.875).
func TestGradient2Formula(t *testing.T) {
	a, err := adaptive.NewAlgorithm(adaptive.Config{Algorithm: adaptive.Gradient2, InitialLimit: 10})
	require.NoError(t, err)
	g := a.(*adaptive.Gradient2Limit)
	assert.Equal(t, 10.0, feed(a, 9, 10*time.Millisecond, 10), "a window is int(limit) samples")
	assert.InDelta(t, 10.8, feed(a, 1, 10*time.Millisecond, 10), 1e-9)
	assert.Equal(t, 10*time.Millisecond, g.LongRTT())
	assert.InDelta(t, 11.6, feed(a, 10, 20*time.Millisecond, 10), 1e-9)
	assert.Equal(t, 15*time.Millisecond, g.LongRTT())
	assert.InDelta(t, 11.6*0.8+(11.6*0.875+4)*0.2, feed(a, 11, 40*time.Millisecond, 11), 1e-9)
	assert.Equal(t, 40*time.Millisecond, g.ShortRTT())
	// Fewer than half the limit in flight: the caller is the bottleneck, the limit holds.
	before := a.Limit()
	assert.Equal(t, before, feed(a, 12, 80*time.Millisecond, 5))
	// A drop counts as a window at Timeout (5 s): the gradient halves the limit at most.
	assert.InDelta(t, before*0.8+(before*0.5+4)*0.2, a.OnSample(adaptive.Sample{Dropped: true, InFlight: 12}), 1e-9)
}

// Vegas's formula, window by window, from a limit of 10: no queue grows it by 1; at 11 calls
// of 12 ms the queue is 11 × 2/12 = 1.83, within Alpha and Beta times log10(11) = 1.04; at
// 20 ms it is 5.5, above Beta × 1.04; a drop shrinks it at once.
func TestVegasFormula(t *testing.T) {
	a, err := adaptive.NewAlgorithm(adaptive.Config{InitialLimit: 10, ProbeInterval: adaptive.NoProbe})
	require.NoError(t, err)
	v := a.(*adaptive.VegasLimit)
	assert.Equal(t, 11.0, feed(a, 10, 10*time.Millisecond, 10))
	assert.Equal(t, 10*time.Millisecond, v.NoLoadLatency())
	assert.Equal(t, 11.0, feed(a, 11, 12*time.Millisecond, 11))
	lg := math.Log10(11)
	assert.InDelta(t, 11-lg, feed(a, 11, 20*time.Millisecond, 11), 1e-12)
	assert.InDelta(t, 10-lg, a.OnSample(adaptive.Sample{Dropped: true}), 1e-12, "lg is 1 below 10")
	assert.InDelta(t, 10-lg, feed(a, 8, 10*time.Millisecond, 3), 1e-12, "3 of 8 in flight: the caller is the bottleneck")
}

// A probe starts at the first sample ProbeInterval after the last, runs ProbeSamples samples
// at ProbeLimit, and sets the baseline to their lowest latency.
func TestVegasProbe(t *testing.T) {
	a, err := adaptive.NewAlgorithm(adaptive.Config{InitialLimit: 10, ProbeInterval: time.Minute, ProbeSamples: 3})
	require.NoError(t, err)
	v := a.(*adaptive.VegasLimit)
	t0 := time.Now()
	at := func(d time.Duration, rtt time.Duration) float64 {
		return a.OnSample(adaptive.Sample{At: t0.Add(d), RTT: rtt, InFlight: 10})
	}
	assert.Equal(t, 10.0, at(0, 10*time.Millisecond))
	assert.Equal(t, 10.0, at(59*time.Second, 10*time.Millisecond))
	assert.Equal(t, 3.0, at(time.Minute, 30*time.Millisecond), "the probe starts")
	assert.True(t, v.Probing())
	assert.Equal(t, 3.0, at(time.Minute, 30*time.Millisecond))
	assert.Equal(t, 3.0, at(time.Minute, 25*time.Millisecond))
	assert.Equal(t, 10.0, at(time.Minute, 40*time.Millisecond), "the third sample ends it")
	assert.False(t, v.Probing())
	assert.Equal(t, 25*time.Millisecond, v.NoLoadLatency())
	assert.Equal(t, 10.0, at(2*time.Minute-time.Nanosecond, 25*time.Millisecond))
	assert.Equal(t, 3.0, at(2*time.Minute, 25*time.Millisecond), "the next one a minute after")
}

func TestAIMDFormula(t *testing.T) {
	a, err := adaptive.NewAlgorithm(adaptive.Config{Algorithm: adaptive.AIMD, InitialLimit: 10, Timeout: time.Second})
	require.NoError(t, err)
	assert.Equal(t, 10.1, a.OnSample(adaptive.Sample{RTT: time.Millisecond, InFlight: 5}), "10 + 1/10")
	assert.InDelta(t, 11.05, feed(a, 10, time.Millisecond, 10), 0.01, "1 per 10 calls: one round trip")
	e := a.Limit()
	assert.Equal(t, e, a.OnSample(adaptive.Sample{RTT: time.Millisecond, InFlight: 5}), "5 × 2 < 11")
	assert.InDelta(t, e*0.9, a.OnSample(adaptive.Sample{RTT: 2 * time.Second, InFlight: 11}), 1e-9)
	assert.InDelta(t, e*0.81, a.OnSample(adaptive.Sample{Dropped: true}), 1e-9)
	_, err = adaptive.NewAlgorithm(adaptive.Config{Smoothing: 2})
	assert.EqualError(t, err, "adaptive: Smoothing must be in (0, 1], got 2")
}

// An algorithm can be fed samples measured anywhere, without a Limiter.
func ExampleNewAlgorithm() {
	alg, err := adaptive.NewAlgorithm(adaptive.Config{Algorithm: adaptive.Gradient2, InitialLimit: 10})
	if err != nil {
		panic(err)
	}
	for _, rtt := range []time.Duration{10, 10, 20, 40} {
		var limit float64
		for range int(alg.Limit()) {
			limit = alg.OnSample(adaptive.Sample{RTT: rtt * time.Millisecond, InFlight: int(alg.Limit())})
		}
		fmt.Printf("%v ms: limit %.2f\n", int64(rtt), limit)
	}
	// Output:
	// 10 ms: limit 10.80
	// 10 ms: limit 11.60
	// 20 ms: limit 12.40
	// 40 ms: limit 12.58
}

func TestAlgorithmMetrics(t *testing.T) {
	l, err := adaptive.New("g", adaptive.Config{Algorithm: adaptive.Gradient2, InitialLimit: 1, MinLimit: 1})
	require.NoError(t, err)
	assert.Equal(t, adaptive.AlgorithmMetrics{Algorithm: adaptive.Gradient2, Estimate: 1}, l.AlgorithmMetrics())
	p, err := l.Acquire(context.Background())
	require.NoError(t, err)
	p.OnDropped() // a window at Timeout, 5 s
	m := l.AlgorithmMetrics()
	assert.Equal(t, 5*time.Second, m.ShortRTT)
	assert.Equal(t, 5*time.Second, m.LongRTT)
	assert.InDelta(t, 0.8+(1+4)*0.2, m.Estimate, 1e-12)
	var nl *adaptive.Limiter
	assert.Zero(t, nl.AlgorithmMetrics())
	v, err := adaptive.New("v", adaptive.Config{})
	require.NoError(t, err)
	assert.Equal(t, adaptive.AlgorithmMetrics{Algorithm: adaptive.Vegas, Estimate: 20}, v.AlgorithmMetrics())
}
