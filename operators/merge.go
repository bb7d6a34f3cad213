package operators

import (
	"context"
	"sync"

	"github.com/levee-go/levee/internal/chans"
	"github.com/reactivex/rxgo/v2"
)

// Merge returns an Observable that, at each Observe, subscribes to every one of obs (several
// guarded sources, Guard's outputs) and emits their items, each source's in its order, the
// sources' interleaved as they come, error items included, and completes once every source
// has completed. When the consumer's context ends, every source is cancelled and Merge's
// output closes only once each has stopped (closed its channel): nothing is left running, as
// stream.Merge. A nil Observable among obs fails its subscription with ErrNilObservable, in
// its place among the items.
//
// rxgo's own Merge does not do this: after the observer's context is cancelled, its
// goroutine per source stays blocked on its send to the merged channel, and each source keeps
// running behind it, a leak for every subscription cancelled before the end.
func Merge(obs ...rxgo.Observable) rxgo.Observable {
	seen := make([]*observed, len(obs))
	for i := range seen {
		seen[i] = new(observed)
	}
	return deferred(func(ctx context.Context, next chan<- rxgo.Item) {
		var wg sync.WaitGroup
		done := ctx.Done()
		for i, o := range obs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				u, err := open(ctx, o, seen[i])
				if err != nil {
					fail(ctx, next, err)
					return
				}
				defer u.stop()
				for {
					it, ok := u.receive(done)
					if !ok || !chans.Send(next, it, done) {
						return
					}
				}
			}()
		}
		wg.Wait()
	})
}
