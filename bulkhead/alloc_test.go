package bulkhead_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
)

// The success path allocates nothing without subscribers. The call is a closure over a local
// variable: if Execute let it escape, the closure would be moved to the heap and counted here.
func TestExecuteSuccessPathDoesNotAllocate(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 4})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	allocs := testing.AllocsPerRun(1000, func() {
		v, err := bulkhead.Execute(ctx, b, func(context.Context) (int, error) {
			n++
			return n, nil
		})
		if err != nil || v != n {
			t.Fatal("unexpected result")
		}
	})
	assert.Zero(t, allocs)
	assert.Equal(t, 1001, n)
}

func TestPermitAPIDoesNotAllocate(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() {
		if b.Acquire(ctx) != nil || !func() bool { b.Release(); return b.TryAcquire() }() {
			t.Fatal("unexpected rejection")
		}
		if b.Acquire(ctx) == nil { // full: the rejection allocates nothing either
			t.Fatal("unexpected permit")
		}
		b.ReleasePermission()
		_ = b.Metrics()
	})
	assert.Zero(t, allocs)
}

// A rejection returns the bulkhead's one *BulkheadFullError: it allocates nothing, names the
// bulkhead and matches the sentinel, through Acquire and Execute alike.
func TestRejectionDoesNotAllocate(t *testing.T) {
	b, err := bulkhead.New("payments", bulkhead.Config{MaxConcurrentCalls: bulkhead.NoConcurrentCalls})
	require.NoError(t, err)
	ctx := context.Background()
	var last error
	for name, f := range map[string]func(){
		"Acquire": func() { last = b.Acquire(ctx) },
		"Execute": func() {
			_, last = bulkhead.Execute(ctx, b, func(context.Context) (int, error) { return 1, nil })
		},
	} {
		assert.Zero(t, testing.AllocsPerRun(100, f), name)
		assert.EqualError(t, last, "bulkhead: Bulkhead 'payments' is full and does not permit further calls", name)
		assert.ErrorIs(t, last, bulkhead.ErrBulkheadFull, name)
		var full *bulkhead.BulkheadFullError
		if assert.ErrorAs(t, last, &full, name) {
			assert.Equal(t, "payments", full.Name, name)
		}
	}
}
