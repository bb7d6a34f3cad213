package stream_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/stream"
)

// mapModel computes when each element's result comes out of Map with c workers and a
// consumer that reads at once: elements are handed out in input order while fewer than c are
// taken and not yet sent (the window), each call takes d[k], and in order each result waits
// for the ones before it.
func mapModel(d []time.Duration, c int, ordered bool) (emit []time.Duration) {
	n := len(d)
	start, finish := make([]time.Duration, n), make([]time.Duration, n)
	emit = make([]time.Duration, n)
	if ordered {
		for k := range n {
			if k >= c {
				start[k] = emit[k-c] // the token of element k-c comes back when it is sent
			}
			finish[k] = start[k] + d[k]
			emit[k] = finish[k]
			if k > 0 && emit[k-1] > emit[k] {
				emit[k] = emit[k-1]
			}
		}
		return emit
	}
	// Unordered: a token comes back as soon as its call ends.
	slots := make([]time.Duration, c)
	for k := range n {
		i := 0
		for j := range slots {
			if slots[j] < slots[i] {
				i = j
			}
		}
		start[k] = slots[i]
		if k > 0 && start[k-1] > start[k] {
			start[k] = start[k-1]
		}
		finish[k] = start[k] + d[k]
		slots[i] = finish[k]
		emit[k] = finish[k]
	}
	return emit
}

type emitted struct {
	index int
	at    time.Duration
	err   error
	value int
}

// TestMapMatchesModel checks Map against mapModel on random streams: which results come out,
// in what order, when (in fake time), with what values and errors, and how many calls run at
// once, with and without StopOnError.
func TestMapMatchesModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rapid.Check(bubbleTB{t}, func(rt *rapid.T) {
			n := rapid.IntRange(0, 30).Draw(rt, "n")
			c := rapid.IntRange(1, 6).Draw(rt, "concurrency")
			ordered := rapid.Bool().Draw(rt, "ordered")
			stop := rapid.Bool().Draw(rt, "stopOnError")
			buffer := rapid.IntRange(0, 3).Draw(rt, "buffer")
			d := make([]time.Duration, n)
			fate := make([]int, n) // 0 ok, 1 error, 2 panic
			for k := range n {
				d[k] = time.Duration(rapid.IntRange(1, 40).Draw(rt, "ms")) * time.Millisecond
				fate[k] = rapid.IntRange(0, 6).Draw(rt, "fate") % 3 * rapid.IntRange(0, 1).Draw(rt, "fails")
			}

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var f inflight
			opts := []stream.Option{stream.Concurrency(c), stream.Buffer(buffer)}
			if !ordered {
				opts = append(opts, stream.Unordered())
			}
			if stop {
				opts = append(opts, stream.StopOnError())
			}
			out, err := stream.Map(ctx, feed(ctx, count(n)...), nil, func(ctx context.Context, v int) (int, error) {
				f.enter()
				defer f.leave()
				select {
				case <-time.After(d[v]):
				case <-ctx.Done():
					return 0, ctx.Err()
				}
				switch fate[v] {
				case 1:
					return 0, fmt.Errorf("element %d: %w", v, errBoom)
				case 2:
					panic(v)
				}
				return 10 * v, nil
			}, opts...)
			if err != nil {
				rt.Fatal(err)
			}
			start := time.Now()
			var got []emitted
			for r := range out {
				got = append(got, emitted{r.Index, time.Since(start), r.Err, r.Value})
			}

			if f.max.Load() > int64(c) {
				rt.Fatalf("%d calls in flight, concurrency %d", f.max.Load(), c)
			}
			model := mapModel(d, c, ordered)
			want := make([]emitted, n)
			for k := range n {
				want[k] = emitted{index: k, at: model[k], value: 10 * k}
			}
			if !ordered {
				sort.SliceStable(want, func(i, j int) bool { return want[i].at < want[j].at })
			}
			if stop {
				cut := slices.IndexFunc(want, func(e emitted) bool { return fate[e.index] != 0 })
				if cut >= 0 {
					if !ordered {
						// Failures finishing at the same instant may come out in either order;
						// so may a success finishing with the first failure.
						tied := 0
						for _, e := range want {
							if e.at == want[cut].at {
								tied++
							}
						}
						if tied > 1 {
							checkStopLoosely(rt, got, fate, want[cut].at)
							return
						}
					}
					want = want[:cut+1]
				}
			}
			if !ordered {
				// Results finishing at the same instant may come out in either order.
				key := func(e emitted) string { return fmt.Sprint(e.at, "/", e.index) }
				slices.SortStableFunc(got, func(a, b emitted) int { return compareStrings(key(a), key(b)) })
				slices.SortStableFunc(want, func(a, b emitted) int { return compareStrings(key(a), key(b)) })
			}
			if len(got) != len(want) {
				rt.Fatalf("got %d results, want %d:\ngot  %v\nwant %v", len(got), len(want), got, want)
			}
			for i := range want {
				g, w := got[i], want[i]
				if g.index != w.index || g.at != w.at {
					rt.Fatalf("result %d: got element %d at %v, want element %d at %v", i, g.index, g.at, w.index, w.at)
				}
				checkFate(rt, g, fate[g.index], stop)
			}
			if stop && len(got) > 0 && fate[got[len(got)-1].index] != 0 && !errors.Is(got[len(got)-1].err, stream.ErrStopped) {
				rt.Fatalf("last result %v does not stop the stream", got[len(got)-1].err)
			}
		})
	})
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func checkFate(rt *rapid.T, g emitted, fate int, stop bool) {
	switch fate {
	case 0:
		if g.err != nil || g.value != 10*g.index {
			rt.Fatalf("element %d: got (%d, %v), want (%d, nil)", g.index, g.value, g.err, 10*g.index)
		}
	case 1:
		if !errors.Is(g.err, errBoom) {
			rt.Fatalf("element %d: got %v, want boom", g.index, g.err)
		}
	case 2:
		var pe *levee.PanicError
		if !errors.As(g.err, &pe) || pe.Value != g.index {
			rt.Fatalf("element %d: got %v, want a panic", g.index, g.err)
		}
	}
	if stop && fate != 0 {
		var se *stream.StoppedError[int]
		if !errors.As(g.err, &se) || se.Index != g.index || se.In != g.index {
			rt.Fatalf("element %d: got %v, want a *StoppedError naming it", g.index, g.err)
		}
	}
}

// checkStopLoosely checks an unordered StopOnError stream whose first failure tied with other
// results: successes before it, each once, then exactly one failure, at the failure's instant.
func checkStopLoosely(rt *rapid.T, got []emitted, fate []int, at time.Duration) {
	if len(got) == 0 {
		rt.Fatal("no result")
	}
	last := got[len(got)-1]
	if fate[last.index] == 0 || last.at != at {
		rt.Fatalf("last result %v is not the first failure at %v", last, at)
	}
	seen := map[int]bool{}
	for _, g := range got[:len(got)-1] {
		if fate[g.index] != 0 || seen[g.index] || g.at > at {
			rt.Fatalf("unexpected result %v before the stop", g)
		}
		seen[g.index] = true
		checkFate(rt, g, 0, true)
	}
	checkFate(rt, last, fate[last.index], true)
}

// subscription plans one random subscription for the breaker model.
type plan struct {
	failures int  // attempts that fail before one completes
	elements int  // elements each attempt emits
	cancel   bool // the consumer reads the first attempt's elements, then cancels
}

// TestSubscribeMatchesBreakerModel runs random subscriptions through a retry, a breaker and a
// bulkhead, and checks the per-subscription rules against a model: one outcome per attempt,
// success at a clean end, failure at an error, and on cancellation nothing before the first
// element and a success after it; the bulkhead permit comes back after each.
func TestSubscribeMatchesBreakerModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rapid.Check(bubbleTB{t}, func(rt *rapid.T) {
			maxAttempts := rapid.IntRange(1, 3).Draw(rt, "maxAttempts")
			r, err := retry.New("rt", retry.Config{MaxAttempts: maxAttempts, WaitDuration: retry.NoWait})
			if err != nil {
				rt.Fatal(err)
			}
			cb, err := circuitbreaker.New("cb", breakerConfig())
			if err != nil {
				rt.Fatal(err)
			}
			bh, err := bulkhead.New("bh", bulkhead.Config{MaxConcurrentCalls: 1})
			if err != nil {
				rt.Fatal(err)
			}
			var finished atomic.Int64
			bh.Subscribe(func(e bulkhead.Event) {
				if e.Type == bulkhead.EventCallFinished {
					finished.Add(1)
				}
			})
			ps := levee.Patterns{Retry: r, CircuitBreaker: cb, Bulkhead: bh}
			var wantSuccess, wantFailed, wantFinished int

			for i, p := range rapid.SliceOfN(rapid.Custom(func(rt *rapid.T) plan {
				return plan{
					failures: rapid.IntRange(0, 3).Draw(rt, "failures"),
					elements: rapid.IntRange(0, 3).Draw(rt, "elements"),
					cancel:   rapid.Bool().Draw(rt, "cancel"),
				}
			}), 1, 8).Draw(rt, "subscriptions") {
				ctx, cancel := context.WithCancel(context.Background())
				var builds atomic.Int64
				items, err := stream.Subscribe(ctx, ps, stream.Source[int](func(ctx context.Context, emit func(int) error) error {
					attempt := int(builds.Add(1))
					for e := range p.elements {
						if err := emit(attempt*10 + e); err != nil {
							return err
						}
					}
					if p.cancel {
						<-ctx.Done()
						return ctx.Err()
					}
					if attempt <= p.failures {
						return errBoom
					}
					return nil
				}))
				if err != nil {
					rt.Fatal(err)
				}
				var got []stream.Item[int]
				if p.cancel {
					for range p.elements {
						got = append(got, <-items)
					}
					synctest.Wait()
					cancel()
				}
				got = append(got, drain(items)...)
				cancel()

				// The model.
				attempts := min(p.failures+1, maxAttempts)
				wantItems := attempts * p.elements
				failedFinal := p.failures >= maxAttempts
				if p.cancel {
					attempts, wantItems, failedFinal = 1, p.elements, false
					if p.elements > 0 {
						wantSuccess++
						wantFinished++
					}
				} else {
					wantFailed += min(p.failures, maxAttempts)
					if !failedFinal {
						wantSuccess++
					}
					wantFinished += attempts
				}
				if failedFinal {
					wantItems++
				}
				if int(builds.Load()) != attempts {
					rt.Fatalf("subscription %d: %d attempts, want %d", i, builds.Load(), attempts)
				}
				if len(got) != wantItems {
					rt.Fatalf("subscription %d: %d items, want %d: %v", i, len(got), wantItems, got)
				}
				if failedFinal && !errors.Is(got[len(got)-1].Err, errBoom) {
					rt.Fatalf("subscription %d: ends with %v", i, got[len(got)-1].Err)
				}
				m := cb.Metrics()
				if m.NumberOfSuccessfulCalls != wantSuccess || m.NumberOfFailedCalls != wantFailed {
					rt.Fatalf("subscription %d: breaker recorded %d successes and %d failures, want %d and %d",
						i, m.NumberOfSuccessfulCalls, m.NumberOfFailedCalls, wantSuccess, wantFailed)
				}
				synctest.Wait()
				if a := bh.Metrics().AvailableConcurrentCalls; a != 1 {
					rt.Fatalf("subscription %d: bulkhead permit not back (%d available)", i, a)
				}
				if int(finished.Load()) != wantFinished {
					rt.Fatalf("subscription %d: %d CALL_FINISHED, want %d", i, finished.Load(), wantFinished)
				}
			}
		})
	})
}
