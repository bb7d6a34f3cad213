package keyed_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/levee-go/levee/keyed"
)

// lru is the reference model: a slice, most recently used first, with the time of each key's
// last Get, evicting idle keys then the least recently used beyond max, one at a time.
type lru struct {
	max     int
	idle    time.Duration
	now     time.Duration
	created int
	entries []lruEntry
	log     []string
}

type lruEntry struct {
	key  int
	val  string
	last time.Duration
}

func (m *lru) evictIdle() {
	for i := len(m.entries) - 1; i >= 0; i-- {
		if e := m.entries[i]; m.idle > 0 && m.now-e.last >= m.idle {
			m.log = append(m.log, fmt.Sprintf("%d=%s IDLE", e.key, e.val))
			m.entries = slices.Delete(m.entries, i, i+1)
		}
	}
}

func (m *lru) get(key int) string {
	m.evictIdle()
	for i, e := range m.entries {
		if e.key == key {
			m.entries = slices.Delete(m.entries, i, i+1)
			e.last = m.now
			m.entries = slices.Insert(m.entries, 0, e)
			return e.val
		}
	}
	m.created++
	e := lruEntry{key: key, val: fmt.Sprintf("%d#%d", key, m.created), last: m.now}
	m.entries = slices.Insert(m.entries, 0, e)
	for len(m.entries) > m.max {
		last := m.entries[len(m.entries)-1]
		m.log = append(m.log, fmt.Sprintf("%d=%s CAPACITY", last.key, last.val))
		m.entries = m.entries[:len(m.entries)-1]
	}
	return e.val
}

func (m *lru) remove(key int) bool {
	m.evictIdle()
	for i, e := range m.entries {
		if e.key == key {
			m.log = append(m.log, fmt.Sprintf("%d=%s REMOVED", e.key, e.val))
			m.entries = slices.Delete(m.entries, i, i+1)
			return true
		}
	}
	return false
}

func TestMatchesAReferenceLRU(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		rapid.SyncTest(rt, func(rt *rapid.T) {
			m := &lru{
				max:  rapid.IntRange(1, 5).Draw(rt, "max"),
				idle: time.Duration(rapid.IntRange(0, 4).Draw(rt, "idle")) * time.Second,
			}
			cfg := keyed.Config{MaxKeys: m.max, IdleTimeout: m.idle}
			if m.idle == 0 {
				cfg.IdleTimeout = keyed.NoIdleTimeout
			}
			created := 0
			k, err := keyed.New(cfg, func(key int) (string, error) {
				created++
				return fmt.Sprintf("%d#%d", key, created), nil
			})
			require.NoError(rt, err)
			var log []string
			k.Subscribe(func(e keyed.Eviction[int, string]) {
				log = append(log, fmt.Sprintf("%d=%s %v", e.Key, e.Value, e.Cause))
			})
			for range rapid.IntRange(1, 60).Draw(rt, "ops") {
				key := rapid.IntRange(0, 7).Draw(rt, "key")
				switch rapid.IntRange(0, 3).Draw(rt, "op") {
				case 0, 1:
					v, err := k.Get(key)
					require.NoError(rt, err)
					require.Equal(rt, m.get(key), v, "Get(%d)", key)
				case 2:
					d := time.Duration(rapid.IntRange(0, 3000).Draw(rt, "ms")) * time.Millisecond
					time.Sleep(d)   // the bubble's clock (rapid.SyncTest)
					synctest.Wait() // the idle timers that fired have run
					m.now += d
				case 3:
					require.Equal(rt, m.remove(key), k.Remove(key), "Remove(%d)", key)
				}
				require.Equal(rt, m.log, log)
			}
			m.evictIdle()
			var want, got []string
			for _, e := range m.entries {
				want = append(want, fmt.Sprintf("%d=%s", e.key, e.val))
			}
			for key, v := range k.All() {
				got = append(got, fmt.Sprintf("%d=%s", key, v))
			}
			require.Equal(rt, want, got, "keys, most recently used first")
			require.Equal(rt, m.log, log)
			require.Equal(rt, len(m.entries), k.Metrics().Keys)
		})
	})
}

// Many goroutines on many keys: the bound holds, every creation is either held or evicted,
// every eviction reaches the consumer once, and a key's value is always the key's.
func TestHammer(t *testing.T) {
	const goroutines, ops, keys, maxKeys = 16, 4000, 100, 32
	var creates, failures atomic.Int64
	k, err := keyed.New(keyed.Config{MaxKeys: maxKeys, IdleTimeout: keyed.NoIdleTimeout}, func(key int) (string, error) {
		if key%17 == 0 && creates.Load()%5 == 0 {
			failures.Add(1)
			return "", fmt.Errorf("no %d", key)
		}
		return fmt.Sprintf("%d#%d", key, creates.Add(1)), nil
	})
	require.NoError(t, err)
	var evicted sync.Map
	var evictions atomic.Int64
	k.Subscribe(func(e keyed.Eviction[int, string]) {
		evictions.Add(1)
		if _, dup := evicted.LoadOrStore(e.Value, e.Cause); dup {
			t.Errorf("%s evicted twice", e.Value)
		}
	})
	var gets atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range ops {
				key := r.IntN(keys)
				if r.IntN(20) == 0 {
					k.Remove(key)
					continue
				}
				gets.Add(1)
				v, err := k.Get(key)
				if err == nil && !strings.HasPrefix(v, fmt.Sprint(key, "#")) {
					t.Errorf("Get(%d) = %s", key, v)
				}
				if n := k.Metrics().Keys; n > maxKeys+goroutines {
					t.Errorf("%d keys held", n)
				}
			}
		})
	}
	wg.Wait()
	m := k.Metrics()
	t.Logf("%+v", m)
	assert.LessOrEqual(t, m.Keys, maxKeys, "no creation under way any more")
	assert.Equal(t, uint64(creates.Load()), m.Created)
	assert.Equal(t, uint64(failures.Load()), m.CreateErrors)
	assert.Equal(t, m.Created, uint64(m.Keys)+m.EvictedCapacity+m.Removed)
	assert.Equal(t, uint64(evictions.Load()), m.EvictedCapacity+m.Removed)
	assert.Equal(t, uint64(gets.Load()), m.Hits+m.Misses)
}
