package stream

import (
	"context"
	"sync"

	"github.com/levee-go/levee/internal/chans"
	"github.com/levee-go/levee/internal/safe"
)

// Merge forwards the values of every channel of ins (several Subscribe or Map outputs) to one
// output channel, each channel's values in their order, the channels' interleaved as they
// come, and closes the output once every input has closed. When ctx ends, Merge stops reading
// and closes the output at once, after its goroutines (one per input) have returned: nothing
// of Merge is left running. The inputs are then no longer read, so give their operators the
// same ctx (or one derived from it): they end and close too. Nil channels in ins are skipped;
// with none left the output closes at once. A nil ctx means context.Background(), as for Map
// and Collect.
//
// Unlike rxgo's Merge, which keeps a goroutine per input blocked on its send after the
// observer's context was cancelled, Merge's goroutines all end with ctx.
func Merge[T any](ctx context.Context, ins ...<-chan T) <-chan T {
	out := make(chan T)
	var wg sync.WaitGroup
	done := safe.Ctx(ctx).Done()
	for _, in := range ins {
		if in == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				v, ok := chans.Receive(in, done)
				if !ok || !chans.Send(out, v, done) {
					return
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	return out
}
