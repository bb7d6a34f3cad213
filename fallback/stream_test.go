package fallback_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/fallback"
)

func TestEventsChannelDropsWhenFullAndEndsWithContext(t *testing.T) {
	f := labelled(t, fallback.OnAny(answer("fb")))
	ctx, cancel := context.WithCancel(context.Background())
	ch, dropped := f.Events(ctx, 1)
	for range 3 {
		v, err := fallback.Execute(context.Background(), f, failing[string](errBoom))
		require.NoError(t, err)
		assert.Equal(t, "fb", v)
	}
	assert.Equal(t, uint64(2), dropped())
	cancel()
	var got []fallback.EventType
	for e := range ch {
		got = append(got, e.Type)
	}
	assert.Equal(t, []fallback.EventType{fallback.EventAnswered}, got)
}

func TestEventSeqEndsOnBreak(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := labelled(t, fallback.OnAny(answer("fb")))
		seq, dropped := f.EventSeq(context.Background(), 4)
		var got []fallback.EventType
		done := make(chan struct{})
		go func() {
			defer close(done)
			for e := range seq {
				got = append(got, e.Type)
				break
			}
		}()
		synctest.Wait()
		_, _ = fallback.Execute(context.Background(), f, failing[string](errBoom))
		<-done
		assert.Equal(t, []fallback.EventType{fallback.EventAnswered}, got)
		assert.Equal(t, uint64(0), dropped())

		var nilFallback *fallback.Fallback[string]
		ch, n := nilFallback.Events(context.Background(), 1)
		_, open := <-ch
		assert.False(t, open)
		assert.Equal(t, uint64(0), n())
		s, _ := nilFallback.EventSeq(context.Background(), 1)
		for range s {
			t.Fatal("a nil Fallback yields nothing")
		}
	})
}
