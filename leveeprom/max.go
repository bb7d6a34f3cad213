package leveeprom

import (
	"sync"
	"sync/atomic"
	"time"
)

// The decaying maximum of Micrometer's timers, which resilience4j-micrometer's calls timer
// exposes as _seconds_max: the largest sample of the last two minutes or so, kept in three
// buckets rotated every 40 seconds.
const (
	maxBuckets = 3
	maxExpiry  = 2 * time.Minute
	maxRotate  = maxExpiry / maxBuckets
)

// decayingMax is Micrometer's TimeWindowMax. A sample goes into every bucket; a read gives the
// current bucket, the oldest, which has seen every sample of the last maxExpiry minus at most
// one rotation period; each rotation empties the current bucket and makes the next one
// current. Recording is lock-free; the rare rotation takes a mutex.
type decayingMax struct {
	epoch      time.Time    // instants are durations since epoch, read from the monotonic clock
	lastRotate atomic.Int64 // nanoseconds since epoch of the last rotation
	current    atomic.Int32 // index of the bucket read
	buckets    [maxBuckets]atomic.Int64
	mu         sync.Mutex // serializes rotations
}

func newDecayingMax(now time.Time) *decayingMax {
	return &decayingMax{epoch: now}
}

// record adds a sample of v taken at now.
func (m *decayingMax) record(now time.Time, v time.Duration) {
	m.rotate(now)
	for i := range m.buckets {
		b := &m.buckets[i]
		for {
			old := b.Load()
			if int64(v) <= old || b.CompareAndSwap(old, int64(v)) {
				break
			}
		}
	}
}

// poll returns the maximum at now.
func (m *decayingMax) poll(now time.Time) time.Duration {
	m.rotate(now)
	return time.Duration(m.buckets[m.current.Load()].Load())
}

func (m *decayingMax) rotate(now time.Time) {
	t := int64(now.Sub(m.epoch))
	if t-m.lastRotate.Load() < int64(maxRotate) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	last := m.lastRotate.Load()
	elapsed := t - last
	if elapsed < int64(maxRotate) {
		return // rotated meanwhile
	}
	if elapsed >= int64(maxExpiry) {
		for i := range m.buckets {
			m.buckets[i].Store(0)
		}
		m.current.Store(0)
		m.lastRotate.Store(t - elapsed%int64(maxRotate))
		return
	}
	cur := m.current.Load()
	for ; elapsed >= int64(maxRotate); elapsed -= int64(maxRotate) {
		m.buckets[cur].Store(0)
		cur = (cur + 1) % maxBuckets
		last += int64(maxRotate)
	}
	m.current.Store(cur)
	m.lastRotate.Store(last)
}
