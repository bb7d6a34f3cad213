package stream

import (
	"context"
	"fmt"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/internal/chans"
)

// Batch groups the elements of in into batches of up to size elements and makes one guarded
// call fn(ctx, batch) through the pipeline p per batch. A batch is cut when it holds size
// elements, when wait has passed since its first element arrived (if wait > 0), or when in is
// closed, whichever comes first; elements keep their input order within and across batches.
// Each batch yields one Result, whose In is the batch and whose Index counts batches from 0.
//
// The batch is a new slice, owned by the call and then by the Result. Options, guarantees and
// errors are Map's (WithFallback's function takes the batch as its element), plus an error
// for size < 1 or wait < 0. Batching takes one goroutine more than Map, which holds at most
// one batch being filled.
func Batch[V, R any](ctx context.Context, in <-chan V, size int, wait time.Duration, p *levee.Pipeline[R],
	fn func(context.Context, []V) (R, error), opts ...Option) (<-chan Result[[]V, R], error) {
	if size < 1 {
		return nil, fmt.Errorf("stream: Batch size must be >= 1, got %d", size)
	}
	if wait < 0 {
		return nil, fmt.Errorf("stream: Batch wait must be >= 0 (0: no time limit), got %v", wait)
	}
	if in == nil {
		return nil, ErrNilInput
	}
	batches := make(chan []V)
	s, err := newStage("Batch", batches, p, fn, expandOne[[]V, R], opts)
	if err != nil {
		return nil, err
	}
	s.feed = func() { cut(s.ctx, in, batches, size, wait) }
	return s.start(ctx), nil
}

// cut reads in and sends its elements to out in batches; it closes out once in is closed and
// the last batch is sent, and returns without closing it when ctx is done.
func cut[V any](ctx context.Context, in <-chan V, out chan<- []V, size int, wait time.Duration) {
	done := ctx.Done()
	var (
		buf   []V
		timer *time.Timer
		due   <-chan time.Time // the timer's channel while a batch is being filled, else nil
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case v, ok := <-in:
			if !ok {
				if len(buf) > 0 && !chans.Send(out, buf, done) {
					return
				}
				close(out)
				return
			}
			buf = append(buf, v)
			if len(buf) < size {
				if len(buf) == 1 && wait > 0 {
					if timer == nil {
						timer = time.NewTimer(wait)
					} else {
						timer.Reset(wait)
					}
					due = timer.C
				}
				continue
			}
			if timer != nil {
				timer.Stop()
			}
		case <-due:
		case <-done:
			return
		}
		due = nil
		if !chans.Send(out, buf, done) {
			return
		}
		buf = nil
	}
}
