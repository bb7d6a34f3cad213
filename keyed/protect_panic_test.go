package keyed_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/keyed"
)

// panicky is an instance whose Protecting panics.
type panicky struct{}

func (*panicky) Protecting() bool { panic("broken Protecting") }

// TestProtectingPanicKeepsKeyedUsable: a Protecting that panics, which runs under the
// Keyed's lock, neither panics the Get that asked nor leaves the lock held: it counts as
// protecting (the instance is kept), and every later Get works.
func TestProtectingPanicKeepsKeyedUsable(t *testing.T) {
	k, err := keyed.New(keyed.Config{MaxKeys: 1}, func(string) (*panicky, error) { return &panicky{}, nil })
	require.NoError(t, err)
	_, err = k.Get("a")
	require.NoError(t, err)

	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- assert.AnError
			}
		}()
		_, err := k.Get("b") // over MaxKeys: asks "a" whether it protects
		done <- err
	}()
	err = <-done
	require.NotEqual(t, assert.AnError, err, "Get panicked")
	require.ErrorIs(t, err, keyed.ErrAllKeysProtected)
	_, err = k.Get("a") // the lock was not left held: this would block forever
	require.NoError(t, err)
	assert.Equal(t, 1, k.Metrics().Keys)
}
