package keyed_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/keyed"
)

// A bulkhead with calls in flight or callers waiting protects its key: a new bulkhead for
// the key would admit more calls beside them. Once its calls end, the key may go.
func TestBusyBulkheadIsNotEvicted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bulkheads := map[string]*bulkhead.Bulkhead{}
		p, err := keyed.NewPipelines(keyed.Config{MaxKeys: 1, IdleTimeout: time.Minute}, func(host string) (levee.Patterns, error) {
			bh, err := bulkhead.New(host, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Hour})
			bulkheads[host] = bh
			return levee.Patterns{Bulkhead: bh}, err
		}, func(_ string, ps levee.Patterns) (*bulkhead.Bulkhead, error) { return ps.Bulkhead, nil })
		require.NoError(t, err)
		a, err := p.Get("a")
		require.NoError(t, err)
		require.NoError(t, a.Acquire(context.Background()))
		time.Sleep(2 * time.Minute) // idle, but a call is in flight
		_, err = p.Get("b")
		assert.ErrorIs(t, err, keyed.ErrAllKeysProtected, "a call is in flight")

		waited := make(chan error)
		go func() {
			err := a.Acquire(context.Background())
			if err == nil {
				a.Release()
			}
			waited <- err
		}()
		synctest.Wait()
		assert.Equal(t, bulkhead.Metrics{MaxAllowedConcurrentCalls: 1, NumberOfWaitingCalls: 1}, a.Metrics())
		_, err = p.Get("b")
		assert.ErrorIs(t, err, keyed.ErrAllKeysProtected, "a call is in flight and one waits")
		again, err := p.Get("a")
		require.NoError(t, err)
		assert.Same(t, a, again)

		a.Release() // the waiter runs and completes
		require.NoError(t, <-waited)
		assert.Equal(t, bulkhead.Metrics{AvailableConcurrentCalls: 1, MaxAllowedConcurrentCalls: 1}, a.Metrics())
		b, err := p.Get("b")
		require.NoError(t, err)
		assert.Same(t, bulkheads["b"], b)
		assert.Equal(t, keyed.Metrics{Keys: 1, Hits: 1, Misses: 2, Created: 2, EvictedCapacity: 1, RefusedProtected: 2}, p.Metrics())
	})
}

// A plain Keyed of bulkheads keeps a busy one as well.
func TestKeyedKeepsBusyBulkhead(t *testing.T) {
	k, err := keyed.New(keyed.Config{MaxKeys: 1}, func(host string) (*bulkhead.Bulkhead, error) {
		return bulkhead.New(host, bulkhead.Config{MaxConcurrentCalls: 2})
	})
	require.NoError(t, err)
	a, err := k.Get("a")
	require.NoError(t, err)
	require.NoError(t, a.Acquire(context.Background()))
	_, err = k.Get("b")
	assert.ErrorIs(t, err, keyed.ErrAllKeysProtected)
	a.Release()
	_, err = k.Get("b")
	require.NoError(t, err)
	assert.Equal(t, keyed.Metrics{Keys: 1, Misses: 2, Created: 2, EvictedCapacity: 1, RefusedProtected: 1}, k.Metrics())
}
