package retry_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/retry"
)

var sink int

// TestExecuteSuccessPathAllocatesNothing also proves that Execute does not let call escape: the
// call is a closure over a local, which would be moved to the heap if Execute retained it.
func TestExecuteSuccessPathAllocatesNothing(t *testing.T) {
	r := newRetry(t, retry.DefaultConfig())
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() {
		n := 42
		v, err := retry.Execute(ctx, r, func(context.Context) (int, error) { return n, nil })
		if err != nil {
			panic(err)
		}
		sink += v
	})
	assert.Zero(t, allocs)
	assert.Equal(t, int64(1001), r.Metrics().NumberOfSuccessfulCallsWithoutRetryAttempt)
}

func TestPermitAPISuccessPathAllocatesNothing(t *testing.T) {
	r := newRetry(t, retry.DefaultConfig())
	allocs := testing.AllocsPerRun(1000, func() {
		c := r.NewContext()
		if _, again := c.OnResult(nil); again {
			panic("unexpected retry")
		}
		c.OnSuccess()
		if c.Err() != nil {
			panic(c.Err())
		}
	})
	assert.Zero(t, allocs)
}

func BenchmarkExecuteSuccess(b *testing.B) {
	r := newRetry(b, retry.DefaultConfig())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		v, _ := retry.Execute(ctx, r, func(context.Context) (int, error) { return 1, nil })
		sink += v
	}
}

func BenchmarkExecuteSuccessParallel(b *testing.B) {
	r := newRetry(b, retry.DefaultConfig())
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = retry.Execute(ctx, r, func(context.Context) (int, error) { return 1, nil })
		}
	})
}
