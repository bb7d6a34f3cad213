package bench

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every stage emits each element's doubled value, once and in order, and ends when its input
// does.
func TestStreamCasesEmitTheSameValues(t *testing.T) {
	p, err := NewPipeline()
	require.NoError(t, err)
	for _, buffer := range StreamBuffers {
		cases := StreamCases(p.Levee, buffer)
		require.Equal(t, []string{"levee", "levee-pipeline", "chan", "rxgo"}, streamImpls(cases))
		const n = 2000
		for _, c := range cases {
			sum, count, err := c.Run(context.Background(), n)
			require.NoError(t, err, c.Impl)
			assert.Equal(t, n, count, c.Impl)
			assert.Equal(t, n*(n-1), sum, c.Impl)
		}
	}
}

// A stream stopped by its consumer's context ends without leaking a goroutine (goleak checks
// at the end of the package) and without emitting every element.
func TestStreamCasesStopWithTheirContext(t *testing.T) {
	p, err := NewPipeline()
	require.NoError(t, err)
	for _, c := range StreamCases(p.Levee, 16) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, count, _ := c.Run(ctx, 1_000_000)
		assert.Less(t, count, 1_000_000, c.Impl)
	}
}

// levee's rxgo adapter emits what rxgo's Map emits.
func TestOperatorCasesEmitTheSameValues(t *testing.T) {
	for _, buffer := range StreamBuffers {
		cases, err := OperatorCases(buffer)
		require.NoError(t, err)
		require.Equal(t, []string{"levee", "rxgo"}, streamImpls(cases))
		const n = 2000
		for _, c := range cases {
			sum, count, err := c.Run(context.Background(), n)
			require.NoError(t, err, c.Impl)
			assert.Equal(t, n, count, c.Impl)
			assert.Equal(t, n*(n-1), sum, c.Impl)
		}
	}
}

func streamImpls(cases []StreamCase) []string {
	names := make([]string, len(cases))
	for i, c := range cases {
		names[i] = c.Impl
	}
	return names
}

// Every window case delivers each element once, the ordered ones in order (checked by Run),
// on the fake clock.
func TestWindowCasesDeliverEveryElement(t *testing.T) {
	cases := WindowCases()
	impls := []string{}
	for _, c := range cases {
		impls = append(impls, c.Impl)
	}
	require.Equal(t, []string{"ordered-window-8", "ordered-window-64", "unordered", "pool"}, impls)
	for _, c := range cases {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			count, err := c.Run(t.Context(), 800, WindowCall)
			require.NoError(t, err, c.Impl)
			assert.Equal(t, 800, count, c.Impl)
			// 800 calls of 1 ms, 8 at a time, all as long: 100 ms on the fake clock, whatever the window.
			assert.Equal(t, 100*time.Millisecond, time.Since(start), c.Impl)
		})
	}
}

// Every output-buffer case emits each element's doubled value, once and in order.
func TestBufferCasesEmitTheSameValues(t *testing.T) {
	cases := BufferCases(0, 64)
	require.Equal(t, []string{"levee-default", "levee-buffer-0", "levee-buffer-64", "chan-buffer-64"}, streamImpls(cases))
	const n = 2000
	for _, c := range cases {
		sum, count, err := c.Run(context.Background(), n)
		require.NoError(t, err, c.Impl)
		assert.Equal(t, n, count, c.Impl)
		assert.Equal(t, n*(n-1), sum, c.Impl)
	}
}

// Every goal case, levee's and the hand-written peers, emits each element's doubled value
// once; the operators' goal cases too.
func TestGoalCasesEmitTheSameValues(t *testing.T) {
	p, err := NewPipeline()
	require.NoError(t, err)
	cases := GoalCases(p.Levee)
	require.Equal(t, []string{"levee", "levee-pipeline", "chan-buffer-64", "levee-unordered", "levee-pipeline-unordered",
		"pool", "levee-bykey", "levee-pipeline-bykey", "shards"}, streamImpls(cases))
	ops, err := OperatorGoalCases()
	require.NoError(t, err)
	require.Equal(t, []string{"levee", "rxgo", "levee-unordered", "rxgo-pool"}, streamImpls(ops))
	const n = 2000
	for _, c := range append(cases, ops...) {
		sum, count, err := c.Run(context.Background(), n)
		require.NoError(t, err, c.Impl)
		assert.Equal(t, n, count, c.Impl)
		assert.Equal(t, n*(n-1), sum, c.Impl)
	}
}
