package operators_test

import (
	"context"
	"testing"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/operators"
)

func TestObservingASingleUseObservableAgainIsRefused(t *testing.T) {
	ch := make(chan rxgo.Item, 2)
	ch <- rxgo.Of(1)
	ch <- rxgo.Of(2)
	close(ch)
	obs := mustOp(t)(operators.Map(nil, double))(rxgo.FromChannel(ch))
	got, _ := observe(obs)
	assert.Equal(t, []string{"2", "4"}, got)
	_, items := observe(obs)
	require.Len(t, items, 1, "not an empty, successful stream")
	assert.ErrorIs(t, items[0].E, operators.ErrSingleUse)
}

func TestObservingAnEmptySingleChannelObservableAgainIsAccepted(t *testing.T) {
	obs := mustOp(t)(operators.Map(nil, double))(rxgo.Empty())
	for range 2 {
		got, _ := observe(obs)
		assert.Empty(t, got, "rxgo.Empty hands out one channel, but nothing was taken from it")
	}
}

func TestLazyRefusesASourceHandingOutTheSameSingleUseObservable(t *testing.T) {
	thrown := rxgo.Thrown(errBoom)
	obs := operators.Lazy(func(context.Context) (rxgo.Observable, error) { return thrown, nil })
	_, items := observe(obs)
	require.Len(t, items, 1)
	assert.Same(t, errBoom, items[0].E)
	_, items = observe(obs)
	require.Len(t, items, 1)
	assert.ErrorIs(t, items[0].E, operators.ErrSingleUse)
}

func TestLazyBuildsAtEachSubscriptionWithItsContext(t *testing.T) {
	var builds int
	var ctxs []context.Context
	obs := operators.Lazy(func(ctx context.Context) (rxgo.Observable, error) {
		builds++
		ctxs = append(ctxs, ctx)
		return rxgo.Just(builds)(), nil
	})
	assert.Equal(t, 0, builds, "nothing happens before a subscription")
	first, _ := observe(obs)
	second, _ := observe(obs)
	assert.Equal(t, []string{"1"}, first)
	assert.Equal(t, []string{"2"}, second)
	require.Len(t, ctxs, 2)
	assert.ErrorIs(t, ctxs[0].Err(), context.Canceled, "the build context ends with the subscription")

	_, items := observe(operators.Lazy(nil))
	require.Len(t, items, 1)
	assert.Error(t, items[0].E)
	_, items = observe(operators.Lazy(func(context.Context) (rxgo.Observable, error) { return nil, nil }))
	require.Len(t, items, 1)
	assert.ErrorIs(t, items[0].E, operators.ErrNilObservable)
}
