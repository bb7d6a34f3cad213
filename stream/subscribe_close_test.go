package stream_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/stream"
	"github.com/levee-go/levee/timelimiter"
)

// closeCases is the table both engines run (operators.Guard has the same one): a source that
// emits one element at once and then takes 1s to notice its cancellation. The output closes
// only once the source has returned, whichever way the subscription ended.
var closeCases = []struct {
	name     string
	limit    time.Duration // a TimeLimit(BoundStream) of this duration, 0 for none
	cancelAt time.Duration // the consumer's cancellation, 0 for none
	endsAt   time.Duration // when the source is cancelled
}{
	{"time limit", 100 * time.Millisecond, 0, 100 * time.Millisecond},
	{"consumer cancel", 0, 200 * time.Millisecond, 200 * time.Millisecond},
}

func TestSubscribeClosesOnceTheSourceReturned(t *testing.T) {
	for _, tc := range closeCases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var returned atomic.Int64
				src := func(ctx context.Context, emit func(int) error) error {
					defer func() { returned.Store(int64(time.Since(start))) }()
					if err := emit(1); err != nil {
						return err
					}
					<-ctx.Done()
					time.Sleep(time.Second) // slow to notice
					return ctx.Err()
				}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tc.cancelAt > 0 {
					time.AfterFunc(tc.cancelAt, cancel)
				}
				var ps levee.Patterns
				var opts []stream.Option
				if tc.limit > 0 {
					tl, err := timelimiter.New("tl", timelimiter.Config{TimeoutDuration: tc.limit})
					require.NoError(t, err)
					ps.TimeLimiter = tl
					opts = append(opts, stream.TimeLimit(stream.BoundStream))
				}
				out, err := stream.Subscribe(ctx, ps, stream.Source[int](src), opts...)
				require.NoError(t, err)
				for range out {
				}
				assert.Equal(t, tc.endsAt+time.Second, time.Since(start), "closed when the source returned")
				assert.Equal(t, int64(tc.endsAt+time.Second), returned.Load())
			})
		})
	}
}
