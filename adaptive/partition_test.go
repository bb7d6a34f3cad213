package adaptive_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/levee-go/levee/adaptive"
)

func fixed(limit int) adaptive.Config {
	return adaptive.Config{InitialLimit: limit, MinLimit: limit, MaxLimit: limit}
}

func newPartitioned(t testing.TB, cfg adaptive.PartitionedConfig) *adaptive.PartitionedLimiter {
	t.Helper()
	l, err := adaptive.NewPartitioned("dependency", cfg)
	require.NoError(t, err)
	return l
}

var (
	live  = adaptive.WithPartition(context.Background(), "live")
	batch = adaptive.WithPartition(context.Background(), "batch")
)

func TestPartitionedConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		cfg  adaptive.PartitionedConfig
		want string
	}{
		{adaptive.PartitionedConfig{Partitions: []adaptive.Partition{{Name: "a", Share: 0.5}, {Name: "b", Share: 1.5}}},
			"adaptive: Partitions[1].Share must be in (0, 1], got 1.5"},
		{adaptive.PartitionedConfig{Partitions: []adaptive.Partition{{Name: "a", Share: 0}}},
			"adaptive: Partitions[0].Share must be in (0, 1], got 0"},
		{adaptive.PartitionedConfig{Partitions: []adaptive.Partition{{Name: "a", Share: 0.7}, {Name: "b", Share: 0.5}}},
			"adaptive: Partitions' shares must sum to at most 1, got 1.2"},
		{adaptive.PartitionedConfig{Partitions: []adaptive.Partition{{Name: "", Share: 0.5}}},
			"adaptive: Partitions[0].Name must not be empty"},
		{adaptive.PartitionedConfig{Partitions: []adaptive.Partition{{Name: "a", Share: 0.5}, {Name: "a", Share: 0.5}}},
			`adaptive: Partitions[1].Name "a" is used twice`},
		{adaptive.PartitionedConfig{Partitions: []adaptive.Partition{{Name: "a", Share: 0.5, RejectionDelay: -time.Millisecond}}},
			"adaptive: Partitions[0].RejectionDelay must be >= 0, got -1ms"},
		{adaptive.PartitionedConfig{MaxDelayedCalls: -1}, "adaptive: MaxDelayedCalls must be >= 0, got -1"},
		{adaptive.PartitionedConfig{Config: adaptive.Config{MaxQueued: 3}}, "adaptive: MaxQueued must be 0 for a PartitionedLimiter, got 3"},
		{adaptive.PartitionedConfig{Config: adaptive.Config{MinLimit: -2}}, "adaptive: MinLimit must be in [1, MaxLimit (1000)], got -2"},
	} {
		l, err := adaptive.NewPartitioned("x", tc.cfg)
		assert.Nil(t, l)
		assert.EqualError(t, err, tc.want)
	}
	l := newPartitioned(t, adaptive.PartitionedConfig{Partitions: []adaptive.Partition{
		{Name: "a", Share: 0.7}, {Name: "b", Share: 0.2}, {Name: "c", Share: 0.1},
	}})
	assert.Equal(t, 100, l.Config().MaxDelayedCalls)
	m := l.Metrics()
	assert.Equal(t, []int{14, 4, 2, 1}, []int{m.Partitions[0].Limit, m.Partitions[1].Limit, m.Partitions[2].Limit, m.Partitions[3].Limit},
		"20 × 0.7, 0.2, 0.1, and the implicit partition's 1 for the float remainder")
}

// Netflix's example: live 90 %, batch 10 % of 10. Batch borrows the idle capacity; live, when
// it comes back, gets its 9 at once, past the limit; batch gets nothing more until the total
// falls below the limit again.
func TestPartitionsBorrowAndGiveBack(t *testing.T) {
	l := newPartitioned(t, adaptive.PartitionedConfig{
		Config:     fixed(10),
		Partitions: []adaptive.Partition{{Name: "live", Share: 0.9}, {Name: "batch", Share: 0.1}},
	})
	var batchPermits []adaptive.Permit
	for range 10 {
		p, err := l.Acquire(batch)
		require.NoError(t, err)
		batchPermits = append(batchPermits, p)
	}
	_, err := l.Acquire(batch)
	assert.ErrorIs(t, err, adaptive.ErrLimitExceeded, "the limit is full and batch is past its share")
	var livePermits []adaptive.Permit
	for range 9 {
		p, err := l.Acquire(live)
		require.NoError(t, err, "live is below its share")
		livePermits = append(livePermits, p)
	}
	_, err = l.Acquire(live)
	assert.ErrorIs(t, err, adaptive.ErrLimitExceeded, "live at its share, the limit full")
	assert.Equal(t, 19, l.Metrics().InFlight)
	for _, p := range batchPermits[:9] {
		p.OnIgnore()
	}
	_, err = l.Acquire(batch)
	assert.ErrorIs(t, err, adaptive.ErrLimitExceeded, "10 in flight: batch is at its share")
	batchPermits[9].OnIgnore()
	p, err := l.Acquire(batch)
	require.NoError(t, err, "batch's own share")
	p.OnIgnore()
	livePermits[0].OnIgnore()
	p, err = l.Acquire(adaptive.WithPartition(context.Background(), "nobody"))
	require.NoError(t, err, "8 in flight: the implicit partition borrows idle capacity")
	q, err := l.Acquire(context.Background())
	require.NoError(t, err, "9 in flight")
	_, err = l.Acquire(context.Background())
	assert.ErrorIs(t, err, adaptive.ErrLimitExceeded, "the implicit partition has no share")
	p.OnIgnore()
	q.OnIgnore()
	for _, p := range livePermits[1:] {
		p.OnIgnore()
	}
	m := l.Metrics()
	assert.Equal(t, adaptive.PartitionedMetrics{Limit: 10, Partitions: []adaptive.PartitionMetrics{
		{Name: "live", Share: 0.9, Limit: 9, Permitted: 9, Rejected: 1},
		{Name: "batch", Share: 0.1, Limit: 1, Permitted: 11, Rejected: 2},
		{Name: "", Share: 0, Limit: 0, Permitted: 2, Rejected: 1},
	}}, m)
}

// The shares follow the adaptive limit: a drop takes AIMD's 10 to 9, live's share to ⌈8.1⌉.
func TestPartitionSharesFollowTheLimit(t *testing.T) {
	l := newPartitioned(t, adaptive.PartitionedConfig{
		Config:     adaptive.Config{Algorithm: adaptive.AIMD, InitialLimit: 10},
		Partitions: []adaptive.Partition{{Name: "live", Share: 0.9}, {Name: "batch", Share: 0.1}},
	})
	p, err := l.Acquire(live)
	require.NoError(t, err)
	p.OnDropped()
	m := l.Metrics()
	assert.Equal(t, 9, m.Limit)
	assert.Equal(t, 9, m.Partitions[0].Limit)
	assert.Equal(t, 1, m.Partitions[1].Limit)
}

// A refused caller of a partition with a RejectionDelay waits it out, or until its context
// ends, before it gets the rejection; beyond MaxDelayedCalls it is refused at once.
func TestPartitionRejectionDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newPartitioned(t, adaptive.PartitionedConfig{
			Config:          fixed(1),
			Partitions:      []adaptive.Partition{{Name: "batch", Share: 1, RejectionDelay: 50 * time.Millisecond}},
			MaxDelayedCalls: 1,
		})
		held, err := l.Acquire(batch)
		require.NoError(t, err)
		start := time.Now()
		done := make(chan error)
		go func() {
			_, err := l.Acquire(batch)
			done <- err
		}()
		synctest.Wait()
		m := l.Metrics()
		assert.Equal(t, 1, m.Delayed)
		assert.Equal(t, 1, m.Partitions[0].Delayed, "batch's refused caller waits out its delay")
		assert.Equal(t, 0, m.Partitions[1].Delayed)
		_, err = l.Acquire(batch)
		assert.ErrorIs(t, err, adaptive.ErrLimitExceeded)
		assert.Zero(t, time.Since(start), "the second delayed caller is one too many")
		assert.ErrorIs(t, <-done, adaptive.ErrLimitExceeded)
		assert.Equal(t, 50*time.Millisecond, time.Since(start))
		assert.Zero(t, l.Metrics().Partitions[0].Delayed, "the delay is over")
		ctx, cancel := context.WithTimeout(batch, 10*time.Millisecond)
		defer cancel()
		start = time.Now()
		_, err = l.Acquire(ctx)
		assert.ErrorIs(t, err, adaptive.ErrLimitExceeded)
		assert.Equal(t, 10*time.Millisecond, time.Since(start))
		_, err = l.Acquire(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		held.OnSuccess()
	})
}

func TestExecutePartitioned(t *testing.T) {
	l := newPartitioned(t, adaptive.PartitionedConfig{Config: fixed(1), Partitions: []adaptive.Partition{{Name: "live", Share: 1}}})
	v, err := adaptive.ExecutePartitioned(live, l, func(ctx context.Context) (string, error) {
		assert.Equal(t, "live", adaptive.PartitionFrom(ctx))
		_, err := adaptive.ExecutePartitioned(ctx, l, func(context.Context) (string, error) { return "", nil })
		assert.ErrorIs(t, err, adaptive.ErrLimitExceeded)
		return "ok", nil
	})
	assert.NoError(t, err)
	assert.Equal(t, "ok", v)
	_, err = adaptive.ExecutePartitioned(live, l, func(context.Context) (int, error) { panic("boom") })
	assert.Error(t, err)
	assert.Zero(t, l.Metrics().InFlight)
	var nl *adaptive.PartitionedLimiter
	_, err = adaptive.ExecutePartitioned(live, nl, func(context.Context) (int, error) { return 0, nil })
	assert.Equal(t, adaptive.ErrNilLimiter, err)
	assert.Nil(t, adaptive.PartitionedDecorator[int](nl))
	_, err = adaptive.ExecutePartitioned[int](live, l, nil)
	assert.Error(t, err)
	d := adaptive.PartitionedDecorator[int](l)
	n, err := d(live, func(context.Context) (int, error) { return 7, nil })
	assert.Equal(t, 7, n)
	assert.NoError(t, err)
	assert.Equal(t, "", adaptive.PartitionFrom(context.Background()))
	ok := func(context.Context) (int, error) { return 1, nil }
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = adaptive.ExecutePartitioned(live, l, ok) }))
	p, _ := l.Acquire(live)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = adaptive.ExecutePartitioned(live, l, ok) }), "refused")
	p.OnIgnore()
	assert.Equal(t, uint64(102), l.Metrics().Partitions[0].Rejected, "the nested call and the 101 refused runs (one warms AllocsPerRun up)")
}

// The property of fair shares, over random sequences of acquisitions and ends across three
// partitions of a fixed limit: a partition below its share is never refused, a partition at
// or past its share is admitted only while the whole limit has room (so, while any other
// partition is refused, none grows past its share), and the counts match a model.
func TestPartitionFairShareProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		limit := rapid.IntRange(1, 30).Draw(t, "limit")
		shares := []float64{0.5, 0.3, 0.2}
		names := []string{"a", "b", "c"}
		l, err := adaptive.NewPartitioned("dependency", adaptive.PartitionedConfig{Config: fixed(limit), Partitions: []adaptive.Partition{
			{Name: "a", Share: 0.5}, {Name: "b", Share: 0.3}, {Name: "c", Share: 0.2},
		}})
		if err != nil {
			t.Fatal(err)
		}
		held := [3][]adaptive.Permit{}
		total := 0
		ctxs := make([]context.Context, 3)
		for i, n := range names {
			ctxs[i] = adaptive.WithPartition(context.Background(), n)
		}
		shareOf := func(i int) int {
			s := int(float64(limit)*shares[i] + 0.999999999)
			return max(1, s)
		}
		for range rapid.IntRange(1, 200).Draw(t, "steps") {
			i := rapid.IntRange(0, 2).Draw(t, "partition")
			if rapid.Bool().Draw(t, "acquire") {
				p, err := l.Acquire(ctxs[i])
				below := len(held[i]) < shareOf(i)
				room := total < limit
				if below || room {
					if err != nil {
						t.Fatalf("partition %s refused with %d of its %d in flight and %d of %d in all", names[i], len(held[i]), shareOf(i), total, limit)
					}
					held[i] = append(held[i], p)
					total++
				} else if err == nil {
					t.Fatalf("partition %s admitted past its share %d with the limit %d full", names[i], shareOf(i), limit)
				}
			} else if len(held[i]) > 0 {
				k := rapid.IntRange(0, len(held[i])-1).Draw(t, "which")
				held[i][k].OnIgnore()
				held[i] = append(held[i][:k], held[i][k+1:]...)
				total--
			}
			m := l.Metrics()
			if m.InFlight != total {
				t.Fatalf("in flight %d, model %d", m.InFlight, total)
			}
			for j := range 3 {
				if m.Partitions[j].InFlight != len(held[j]) || m.Partitions[j].Limit != shareOf(j) {
					t.Fatalf("partition %s: %+v, model %d in flight of %d", names[j], m.Partitions[j], len(held[j]), shareOf(j))
				}
			}
		}
	})
}
