package async

import (
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"time"
)

// Default values of WorkerPoolConfig.
const (
	// DefaultQueueCapacity is the queue's capacity when QueueCapacity is 0.
	DefaultQueueCapacity = 100
	// DefaultKeepAliveDuration is how long a worker above CoreThreadPoolSize waits idle before
	// it exits, when KeepAliveDuration is 0.
	DefaultKeepAliveDuration = 20 * time.Millisecond
)

// NoQueue, as QueueCapacity, gives the pool no queue: a task is handed to an idle worker or to
// a new one (up to MaxThreadPoolSize), or refused: a hand-off queue, Resilience4j's
// queueCapacity = 0, which needs a name of its own since 0 means the default. Its value is the
// smallest int (math.MinInt), which no typo or guess such as −1 reaches: every other negative
// QueueCapacity is refused. Always write the constant; Config returns it, so the result goes
// back to NewWorkerPool.
const NoQueue = math.MinInt

// NoKeepAlive, as KeepAliveDuration, makes a worker above CoreThreadPoolSize exit as soon as it
// finds no task waiting: keepAliveDuration = 0 in a ThreadPoolBulkheadConfig. Its value is the
// smallest time.Duration (math.MinInt64 nanoseconds), which no typo or guess such as −1
// reaches: every other negative KeepAliveDuration is refused. Always write the constant; Config
// returns it, so the result goes back to NewWorkerPool.
const NoKeepAlive time.Duration = math.MinInt64

// WorkerPoolConfig configures a WorkerPool, as Resilience4j's ThreadPoolBulkheadConfig. The
// zero value of each field means its default; DefaultWorkerPoolConfig returns them filled in.
// A worker is a goroutine; the fields keep the thread names so that a configuration ports one
// to one.
type WorkerPoolConfig struct {
	// CoreThreadPoolSize is the number of workers the pool keeps even when idle, in
	// [1, MaxThreadPoolSize]. 0 means the default, max(NumCPU-1, 1), lowered to
	// MaxThreadPoolSize when that is set and smaller.
	CoreThreadPoolSize int

	// MaxThreadPoolSize is the most workers the pool runs, at least 1 and at least
	// CoreThreadPoolSize. 0 means the default, NumCPU, raised to CoreThreadPoolSize when that
	// is larger, so that a configuration valid on one machine is valid on every machine.
	MaxThreadPoolSize int

	// QueueCapacity is how many tasks may wait for a worker, at least 0. 0 means the default,
	// 100; NoQueue means no queue at all.
	QueueCapacity int

	// KeepAliveDuration is how long a worker above CoreThreadPoolSize stays idle before it
	// exits, at least 0. 0 means the default, 20ms; NoKeepAlive makes it exit at once.
	KeepAliveDuration time.Duration

	// Logger, when set, receives the pool's refusals of a full pool as log/slog records at
	// Debug, as a bulkhead's (pattern "bulkhead", event CALL_REJECTED; see the package
	// comment's Logging section): NewWorkerPool subscribes one more event consumer that logs
	// them. Nil, the default, logs nothing and subscribes nothing.
	Logger *slog.Logger
}

// DefaultWorkerPoolConfig returns the configuration with every default filled in for this
// machine: max(NumCPU-1, 1) core workers, NumCPU at most, a queue of 100 and a keep-alive of
// 20ms.
func DefaultWorkerPoolConfig() WorkerPoolConfig { return WorkerPoolConfig{}.withDefaults() }

func (c WorkerPoolConfig) withDefaults() WorkerPoolConfig {
	cpus := runtime.NumCPU()
	if c.MaxThreadPoolSize == 0 {
		c.MaxThreadPoolSize = max(cpus, c.CoreThreadPoolSize)
	}
	if c.CoreThreadPoolSize == 0 {
		c.CoreThreadPoolSize = max(cpus-1, 1)
		if c.MaxThreadPoolSize > 0 {
			c.CoreThreadPoolSize = min(c.CoreThreadPoolSize, c.MaxThreadPoolSize)
		}
	}
	if c.QueueCapacity == 0 {
		c.QueueCapacity = DefaultQueueCapacity
	}
	if c.KeepAliveDuration == 0 {
		c.KeepAliveDuration = DefaultKeepAliveDuration
	}
	return c
}

func (c WorkerPoolConfig) validate() error {
	switch {
	case c.MaxThreadPoolSize < 1:
		return fmt.Errorf("async: MaxThreadPoolSize must be >= 1, got %d", c.MaxThreadPoolSize)
	case c.CoreThreadPoolSize < 1:
		return fmt.Errorf("async: CoreThreadPoolSize must be >= 1, got %d", c.CoreThreadPoolSize)
	case c.CoreThreadPoolSize > c.MaxThreadPoolSize:
		return fmt.Errorf("async: CoreThreadPoolSize must be <= MaxThreadPoolSize (%d), got %d",
			c.MaxThreadPoolSize, c.CoreThreadPoolSize)
	case c.QueueCapacity < 0 && c.QueueCapacity != NoQueue:
		return fmt.Errorf("async: QueueCapacity must be >= 0 or NoQueue, got %d", c.QueueCapacity)
	case c.KeepAliveDuration < 0 && c.KeepAliveDuration != NoKeepAlive:
		return fmt.Errorf("async: KeepAliveDuration must be >= 0 or NoKeepAlive, got %v", c.KeepAliveDuration)
	}
	return nil
}

// queueCap returns the number of tasks the queue holds.
func (c WorkerPoolConfig) queueCap() int { return max(c.QueueCapacity, 0) }

// keepAlive returns how long a surplus worker waits idle.
func (c WorkerPoolConfig) keepAlive() time.Duration { return max(c.KeepAliveDuration, 0) }
