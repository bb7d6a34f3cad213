package stream

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// OrderByKey keeps an entry only for a key with elements in flight: once the stream has ended,
// none is left, however many keys went through.
func TestOrderByKeyForgetsEveryKeyOnceTheStreamEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 200
		in := make(chan int, n)
		for i := range n {
			in <- i
		}
		close(in)
		s, err := newStage("Map", in, nil, func(_ context.Context, v int) (int, error) {
			time.Sleep(time.Duration(v%3) * time.Millisecond)
			return v, nil
		}, expandOne[int, int], []Option{Concurrency(4), Window(16), OrderByKey(func(v int) int { return v % 37 })})
		require.NoError(t, err)
		sent := 0
		for range s.start(t.Context()) {
			sent++
		}
		assert.Equal(t, n, sent)
		assert.Equal(t, 0, s.engine.Lanes.Len())
	})
}
