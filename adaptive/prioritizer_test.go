package adaptive_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/priority"
)

func TestPrioritizerConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		cfg  adaptive.PrioritizerConfig
		want string
	}{
		{adaptive.PrioritizerConfig{QueueStart: -1}, "adaptive: QueueStart must be in (0, 1e6] or NoQueueStart, got -1"},
		{adaptive.PrioritizerConfig{QueueFull: 0.5}, "adaptive: QueueFull must be in (QueueStart (1), 1e6], got 0.5"},
		{adaptive.PrioritizerConfig{CalibrationInterval: -time.Second}, "adaptive: CalibrationInterval must be > 0, got -1s"},
	} {
		p, err := adaptive.NewPrioritizer("x", tc.cfg)
		assert.Nil(t, p)
		assert.EqualError(t, err, tc.want)
	}
	p, err := adaptive.NewPrioritizer("service", adaptive.PrioritizerConfig{})
	require.NoError(t, err)
	assert.Equal(t, adaptive.PrioritizerConfig{QueueStart: 1, QueueFull: 2, CalibrationInterval: time.Second}, p.Config())
	assert.Equal(t, "service", p.Name())
}

// With a limit of 2 held, the queue decides: up to 1 × limit queued nothing is shed; at 1.5 ×
// the lower half of the levels below critical is (before the first calibration the levels are
// taken as spread evenly); at 2 × everything below critical; critical queues whatever the
// queue.
func TestPrioritizerShedsFromTheBottomUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(t, adaptive.Config{InitialLimit: 2, MinLimit: 2, MaxLimit: 2, MaxQueued: 10, MaxWaitDuration: time.Hour})
		p, err := adaptive.NewPrioritizer("service", adaptive.PrioritizerConfig{CalibrationInterval: time.Hour})
		require.NoError(t, err)
		p.Register(l, l, nil)
		at := func(level priority.Level) context.Context {
			return priority.WithLevel(context.Background(), level)
		}
		held := []adaptive.Permit{}
		for range 2 {
			pm, err := p.Acquire(at(0), l)
			require.NoError(t, err, "a free permit is taken whatever the level")
			held = append(held, pm)
		}
		queued := make(chan error, 10)
		queue := func(level priority.Level) {
			go func() {
				pm, err := p.Acquire(at(level), l)
				if err == nil {
					pm.OnIgnore()
				}
				queued <- err
			}()
			synctest.Wait()
		}
		queue(0) // 0 queued of 2: r = 0
		queue(0) // 1 × 2 queued: r = 0
		queue(0) // r = 0
		assert.Equal(t, 3, l.Metrics().Queued)
		_, err = p.Acquire(at(199), l) // 3 queued, 1.5 × the limit: r = 0.5, levels below 200 go
		assert.ErrorIs(t, err, adaptive.ErrShed)
		queue(200)
		assert.Equal(t, 4, l.Metrics().Queued)
		_, err = p.Acquire(at(399), l) // 2 × the limit: every level below critical
		var se *adaptive.ShedError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, priority.High, se.Priority)
		assert.Equal(t, "adaptive: Prioritizer 'service' shed a high call", err.Error())
		assert.ErrorIs(t, err, adaptive.ErrLimitExceeded)
		assert.True(t, levee.IsRejection(err))
		queue(400)
		queue(499)
		assert.Equal(t, 6, l.Metrics().Queued)
		m := p.Metrics()
		assert.Equal(t, int64(2), m.Priorities[priority.Critical].Queued)
		assert.Equal(t, uint64(1), m.Priorities[priority.Low].Shed)
		assert.Equal(t, uint64(1), m.Priorities[priority.High].Shed)
		for _, pm := range held {
			pm.OnIgnore()
		}
		for range 6 {
			assert.NoError(t, <-queued)
		}
		m = p.Metrics()
		assert.Equal(t, adaptive.PriorityMetrics{Priority: priority.Sheddable, Admitted: 5}, m.Priorities[priority.Sheddable])
		assert.Equal(t, adaptive.PriorityMetrics{Priority: priority.Critical, Admitted: 2}, m.Priorities[priority.Critical])
		assert.Equal(t, adaptive.PriorityMetrics{Priority: priority.Normal, Admitted: 1}, m.Priorities[priority.Normal])
	})
}

// After a calibration the prioritizer sheds by the levels it saw: with one call at level 100
// and the others at 250, a rate of 0.5 sheds every level whose share of calls at or below it
// is at most a half: everything below 250, where the share jumps to all.
func TestPrioritizerCalibratesOnTheLevelsSeen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(t, adaptive.Config{InitialLimit: 2, MinLimit: 2, MaxLimit: 2, MaxQueued: 10, MaxWaitDuration: time.Hour})
		p, err := adaptive.NewPrioritizer("service", adaptive.PrioritizerConfig{CalibrationInterval: time.Second})
		require.NoError(t, err)
		p.Register(l)
		at := func(level priority.Level) context.Context {
			return priority.WithLevel(context.Background(), level)
		}
		for i := range 10 {
			level := priority.Level(250)
			if i == 0 {
				level = 100
			}
			pm, err := p.Acquire(at(level), l)
			require.NoError(t, err)
			pm.OnIgnore()
		}
		time.Sleep(time.Second)
		held := []adaptive.Permit{}
		for range 2 {
			pm, err := p.Acquire(at(250), l) // the first calibrates on 11 calls
			require.NoError(t, err)
			held = append(held, pm)
		}
		done := make(chan error, 4)
		queue := func(level priority.Level) {
			go func() {
				pm, err := p.Acquire(at(level), l)
				if err == nil {
					pm.OnIgnore()
				}
				done <- err
			}()
			synctest.Wait()
		}
		for range 3 {
			queue(250)
		}
		assert.Zero(t, p.Metrics().RejectionRate, "calibrated with nothing queued")
		// 3 queued of 2: r = 0.5.
		_, err = p.Acquire(at(100), l)
		assert.ErrorIs(t, err, adaptive.ErrShed, "1 call in 11 at or below 100")
		_, err = p.Acquire(at(249), l)
		assert.ErrorIs(t, err, adaptive.ErrShed, "1 call in 11 at or below 249")
		queue(250)
		assert.Equal(t, 4, l.Metrics().Queued, "all calls at or below 250: kept")
		for _, pm := range held {
			pm.OnIgnore()
		}
		for range 4 {
			assert.NoError(t, <-done)
		}
		assert.Equal(t, uint64(2), p.Metrics().Priorities[priority.Low].Shed+p.Metrics().Priorities[priority.Normal].Shed)
	})
}

func TestPrioritizerNilAndAllocations(t *testing.T) {
	l := newLimiter(t, adaptive.Config{})
	var np *adaptive.Prioritizer
	pm, err := np.Acquire(context.Background(), l)
	require.NoError(t, err, "a nil prioritizer is the limiter alone")
	pm.OnIgnore()
	_, err = np.Acquire(context.Background(), nil)
	assert.Equal(t, adaptive.ErrNilLimiter, err)
	assert.Zero(t, np.Metrics())
	np.Register(l)
	assert.Equal(t, "", np.Name())
	assert.Nil(t, adaptive.PrioritizedDecorator[int](np, nil))

	p, err := adaptive.NewPrioritizer("service", adaptive.PrioritizerConfig{})
	require.NoError(t, err)
	_, err = adaptive.ExecutePrioritized[int](context.Background(), p, l, nil)
	assert.Equal(t, levee.ErrNilCall, err)
	ctx := priority.WithPriority(context.Background(), priority.High)
	ok := func(context.Context) (int, error) { return 1, nil }
	d := adaptive.PrioritizedDecorator[int](p, l)
	v, err := d(ctx, ok)
	assert.NoError(t, err)
	assert.Equal(t, 1, v)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = adaptive.ExecutePrioritized(ctx, p, l, ok) }))
	assert.Equal(t, uint64(102), p.Metrics().Priorities[priority.High].Admitted)
}

// The rejection threshold is the lowest level not shed at the calibrated rate: with every
// call seen at level 250 and 3 callers queued at a limit of 2 (rate 0.5), the levels below
// 250 are shed. With NoQueueStart shedding starts at an empty queue: the same queue of 1.5
// times the limit sheds 1.5 / 2 = 0.75.
func TestPrioritizerThreshold(t *testing.T) {
	t.Run("default", func(t *testing.T) { prioritizerThreshold(t, 0, 0.5) })
	t.Run("NoQueueStart", func(t *testing.T) { prioritizerThreshold(t, adaptive.NoQueueStart, 0.75) })
}

func prioritizerThreshold(t *testing.T, queueStart, rate float64) {
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(t, adaptive.Config{InitialLimit: 2, MinLimit: 2, MaxLimit: 2, MaxQueued: 10, MaxWaitDuration: time.Hour})
		p, err := adaptive.NewPrioritizer("service", adaptive.PrioritizerConfig{QueueStart: queueStart, CalibrationInterval: time.Second})
		require.NoError(t, err)
		if queueStart != 0 {
			assert.Equal(t, queueStart, p.Config().QueueStart, "Config returns NoQueueStart as given")
		}
		p.Register(l)
		ctx := priority.WithLevel(context.Background(), 250)
		assert.Equal(t, priority.Level(0), p.RejectionThreshold(), "nothing shed")
		var held []adaptive.Permit
		for range 2 {
			pm, err := p.Acquire(ctx, l)
			require.NoError(t, err)
			held = append(held, pm)
		}
		done := make(chan error, 3)
		for range 3 {
			go func() {
				pm, err := p.Acquire(ctx, l)
				if err == nil {
					pm.OnIgnore()
				}
				done <- err
			}()
		}
		synctest.Wait()
		time.Sleep(time.Second)
		_, err = p.Acquire(priority.WithLevel(context.Background(), 10), l) // calibrates, then is shed
		assert.ErrorIs(t, err, adaptive.ErrShed)
		m := p.Metrics()
		assert.Equal(t, rate, m.RejectionRate)
		assert.Equal(t, priority.Level(250), p.RejectionThreshold())
		for _, pm := range held {
			pm.OnIgnore()
		}
		for range 3 {
			assert.NoError(t, <-done)
		}
	})
}
