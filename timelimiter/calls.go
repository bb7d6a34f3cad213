package timelimiter

import (
	"context"

	"github.com/levee-go/levee/internal/safe"
	"github.com/levee-go/levee/internal/tracker"
)

// Calls counts the calls that time limiters run under one context, so that their caller can
// wait, before closing what they use, until those the limiters gave up on have returned too.
// Make it with TrackCalls. It is safe for concurrent use.
//
// Execute returns at the deadline (or when its caller's context ends) while a call that
// ignores its context goes on in its goroutine, holding whatever it holds, a bulkhead permit
// inside the limiter included. A future of package async completes, and a fan-out returns, at
// that moment; Calls is how to wait for the calls themselves:
//
//	ctx, calls := timelimiter.TrackCalls(ctx)
//	results, err := async.All(ctx, pipeline, lookups)
//	...
//	if err := calls.Wait(shutdownCtx); err != nil { ... } // some are still running
//	db.Close()
//
// Levee has no counterpart in Resilience4j, whose abandoned futures cannot be waited for.
type Calls struct{ t tracker.Tracker }

// TrackCalls returns a context derived from ctx and the *Calls counting every call that
// Execute runs under it (or under a context derived from it), from Execute's start to the
// call's return, whether or not Execute's caller is still waiting. A nil ctx means
// context.Background(). The per-emission operators of package stream and of the rxgo operators
// module wait for their own calls before closing their output; their calls are counted here
// as well.
func TrackCalls(ctx context.Context) (context.Context, *Calls) {
	c := new(Calls)
	return tracker.With(safe.Ctx(ctx), &c.t), c
}

// Running returns the number of calls running now; 0 for a nil c.
func (c *Calls) Running() int {
	if c == nil {
		return 0
	}
	return c.t.Running()
}

// Wait blocks until no call is running and returns nil, or returns ctx.Err() once ctx ends
// first. A call started while Wait blocks is waited for too. A nil ctx means
// context.Background(); a nil c returns nil at once.
func (c *Calls) Wait(ctx context.Context) error {
	if c == nil {
		return nil
	}
	ctx = safe.Ctx(ctx)
	if c.t.Wait(ctx.Done()) {
		return nil
	}
	return ctx.Err()
}
