package circuitbreaker_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cb "github.com/levee-go/levee/circuitbreaker"
)

// A huge buffer is user input like any other: it is capped at 65536 events, not handed to
// make, which panicked ("makechan: size out of range").
func TestEventsHugeBufferIsCapped(t *testing.T) {
	b := mustNew(t, small())
	ctx, cancel := context.WithCancel(t.Context())
	events, dropped := b.Events(ctx, math.MaxInt)
	assert.Equal(t, 65536, cap(events))
	e := <-events
	assert.Equal(t, cb.EventInitialState, e.Type)
	cancel()
	for range events {
	}
	assert.Equal(t, uint64(0), dropped())

	seq, _ := b.EventSeq(t.Context(), math.MaxInt)
	var got []cb.EventType
	for e := range seq {
		got = append(got, e.Type)
		if len(got) == 1 {
			require.NoError(t, b.TransitionToOpenState())
			continue
		}
		break
	}
	assert.Equal(t, []cb.EventType{cb.EventInitialState, cb.EventStateTransition}, got)
}
