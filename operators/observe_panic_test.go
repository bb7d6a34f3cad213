package operators_test

import (
	"context"
	"testing"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/operators"
)

// panickyObservable is an Observable whose Observe panics, as a nil *rxgo.ObservableImpl's does.
type panickyObservable struct{ rxgo.Observable }

func (panickyObservable) Observe(...rxgo.Option) <-chan rxgo.Item { panic("observe bug") }

// An upstream whose Observe panics fails the subscription with a *levee.PanicError, as a panic
// in a Source does; the panic crashed the program from the operator's goroutine.
func TestAnUpstreamWhoseObservePanicsFailsTheSubscription(t *testing.T) {
	bh := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
	cb := newBreaker(t, circuitbreaker.Config{})
	for _, tc := range []struct {
		name string
		obs  func(up rxgo.Observable) rxgo.Observable
	}{
		{"Map", mustOp(t)(operators.Map[int, int](nil, double))},
		{"Map Concurrency 2", mustOp(t)(operators.Map[int, int](nil, double, operators.Concurrency(2)))},
		{"Bulkhead", operators.Bulkhead(bh)},
		{"CircuitBreaker", operators.CircuitBreaker(cb)},
		{"Lazy", func(up rxgo.Observable) rxgo.Observable {
			return operators.Lazy(func(context.Context) (rxgo.Observable, error) { return up, nil })
		}},
	} {
		for _, up := range []struct {
			name string
			obs  rxgo.Observable
			want string
		}{
			{"panicking Observe", panickyObservable{}, "levee: panic: observe bug"},
			{"nil *ObservableImpl", (*rxgo.ObservableImpl)(nil),
				"levee: panic: runtime error: invalid memory address or nil pointer dereference"},
		} {
			t.Run(tc.name+"/"+up.name, func(t *testing.T) {
				got, items := observe(tc.obs(up.obs))
				require.Len(t, got, 1)
				var pe *levee.PanicError
				require.ErrorAs(t, items[0].E, &pe)
				assert.Equal(t, up.want, pe.Error())
			})
		}
	}
	assert.Equal(t, bulkhead.Metrics{AvailableConcurrentCalls: 1, MaxAllowedConcurrentCalls: 1}, bh.Metrics(),
		"the permit is back")
	assert.Equal(t, 0, cb.Metrics().NumberOfBufferedCalls, "the caller's mistake is not recorded")
}
