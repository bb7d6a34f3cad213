package event

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPublisher(t *testing.T) {
	var p Publisher[int]
	assert.False(t, p.Active())
	p.Publish(1) // nobody listens: nothing happens

	var got []string
	unsubA := p.Subscribe(func(e int) { got = append(got, "a", string(rune('0'+e))) })
	p.Subscribe(func(int) { panic("consumer bug") }) // recovered, the others still run
	p.Subscribe(func(e int) { got = append(got, "c", string(rune('0'+e))) })
	assert.True(t, p.Active())
	p.Publish(1)
	assert.Equal(t, []string{"a", "1", "c", "1"}, got, "in subscription order, past a panicking consumer")

	unsubA()
	unsubA() // twice is harmless
	got = nil
	p.Publish(2)
	assert.Equal(t, []string{"c", "2"}, got)

	assert.NotPanics(t, func() { p.Subscribe(nil)() })
}

func TestPublisherConcurrentUse(t *testing.T) {
	var p Publisher[int]
	var mu sync.Mutex
	count := 0
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			unsub := p.Subscribe(func(int) { mu.Lock(); count++; mu.Unlock() })
			for i := range 100 {
				p.Publish(i)
			}
			unsub()
		})
	}
	wg.Wait()
	assert.False(t, p.Active())
	assert.GreaterOrEqual(t, count, 16*100, "each consumer saw at least its own goroutine's events")
}

func TestPublishDoesNotAllocateWithoutSubscribers(t *testing.T) {
	var p Publisher[int]
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if p.Active() {
			p.Publish(1)
		}
	}))
}

// A consumer of some kinds gets only those from PublishKind, every event from Publish; Wants
// follows the union of the kinds subscribed.
func TestSubscribeKinds(t *testing.T) {
	var p Publisher[int]
	assert.False(t, p.Wants(AllKinds))
	var got []int
	unsub := p.SubscribeKinds(func(e int) { got = append(got, e) }, 1<<2|1<<3)
	assert.True(t, p.Wants(1<<3))
	assert.False(t, p.Wants(1<<1))
	p.PublishKind(1, 1<<1)
	p.PublishKind(2, 1<<2)
	p.PublishKind(3, 1<<3)
	p.Publish(4)
	assert.Equal(t, []int{2, 3, 4}, got)

	unsubAll := p.Subscribe(func(int) {})
	assert.True(t, p.Wants(1<<1))
	unsubAll()
	assert.False(t, p.Wants(1<<1))
	unsub()
	assert.False(t, p.Wants(AllKinds))
	assert.False(t, p.Active())
	assert.NotPanics(t, func() { p.SubscribeKinds(func(int) {}, 0)() })
	assert.False(t, p.Active(), "no kinds subscribes nothing")
}
