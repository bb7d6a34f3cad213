package async

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/safe"
)

// MaxHedgesAtOnce is the largest maxHedges Hedge takes with a delay of 0: every attempt then
// starts at once, a goroutine each, and an unbounded number would exhaust memory.
const MaxHedgesAtOnce = 1000

// Hedge runs call guarded by p and, while no attempt has succeeded, starts another attempt
// every delay, up to maxHedges more (maxHedges+1 attempts in all), to cut the tail latency of a
// dependency that is sometimes slow. The first live success is returned: the other attempts are
// cancelled, which releases their permits without recording them against the dependency, and
// Hedge returns once they have returned. (A rate-limiter reservation of a cancelled loser comes
// back only while it is the limiter's latest one, see package ratelimiter; otherwise its
// permission in that future cycle goes unused, so no cycle ever admits more than its limit.)
// The rules follow Polly's and failsafe-go's hedging:
//
//   - Each attempt is one full execution of p: it takes its own breaker decision, bulkhead
//     permit and rate-limiter permission, so hedges count against them and a saturated
//     dependency refuses them. A TimeLimiter in p bounds each attempt.
//   - An attempt that fails (its fallback's answer counts as a failure here) starts the next
//     attempt at once instead of waiting for the delay: waiting on a failure gains nothing.
//     An attempt refused by a levee pattern (an open breaker, a full bulkhead, a rate limit)
//     does not: a new attempt would most likely be refused too. When such a refusal leaves
//     no attempt running, Hedge gives up rather than wait for the next delay.
//   - A delay of 0 starts every attempt at once, so it takes maxHedges up to MaxHedgesAtOnce;
//     a larger one (math.MaxInt, "until the context ends") needs a delay.
//   - When no attempt succeeds, the fallback answer of the earliest attempt is returned if
//     there is one, else the failure of the only attempt, or all the failures joined in attempt
//     order (errors.Join).
//
// Attempts run concurrently, so call must be safe to run several times at once, and should be
// idempotent: a losing attempt may have reached the dependency before it was cancelled.
//
// Cancelling ctx cancels every attempt; Hedge returns ctx's error once they have returned. A
// nil call returns levee.ErrNilCall; a negative delay or maxHedges returns an error; neither
// runs anything. A nil ctx means context.Background().
func Hedge[T any](ctx context.Context, p *levee.Pipeline[T], call levee.Call[T], delay time.Duration, maxHedges int) (T, fallback.Outcome, error) {
	var zero T
	switch {
	case call == nil:
		return zero, fallback.Outcome{}, safe.ErrNilCall
	case delay < 0:
		return zero, fallback.Outcome{}, fmt.Errorf("async: Hedge delay must be >= 0, got %v", delay)
	case maxHedges < 0:
		return zero, fallback.Outcome{}, fmt.Errorf("async: Hedge maxHedges must be >= 0, got %d", maxHedges)
	case delay == 0 && maxHedges > MaxHedgesAtOnce:
		return zero, fallback.Outcome{}, fmt.Errorf("async: Hedge maxHedges must be at most MaxHedgesAtOnce (%d) with a delay of 0, which starts every attempt at once, got %d", MaxHedgesAtOnce, maxHedges)
	}
	attempts := maxHedges + 1
	if maxHedges == math.MaxInt {
		attempts = maxHedges // as good as unbounded, and no overflow
	}
	r := newRace(ctx, attempts, func(ctx context.Context, _ int) Result[T] {
		v, out, err := p.ExecuteOutcome(ctx, call)
		return Result[T]{Value: v, Err: err, Outcome: out}
	})
	r.start(0)
	if delay == 0 {
		for r.started < attempts {
			r.start(r.started)
		}
	}
	// next fires when the next hedge is due; nil once none is left to start.
	var next <-chan time.Time
	var timer *time.Timer
	if r.started < attempts {
		timer = time.NewTimer(delay)
		defer timer.Stop()
		next = timer.C
	}
	hedge := func() {
		r.start(r.started)
		if r.started < attempts {
			timer.Reset(delay)
		} else {
			timer.Stop()
			next = nil
		}
	}

	for r.running > 0 {
		// An attempt that has returned is looked at before a hedge that is due at the same
		// moment: starting an attempt only to cancel it at once would be waste.
		var a attemptResult[T]
		select {
		case a = <-r.results:
		default:
			select {
			case <-next:
				hedge()
				continue
			case a = <-r.results:
			case <-r.ctx.Done():
				select { // a result that arrived together with the cancellation wins
				case a = <-r.results:
				default:
					return r.abandoned()
				}
			}
		}
		r.running--
		switch {
		case live(a):
			return r.won(a)
		case r.ctx.Err() != nil:
			return r.abandoned() // a failure caused by the caller's cancellation
		}
		r.note(a)
		if r.started < attempts && !rejected(a) {
			hedge()
		}
	}
	return r.lost()
}
