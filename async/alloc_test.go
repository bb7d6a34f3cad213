package async_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/async"
)

// A future cannot be free: it needs a goroutine, a context of its own and somewhere to keep its
// result. These bounds are what the package costs today, with a breaker and a bulkhead in the
// pipeline (whose success paths allocate nothing), so that a change that costs more is seen.
func TestAllocationsPerFuture(t *testing.T) {
	ctx := context.Background()
	p := levee.Compose[int]().WithBulkhead(newBulkhead(t, 64)).WithCircuitBreaker(bigBreaker(t))
	call := value(1)
	calls := make([]levee.Call[int], 11)
	for i := range calls {
		calls[i] = call
	}
	pool := newPool(t, async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 1})

	goGet := testing.AllocsPerRun(500, func() { _, _ = async.Go(ctx, p, call).Get(ctx) })
	submitGet := testing.AllocsPerRun(500, func() {
		f, _ := async.Submit(ctx, pool, p, call)
		_, _ = f.Get(ctx)
	})
	all1 := testing.AllocsPerRun(200, func() { _, _ = async.All(ctx, p, calls[:1]) })
	all11 := testing.AllocsPerRun(200, func() { _, _ = async.All(ctx, p, calls) })
	t.Logf("Go+Get %v, Submit+Get %v, All of 1 %v, All of 11 %v", goGet, submitGet, all1, all11)

	// The future, its channel, its context, the guarded call and the goroutine's closure.
	assert.LessOrEqual(t, goGet, 6.0)
	// The same plus the pool's task record.
	assert.LessOrEqual(t, submitGet, 7.0)
	// Each further call of a fan-out: its goroutine's closure and its guarded call's.
	assert.LessOrEqual(t, (all11-all1)/10, 2.0)
}
