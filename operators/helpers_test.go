package operators_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/operators"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

var errBoom = errors.New("boom")

// show formats an item: its value, or "E:" and its error.
func show(it rxgo.Item) string {
	if it.E != nil {
		return "E:" + it.E.Error()
	}
	return fmt.Sprint(it.V)
}

// observe subscribes to obs under a context of its own and returns every item formatted
// with show, and the items themselves.
func observe(obs rxgo.Observable) ([]string, []rxgo.Item) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	return observeCtx(ctx, obs)
}

func observeCtx(ctx context.Context, obs rxgo.Observable) ([]string, []rxgo.Item) {
	shown := []string{}
	var items []rxgo.Item
	for it := range obs.Observe(rxgo.WithContext(ctx)) {
		shown = append(shown, show(it))
		items = append(items, it)
	}
	return shown, items
}

// take subscribes to obs, reads n items, cancels the subscription and waits for its output to
// close; it returns the items read.
func take(obs rxgo.Observable, n int) []string {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := obs.Observe(rxgo.WithContext(ctx))
	got := []string{}
	for len(got) < n {
		it, ok := <-ch
		if !ok {
			break
		}
		got = append(got, show(it))
	}
	cancel()
	for range ch {
	}
	return got
}

// probe is a cold Observable that emits its items (an error value as an error item), then
// completes, or with hang waits for its context to end. It counts its subscriptions and how
// they ended, and can pause between items.
type probe struct {
	items []any
	hang  bool
	gap   time.Duration // pause before each item

	subs      atomic.Int32 // subscriptions started
	finished  atomic.Int32 // subscriptions that emitted everything
	cancelled atomic.Int32 // subscriptions whose context ended first
	emitted   atomic.Int32 // items sent
}

func newProbe(items ...any) *probe { return &probe{items: items} }

func (p *probe) Observable() rxgo.Observable {
	return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
		p.subs.Add(1)
		for _, x := range p.items {
			if p.gap > 0 {
				select {
				case <-time.After(p.gap):
				case <-ctx.Done():
					p.cancelled.Add(1)
					return
				}
			}
			it := rxgo.Of(x)
			if err, ok := x.(error); ok {
				it = rxgo.Error(err)
			}
			if !it.SendContext(ctx, next) {
				p.cancelled.Add(1)
				return
			}
			p.emitted.Add(1)
		}
		if p.hang {
			<-ctx.Done()
			p.cancelled.Add(1)
			return
		}
		p.finished.Add(1)
	}})
}

// Source returns a Source building p's Observable, counting the builds in builds.
func (p *probe) Source(builds *atomic.Int32) operators.Source {
	return func(context.Context) (rxgo.Observable, error) {
		if builds != nil {
			builds.Add(1)
		}
		return p.Observable(), nil
	}
}

func ints(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func newBreaker(t *testing.T, cfg circuitbreaker.Config) *circuitbreaker.CircuitBreaker {
	t.Helper()
	cb, err := circuitbreaker.New("cb", cfg)
	require.NoError(t, err)
	return cb
}

func newBulkhead(t *testing.T, cfg bulkhead.Config) *bulkhead.Bulkhead {
	t.Helper()
	bh, err := bulkhead.New("bh", cfg)
	require.NoError(t, err)
	return bh
}

func newRateLimiter(t *testing.T, cfg ratelimiter.Config) *ratelimiter.RateLimiter {
	t.Helper()
	rl, err := ratelimiter.New("rl", cfg)
	require.NoError(t, err)
	return rl
}

func newRetry(t *testing.T, cfg retry.Config) *retry.Retry {
	t.Helper()
	r, err := retry.New("rt", cfg)
	require.NoError(t, err)
	return r
}

func newTimeLimiter(t *testing.T, d time.Duration) *timelimiter.TimeLimiter {
	t.Helper()
	tl, err := timelimiter.New("tl", timelimiter.Config{TimeoutDuration: d})
	require.NoError(t, err)
	return tl
}

// mustOp returns a function that fails t when an operator could not be built:
// mustOp(t)(operators.Map(...)).
func mustOp(t *testing.T) func(operators.Operator, error) operators.Operator {
	return func(op operators.Operator, err error) operators.Operator {
		t.Helper()
		require.NoError(t, err)
		return op
	}
}

func double(_ context.Context, v int) (int, error) { return 2 * v, nil }

// failOn returns a function doubling its element, failing for bad.
func failOn(bad int) func(context.Context, int) (int, error) {
	return func(_ context.Context, v int) (int, error) {
		if v == bad {
			return 0, fmt.Errorf("bad %d", v)
		}
		return 2 * v, nil
	}
}

// tryAcquire asks b for one permission and returns its answer; a granted permit is kept, as by
// a call still running.
func tryAcquire(b *circuitbreaker.CircuitBreaker) error {
	_, err := b.Acquire()
	return err
}
