package adaptive

import (
	"context"
	"fmt"
	"math"
	"time"
)

// KeyedConfig configures a PartitionedLimiter of NewKeyed: a partition per key (a tenant, a
// user), each an equal share of the limit among the keys with calls in flight.
type KeyedConfig struct {
	// Config configures the limit the keys share, as for New; MaxQueued and MaxWaitDuration
	// must be zero.
	Config
	// MaxKeys bounds the keys with calls in flight, in [1, 1<<20]: a key beyond it is refused
	// while the limit is full (it may still borrow idle capacity, so that KeyedMetrics.Keys
	// can exceed MaxKeys while fewer calls than the limit run). Memory is that of
	// max(MaxKeys, limit) keys at most, since a key is forgotten with its last call.
	// Default 1000.
	MaxKeys int
	// RejectionDelay, when > 0, makes a refused caller wait that long before its rejection,
	// as Partition.RejectionDelay. Default 0.
	RejectionDelay time.Duration
	// MaxDelayedCalls bounds the callers waiting out RejectionDelay at once, >= 0. Default 100.
	MaxDelayedCalls int
}

// DefaultMaxKeys is KeyedConfig.MaxKeys's default.
const DefaultMaxKeys = 1000

// NewKeyed returns a PartitionedLimiter whose partitions are keys that come and go, for
// tenants too many or too dynamic to list: each key with calls in flight is guaranteed an
// equal share max(1, ⌈limit / keys⌉) of the limit and may borrow idle capacity, under the
// rule of PartitionedLimiter, so that one noisy tenant cannot take more than its share while
// the others have calls waiting for theirs. A key's state exists only while it has calls in
// flight. Name the key with WithPartition or AcquirePartition. It returns an error naming the
// field for a bad cfg, as NewPartitioned.
func NewKeyed(name string, cfg KeyedConfig) (*PartitionedLimiter, error) {
	switch {
	case cfg.MaxKeys == 0:
		cfg.MaxKeys = DefaultMaxKeys
	case cfg.MaxKeys < 1 || cfg.MaxKeys > 1<<20:
		return nil, fmt.Errorf("adaptive: MaxKeys must be in [1, %d], got %d", 1<<20, cfg.MaxKeys)
	}
	if cfg.RejectionDelay < 0 {
		return nil, fmt.Errorf("adaptive: RejectionDelay must be >= 0, got %v", cfg.RejectionDelay)
	}
	l, err := NewPartitioned(name, PartitionedConfig{Config: cfg.Config, MaxDelayedCalls: cfg.MaxDelayedCalls})
	if err != nil {
		return nil, err
	}
	l.keyed, l.maxKeys = true, cfg.MaxKeys
	l.keys = make(map[string]int)
	l.parts = l.parts[:0]
	l.cfg.Partitions = nil
	l.delayKeyed = cfg.RejectionDelay
	return l, nil
}

// keyShareLocked is each key's share of the limit now.
func (l *PartitionedLimiter) keyShareLocked(keys int) int {
	return max(1, int(math.Ceil(float64(l.limit)/float64(max(1, keys)))))
}

func (l *PartitionedLimiter) acquireKey(ctx context.Context, key string) (Permit, error) {
	l.mu.Lock()
	if err := ctx.Err(); err != nil {
		l.keysRefused++
		l.mu.Unlock()
		return Permit{}, err
	}
	i, ok := l.keys[key]
	keys := len(l.keys)
	if !ok {
		keys++
		if keys > l.maxKeys && l.inFlight >= l.limit {
			l.keysRefused++
			return l.refuseLocked(ctx, l.delayKeyed, -1)
		}
	}
	inFlight := 0
	if ok {
		inFlight = l.parts[i].inFlight
	}
	if ok && l.inFlight >= l.limit && inFlight >= l.keyShareLocked(keys) {
		l.parts[i].rejected++
		l.keysRefusedShare++
		return l.refuseLocked(ctx, l.delayKeyed, -1)
	}
	if !ok {
		if n := len(l.free); n > 0 {
			i, l.free = l.free[n-1], l.free[:n-1]
			l.parts[i] = partitionState{Partition: Partition{Name: key}}
		} else {
			i = len(l.parts)
			l.parts = append(l.parts, partitionState{Partition: Partition{Name: key}})
		}
		l.keys[key] = i
	}
	p := &l.parts[i]
	l.inFlight++
	p.inFlight++
	p.permitted++
	permit := Permit{pl: l, part: i, started: time.Now(), round: l.round, inFlight: l.inFlight}
	l.mu.Unlock()
	return permit, nil
}

// forgetKeyLocked forgets the key of parts[i], whose last call ended.
func (l *PartitionedLimiter) forgetKeyLocked(i int) {
	delete(l.keys, l.parts[i].Name)
	l.parts[i] = partitionState{}
	l.free = append(l.free, i)
}

// KeyedMetrics is a snapshot of a limiter of NewKeyed.
type KeyedMetrics struct {
	// Limit is the total limit, InFlight the calls of all keys holding a permit.
	Limit, InFlight int
	// Keys is the number of keys with calls in flight, Share each one's share of the limit.
	Keys, Share int
	// KeysRefused counts the calls refused because MaxKeys keys were in flight (or their
	// context had ended); Refused those refused because their key used its share.
	KeysRefused, Refused uint64
}

// KeyedMetrics returns a snapshot of a limiter of NewKeyed (the zero value for another or a
// nil l). It allocates nothing.
func (l *PartitionedLimiter) KeyedMetrics() KeyedMetrics {
	if l.unset() || !l.keyed {
		return KeyedMetrics{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return KeyedMetrics{
		Limit: l.limit, InFlight: l.inFlight, Keys: len(l.keys),
		Share: l.keyShareLocked(len(l.keys)), KeysRefused: l.keysRefused, Refused: l.keysRefusedShare,
	}
}

// MaxKeys returns KeyedConfig.MaxKeys of a limiter of NewKeyed, the bound on
// KeyedMetrics.Keys while the limit is full (below it, keys beyond MaxKeys borrow idle
// capacity); 0 for one of NewPartitioned or a nil l.
func (l *PartitionedLimiter) MaxKeys() int {
	if l.unset() || !l.keyed {
		return 0
	}
	return l.maxKeys
}
