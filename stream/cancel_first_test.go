package stream_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/stream"
)

// The consumer cancels while the first calls run, before anything was sent, and keeps
// reading; the calls then return values (they ignore their context). A done context wins
// over a ready send: the output closes with no result.
func TestMapSendsNothingAfterTheConsumerCancelled(t *testing.T) {
	for _, concurrency := range []int{1, 4} {
		t.Run(fmt.Sprintf("concurrency %d", concurrency), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				in := make(chan int, 8)
				for i := range 8 {
					in <- i
				}
				close(in)
				proceed := make(chan struct{})
				fn := func(_ context.Context, v int) (int, error) {
					<-proceed
					return v, nil
				}
				ctx, cancel := context.WithCancel(t.Context())
				out, err := stream.Map(ctx, in, nil, fn, stream.Concurrency(concurrency))
				require.NoError(t, err)
				synctest.Wait() // every worker is in a call
				assert.Equal(t, 8-concurrency, len(in))
				cancel()
				close(proceed)
				got := []int{}
				for r := range out {
					got = append(got, r.Value)
				}
				assert.Equal(t, []int{}, got)
			})
		})
	}
}

// The same, as it happens in production: many runs, the calls returning as soon as they see
// the cancellation, racing the stage's own check. Not one result may come out.
func TestMapSendsNothingAfterCancelInManyRuns(t *testing.T) {
	for _, concurrency := range []int{1, 4} {
		delivered := 0
		for range 1000 {
			in := make(chan int, 8)
			for i := range 8 {
				in <- i
			}
			close(in)
			started := make(chan struct{}, 8)
			fn := func(ctx context.Context, v int) (int, error) {
				started <- struct{}{}
				<-ctx.Done()
				return v, nil // a call that ignores the cancellation and answers
			}
			ctx, cancel := context.WithCancel(context.Background())
			out, err := stream.Map(ctx, in, nil, fn, stream.Concurrency(concurrency))
			require.NoError(t, err)
			<-started
			cancel()
			for range out {
				delivered++
			}
		}
		assert.Equal(t, 0, delivered, "concurrency %d", concurrency)
	}
}
