package async_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/levee-go/levee/async"
)

// hedgeStep is one attempt's plan in the hedging property: how long it takes and how it ends.
type hedgeStep struct {
	d    time.Duration
	kind int // 0 success, 1 failure, 2 refusal by a levee pattern
}

// refusal is an error that levee treats as one of its own rejections.
type refusal struct{ n int }

func (r *refusal) Error() string        { return fmt.Sprintf("refused %d", r.n) }
func (r *refusal) LeveeRejection() bool { return true }

// hedgeModel computes what Hedge must do with a plan: the start time of each attempt, the
// winner (-1 if none) and when Hedge returns.
func hedgeModel(plan []hedgeStep, delay time.Duration, maxHedges int) (starts []time.Duration, winner int, at time.Duration) {
	total := maxHedges + 1
	type run struct {
		i   int
		end time.Duration
	}
	var running []run
	start := func(now time.Duration) {
		i := len(starts)
		starts = append(starts, now)
		running = append(running, run{i, now + plan[i].d})
	}
	start(0)
	if delay == 0 {
		for len(starts) < total {
			start(0)
		}
	}
	due := delay
	for len(running) > 0 {
		first := 0
		for j, r := range running {
			if r.end < running[first].end {
				first = j
			}
		}
		r := running[first]
		if len(starts) < total && due < r.end {
			start(due)
			due += delay
			continue
		}
		running = slices.Delete(running, first, first+1)
		switch plan[r.i].kind {
		case 0:
			return starts, r.i, r.end
		case 1:
			if len(starts) < total {
				start(r.end)
				due = r.end + delay
			}
		}
		at = r.end
	}
	return starts, -1, at
}

// TestHedgeMatchesModel checks Hedge against hedgeModel on random plans. Each attempt's
// duration carries a distinct power-of-two number of microseconds, so no two events of a run
// fall on the same instant and the model's order is the only possible one.
func TestHedgeMatchesModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rapid.Check(bubbleTB{t}, func(rt *rapid.T) {
			maxHedges := rapid.IntRange(0, 3).Draw(rt, "maxHedges")
			delay := time.Duration(rapid.IntRange(0, 10).Draw(rt, "delay10ms")) * 10 * time.Millisecond
			plan := make([]hedgeStep, maxHedges+1)
			for i := range plan {
				plan[i] = hedgeStep{
					d:    time.Duration(rapid.IntRange(0, 20).Draw(rt, "d10ms"))*10*time.Millisecond + time.Duration(1<<i)*time.Microsecond,
					kind: rapid.IntRange(0, 2).Draw(rt, "kind"),
				}
			}
			wantStarts, winner, wantAt := hedgeModel(plan, delay, maxHedges)

			start := time.Now()
			var mu sync.Mutex
			var starts []time.Duration
			call := func(ctx context.Context) (int, error) {
				// The i-th invocation follows plan[i]. With a delay of 0 the attempts start on
				// the same instant in any order, but they are indistinguishable until then.
				mu.Lock()
				i := len(starts)
				starts = append(starts, time.Since(start))
				mu.Unlock()
				s := plan[i]
				var err error
				switch s.kind {
				case 1:
					err = fmt.Errorf("attempt %d failed", i)
				case 2:
					err = &refusal{i}
				}
				return after(s.d, i, err)(ctx)
			}
			v, _, err := async.Hedge(context.Background(), nil, call, delay, maxHedges)
			if got := time.Since(start); got != wantAt {
				rt.Fatalf("returned at %v, model %v", got, wantAt)
			}
			if !slices.Equal(starts, wantStarts) {
				rt.Fatalf("attempts started at %v, model %v", starts, wantStarts)
			}
			if winner >= 0 {
				if err != nil || v != winner {
					rt.Fatalf("got %d, %v; model: attempt %d wins", v, err, winner)
				}
				return
			}
			var failures []error
			for i := range wantStarts {
				switch plan[i].kind {
				case 1:
					failures = append(failures, fmt.Errorf("attempt %d failed", i))
				case 2:
					failures = append(failures, &refusal{i})
				}
			}
			want := failures[0].Error()
			if len(failures) > 1 {
				want = errors.Join(failures...).Error()
			}
			if err == nil {
				rt.Fatalf("no error, model %q", want)
			}
			got := err.Error()
			if delay == 0 {
				// Attempts started together are joined in the order Hedge started them, which
				// need not be the order in which they reached the call.
				gotLines, wantLines := strings.Split(got, "\n"), strings.Split(want, "\n")
				slices.Sort(gotLines)
				slices.Sort(wantLines)
				got, want = strings.Join(gotLines, "\n"), strings.Join(wantLines, "\n")
			}
			if got != want {
				rt.Fatalf("error %q, model %q", got, want)
			}
		})
	})
}
