package async_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/async"
)

func TestDefaultWorkerPoolConfigIsResilience4js(t *testing.T) {
	cpus := runtime.NumCPU()
	want := async.WorkerPoolConfig{
		CoreThreadPoolSize: max(cpus-1, 1),
		MaxThreadPoolSize:  cpus,
		QueueCapacity:      100,
		KeepAliveDuration:  20 * time.Millisecond,
	}
	assert.Equal(t, want, async.DefaultWorkerPoolConfig())
	pool, err := async.NewWorkerPool("defaults", async.WorkerPoolConfig{})
	require.NoError(t, err)
	defer pool.Close()
	assert.Equal(t, want, pool.Config())
	assert.Equal(t, "defaults", pool.Name())
	assert.Equal(t, async.WorkerPoolMetrics{
		CoreThreadPoolSize: want.CoreThreadPoolSize, MaximumThreadPoolSize: cpus,
		AvailableThreadCount: cpus, QueueCapacity: 100, RemainingQueueCapacity: 100,
	}, pool.Metrics())
}

// The defaults of the two sizes adapt to each other, so that a configuration valid on one
// machine is valid on every machine.
func TestWorkerPoolSizeDefaultsAdaptToEachOther(t *testing.T) {
	cpus := runtime.NumCPU()
	for _, tc := range []struct {
		name      string
		cfg       async.WorkerPoolConfig
		core, max int
	}{
		{"core above the CPU count raises the maximum", async.WorkerPoolConfig{CoreThreadPoolSize: cpus + 7}, cpus + 7, cpus + 7},
		{"core below the CPU count keeps NumCPU", async.WorkerPoolConfig{CoreThreadPoolSize: 1}, 1, max(cpus, 1)},
		{"a maximum of 1 lowers the core size", async.WorkerPoolConfig{MaxThreadPoolSize: 1}, 1, 1},
		{"a large maximum keeps the core default", async.WorkerPoolConfig{MaxThreadPoolSize: 1000}, max(cpus-1, 1), 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool, err := async.NewWorkerPool("p", tc.cfg)
			require.NoError(t, err)
			defer pool.Close()
			c := pool.Config()
			assert.Equal(t, tc.core, c.CoreThreadPoolSize)
			assert.Equal(t, tc.max, c.MaxThreadPoolSize)
		})
	}
}

func TestWorkerPoolExplicitZeros(t *testing.T) {
	pool, err := async.NewWorkerPool("p", async.WorkerPoolConfig{
		CoreThreadPoolSize: 1, MaxThreadPoolSize: 2, QueueCapacity: async.NoQueue, KeepAliveDuration: async.NoKeepAlive,
	})
	require.NoError(t, err)
	defer pool.Close()
	assert.Equal(t, async.WorkerPoolConfig{
		CoreThreadPoolSize: 1, MaxThreadPoolSize: 2, QueueCapacity: async.NoQueue, KeepAliveDuration: async.NoKeepAlive,
	}, pool.Config(), "Config round-trips through NewWorkerPool")
	m := pool.Metrics()
	assert.Equal(t, 0, m.QueueCapacity)
	assert.Equal(t, 0, m.RemainingQueueCapacity)
}

// Resilience4j's validation: core >= 1, max >= 1, max >= core, queue >= 0, keep-alive >= 0;
// one row per field out of range.
func TestInvalidWorkerPoolConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  async.WorkerPoolConfig
		want string
	}{
		{"negative core", async.WorkerPoolConfig{CoreThreadPoolSize: -1, MaxThreadPoolSize: 2},
			"async: CoreThreadPoolSize must be >= 1, got -1"},
		{"negative max", async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: -2},
			"async: MaxThreadPoolSize must be >= 1, got -2"},
		{"core above max", async.WorkerPoolConfig{CoreThreadPoolSize: 5, MaxThreadPoolSize: 4},
			"async: CoreThreadPoolSize must be <= MaxThreadPoolSize (4), got 5"},
		{"negative queue", async.WorkerPoolConfig{QueueCapacity: -2},
			"async: QueueCapacity must be >= 0 or NoQueue, got -2"},
		{"negative keep-alive", async.WorkerPoolConfig{KeepAliveDuration: -time.Second},
			"async: KeepAliveDuration must be >= 0 or NoKeepAlive, got -1s"},
		{"queue -1 is not NoQueue", async.WorkerPoolConfig{QueueCapacity: -1},
			"async: QueueCapacity must be >= 0 or NoQueue, got -1"},
		{"keep-alive -1 is not NoKeepAlive", async.WorkerPoolConfig{KeepAliveDuration: -1},
			"async: KeepAliveDuration must be >= 0 or NoKeepAlive, got -1ns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool, err := async.NewWorkerPool("p", tc.cfg)
			assert.Nil(t, pool)
			assert.EqualError(t, err, tc.want)
		})
	}
}
