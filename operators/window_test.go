package operators_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/operators"
)

// One slow element (the first) holds the ordered output: with a window of w, the slow one
// and exactly w-1 items after it are taken from the upstream and started, then the
// subscription waits, emitting nothing.
func TestMapWindowBoundsTheElementsStartedPastASlowOne(t *testing.T) {
	for _, tc := range []struct {
		concurrency int
		opts        []operators.Option
		wantStarted []int
	}{
		{2, nil, []int{1, 2}}, // the default window is the concurrency
		{2, []operators.Option{operators.Window(5)}, []int{1, 2, 3, 4, 5}},
		{4, []operators.Option{operators.Window(9)}, []int{1, 2, 3, 4, 5, 6, 7, 8, 9}},
	} {
		t.Run(fmt.Sprintf("concurrency %d, %d started", tc.concurrency, len(tc.wantStarted)), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newProbe(ints(20)...)
				release := make(chan struct{})
				var mu sync.Mutex
				started := []int{}
				m := mustOp(t)(operators.Map(nil, func(_ context.Context, v int) (int, error) {
					mu.Lock()
					started = append(started, v)
					mu.Unlock()
					if v == 1 {
						<-release
					}
					return 10 * v, nil
				}, append([]operators.Option{operators.Concurrency(tc.concurrency)}, tc.opts...)...))
				ch := m(src.Observable()).Observe(rxgo.WithContext(t.Context()))

				synctest.Wait()
				mu.Lock()
				assert.ElementsMatch(t, tc.wantStarted, started)
				mu.Unlock()
				assert.Equal(t, int32(len(tc.wantStarted)), src.emitted.Load(), "items taken from the upstream")
				assert.Equal(t, 0, len(ch))

				close(release)
				got := []string{}
				for it := range ch {
					got = append(got, show(it))
				}
				want := []string{}
				for i := 1; i <= 20; i++ {
					want = append(want, fmt.Sprint(10*i))
				}
				assert.Equal(t, want, got)
			})
		})
	}
}
