package keyed_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/keyed"
)

var errNoTenant = errors.New("no tenant")

// A KeyFunc that panics refuses the call with a *levee.PanicError, for each role.
func TestKeyFuncPanicIsAnError(t *testing.T) {
	panicky := func(context.Context) string { panic("key bug") }
	assertPanicError := func(t *testing.T, err error) {
		t.Helper()
		var pe *levee.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "key bug", pe.Value)
	}
	limiters, err := keyed.New(keyed.Config{}, func(s string) (*adaptive.Limiter, error) { return adaptive.New(s, adaptive.Config{}) })
	require.NoError(t, err)
	p, err := keyed.Admitters(limiters, panicky).Admit(context.Background())
	assert.Nil(t, p)
	assertPanicError(t, err)
	breakers, err := keyed.New(keyed.Config{}, func(s string) (*circuitbreaker.CircuitBreaker, error) {
		return circuitbreaker.New(s, circuitbreaker.Config{})
	})
	require.NoError(t, err)
	p, err = keyed.CircuitBreakers(breakers, panicky).Admit(context.Background())
	assert.Nil(t, p)
	assertPanicError(t, err)
	perm := &permissions{}
	pls, err := keyed.New(keyed.Config{}, func(string) (*permissions, error) { return perm, nil })
	require.NoError(t, err)
	assertPanicError(t, keyed.Limiters(pls, panicky).AcquirePermission(context.Background(), 1))
	assert.Zero(t, perm.n)
	err = keyed.Limiters(pls, func(context.Context) string { panic(errNoTenant) }).AcquirePermission(context.Background(), 1)
	assert.ErrorIs(t, err, errNoTenant, "a panic with an error unwraps to it")
	assert.Equal(t, keyed.Metrics{}, limiters.Metrics())
	assert.Equal(t, keyed.Metrics{}, breakers.Metrics())
	assert.Equal(t, keyed.Metrics{}, pls.Metrics())
}

type permissions struct{ n int }

func (p *permissions) AcquirePermission(context.Context, int) error { p.n++; return nil }
