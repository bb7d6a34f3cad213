package operators_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/operators"
)

// TestMapMatchesItsModel checks Map against a model of its rules: one item per upstream item
// in input order (whatever the concurrency and the calls' durations), failed elements as
// error items, upstream errors forwarded, ending at the first error item unless
// ContinueOnError is given.
func TestMapMatchesItsModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(0, 12).Draw(rt, "n")
		kinds := rapid.SliceOfN(rapid.IntRange(0, 5), n, n).Draw(rt, "kinds") // 0: upstream error, 1: failing element
		delays := rapid.SliceOfN(rapid.IntRange(0, 3), n, n).Draw(rt, "delays")
		concurrency := rapid.IntRange(1, 4).Draw(rt, "concurrency")
		mode := rapid.SampledFrom([]string{"default", "StopOnError", "ContinueOnError"}).Draw(rt, "mode")
		stop := mode == "StopOnError" // Map goes on past an error item by default

		var items []any
		var want []string
		index := 0
		for i, k := range kinds {
			switch k {
			case 0:
				items = append(items, fmt.Errorf("up %d", i))
				want = append(want, fmt.Sprintf("E:up %d", i))
			case 1:
				v := -(i + 1) // fn fails on negative values
				items = append(items, v)
				if stop {
					want = append(want, fmt.Sprintf("E:stream: stopped at element %d (%d): neg %d", index, v, v))
				} else {
					want = append(want, fmt.Sprintf("E:neg %d", v))
				}
				index++
			default:
				items = append(items, i+1)
				want = append(want, fmt.Sprint(10*(i+1)))
				index++
			}
			if stop && k <= 1 {
				break
			}
		}
		if want == nil {
			want = []string{}
		}
		opts := []operators.Option{operators.Concurrency(concurrency)}
		switch mode {
		case "StopOnError":
			opts = append(opts, operators.StopOnError())
		case "ContinueOnError":
			opts = append(opts, operators.ContinueOnError())
		}
		fn := func(_ context.Context, v int) (int, error) {
			d := delays[max(v, -v)-1]
			time.Sleep(time.Duration(d) * time.Millisecond)
			if v < 0 {
				return 0, fmt.Errorf("neg %d", v)
			}
			return 10 * v, nil
		}
		var got []string
		synctest.Test(t, func(t *testing.T) {
			m, err := operators.Map(nil, fn, opts...)
			if err != nil {
				t.Fatal(err)
			}
			got, _ = observe(m(newProbe(items...).Observable()))
		})
		if fmt.Sprint(got) != fmt.Sprint(want) {
			rt.Fatalf("got %q, want %q", got, want)
		}
	})
}

// scenario is one subscription of the breaker model: the source emits items values, then
// completes (end 0), fails (end 1) or waits while the consumer cancels after reading them all
// (end 2). wait advances the clock before the subscription.
type scenario struct {
	items int
	end   int
	wait  time.Duration
}

// TestCircuitBreakerOperatorMatchesThePermitModel drives the operator and a twin breaker,
// through the permit API, by the Flux rules: completion is a success, an error a failure, and
// a cancellation a success after an item and a released permission before any. Both must
// agree on every outcome, state and metric.
func TestCircuitBreakerOperatorMatchesThePermitModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		steps := rapid.SliceOfN(rapid.Custom(func(rt *rapid.T) scenario {
			return scenario{
				items: rapid.IntRange(0, 2).Draw(rt, "items"),
				end:   rapid.IntRange(0, 2).Draw(rt, "end"),
				wait:  time.Duration(rapid.IntRange(0, 3).Draw(rt, "wait")) * 500 * time.Millisecond,
			}
		}), 1, 30).Draw(rt, "steps")
		var failure string
		synctest.Test(t, func(t *testing.T) {
			cfg := circuitbreaker.Config{SlidingWindowSize: 4, MinimumNumberOfCalls: 2,
				PermittedNumberOfCallsInHalfOpenState: 2, WaitDurationInOpenState: time.Second}
			cb := newBreaker(t, cfg)
			twin := newBreaker(t, cfg)
			for i, s := range steps {
				time.Sleep(s.wait)
				items := make([]any, s.items)
				for j := range items {
					items[j] = j
				}
				if s.end == 1 {
					items = append(items, errBoom)
				}
				// The twin decides first: both breakers are in the same state.
				var want []string
				permit, rejected := twin.Acquire()
				if rejected != nil {
					want = []string{"E:" + rejected.Error()}
				} else {
					for j := range s.items {
						want = append(want, fmt.Sprint(j))
					}
					switch {
					case s.end == 0 || (s.end == 2 && s.items > 0):
						permit.OnSuccess()
					case s.end == 1:
						want = append(want, "E:boom")
						permit.OnError(errBoom)
					default:
						permit.Release()
					}
				}
				p := newProbe(items...)
				p.hang = s.end == 2
				obs := operators.CircuitBreaker(cb)(p.Observable())
				var got []string
				if s.end == 2 && rejected == nil {
					got = take(obs, s.items)
				} else {
					got, _ = observe(obs)
				}
				if want == nil {
					want = []string{}
				}
				synctest.Wait()
				gm, wm := cb.Metrics(), twin.Metrics()
				if fmt.Sprint(got) != fmt.Sprint(want) || cb.State() != twin.State() || gm != wm {
					failure = fmt.Sprintf("step %d %+v: items %q want %q, state %v want %v, metrics %+v want %+v",
						i, s, got, want, cb.State(), twin.State(), gm, wm)
					return
				}
			}
		})
		if failure != "" {
			rt.Fatal(failure)
		}
	})
}
