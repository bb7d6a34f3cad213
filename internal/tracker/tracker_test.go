package tracker

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestWaitReturnsWhenTheLastGoroutineIsDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var tr Tracker
		assert.True(t, tr.Wait(nil), "nothing counted: at once")
		tr.Start()
		tr.Start()
		assert.Equal(t, 2, tr.Running())
		var waited time.Duration
		start := time.Now()
		go func() {
			tr.Wait(nil)
			waited = time.Since(start)
		}()
		time.Sleep(time.Second)
		tr.Done()
		time.Sleep(time.Second)
		tr.Done()
		synctest.Wait()
		assert.Equal(t, 2*time.Second, waited)
		assert.Equal(t, 0, tr.Running())

		tr.Start() // counting again after a wait ended is allowed
		done := make(chan struct{})
		time.AfterFunc(time.Second, func() { close(done) })
		start = time.Now()
		assert.False(t, tr.Wait(done))
		assert.Equal(t, time.Second, time.Since(start))
		tr.Done()
		assert.True(t, tr.Wait(nil))
	})
}

func TestContext(t *testing.T) {
	var outer, inner Tracker
	ctx := With(context.Background(), &outer)
	assert.Same(t, &outer, From(ctx))
	assert.Same(t, &inner, From(With(ctx, &inner)), "the innermost")
	inner.Start()
	assert.Equal(t, [2]int{1, 1}, [2]int{inner.Running(), outer.Running()}, "the outer counts the inner's goroutines")
	inner.Done()
	assert.Equal(t, [2]int{0, 0}, [2]int{inner.Running(), outer.Running()})
	assert.Nil(t, From(context.Background()))
	var none *Tracker
	none.Start()
	none.Done()
	assert.Equal(t, 0, none.Running())
	assert.True(t, none.Wait(nil))
}
