package operators_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/operators"
)

// closeCases is the table both engines run (stream.Subscribe has the same one): a source that
// emits one element at once and then takes 1s to notice its cancellation. The output closes
// only once the source has returned, whichever way the subscription ended, as
// stream.Subscribe's does.
var closeCases = []struct {
	name     string
	limit    time.Duration // a TimeLimit(BoundStream) of this duration, 0 for none
	cancelAt time.Duration // the consumer's cancellation, 0 for none
	endsAt   time.Duration // when the source is cancelled
}{
	{"time limit", 100 * time.Millisecond, 0, 100 * time.Millisecond},
	{"consumer cancel", 0, 200 * time.Millisecond, 200 * time.Millisecond},
}

func TestGuardClosesOnceTheSourceReturned(t *testing.T) {
	for _, tc := range closeCases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var returned atomic.Int64
				src := func(context.Context) (rxgo.Observable, error) {
					return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
						defer func() { returned.Store(int64(time.Since(start))) }()
						next <- rxgo.Of(1)
						<-ctx.Done()
						time.Sleep(time.Second) // slow to notice
					}}), nil
				}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tc.cancelAt > 0 {
					time.AfterFunc(tc.cancelAt, cancel)
				}
				var ps levee.Patterns
				var opts []operators.Option
				if tc.limit > 0 {
					ps.TimeLimiter = newTimeLimiter(t, tc.limit)
					opts = append(opts, operators.TimeLimit(operators.BoundStream))
				}
				obs := mustGuard(t)(operators.Guard(ps, nil, src, opts...))
				for range obs.Observe(rxgo.WithContext(ctx)) {
				}
				assert.Equal(t, tc.endsAt+time.Second, time.Since(start), "closed when the source returned")
				assert.Equal(t, int64(tc.endsAt+time.Second), returned.Load())
			})
		})
	}
}
