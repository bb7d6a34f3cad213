package chaos

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/internal/safe"
)

// panickingSource panics on its first draw, then draws 0.
type panickingSource struct{ draws int }

func (s *panickingSource) Uint64() uint64 {
	s.draws++
	if s.draws == 1 {
		panic("source bug")
	}
	return 0
}

// A Source that panics fails that call; the lock around the Source is released, so the next
// calls draw again instead of waiting for it forever.
func TestPanickingSourceReleasesItsLock(t *testing.T) {
	boom := errors.New("boom")
	f, err := NewFault("f", FaultConfig{Config: Config{InjectionRate: 1, Source: &panickingSource{}}, Fault: boom})
	require.NoError(t, err)
	call := func(context.Context) (int, error) { return 1, nil }

	_, err = Execute(context.Background(), f, call)
	var pe *safe.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "source bug", pe.Value)

	require.True(t, f.mu.TryLock(), "the Source's lock is free after its panic")
	f.mu.Unlock()
	_, err = Execute(context.Background(), f, call)
	assert.Same(t, boom, err)
}
