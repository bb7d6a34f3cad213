package circuitbreaker_test

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cb "github.com/levee-go/levee/circuitbreaker"
)

// Transitions made by many goroutines at once reach subscribers in the order they happened:
// each event's From is the previous event's To, from the initial CLOSED to the final state. A
// breaker opened by one goroutine and moved to HALF_OPEN by another, finding the short open
// wait over, once delivered OPEN → HALF_OPEN before CLOSED → OPEN.
func TestTransitionsReachSubscribersInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br := mustNew(t, cb.Config{SlidingWindowSize: 2, MinimumNumberOfCalls: 2, FailureRateThreshold: 50,
			WaitDurationInOpenState: time.Millisecond, PermittedNumberOfCallsInHalfOpenState: 1})
		// A slow subscriber holds the goroutine that opened the breaker between the opening and
		// its STATE_TRANSITION event, long enough for the open wait to end meanwhile.
		br.Subscribe(func(e cb.Event) {
			if e.Type == cb.EventFailureRateExceeded {
				time.Sleep(2 * time.Millisecond)
			}
		})
		var mu sync.Mutex
		var seen []cb.Event
		br.OnStateChange(func(from, to cb.State) {
			mu.Lock()
			seen = append(seen, cb.Event{From: from, To: to})
			mu.Unlock()
		})
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 200 {
					_ = run(br, 0, []error{nil, errBoom, errBoom}[(g+i)%3])
					if i%4 == 0 {
						time.Sleep(time.Millisecond)
					}
				}
			}()
		}
		wg.Wait()
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		require.Greater(t, len(seen), 20)
		prev := cb.Closed
		broken := 0
		for _, e := range seen {
			if e.From != prev {
				broken++
			}
			prev = e.To
		}
		assert.Zero(t, broken, "transitions delivered out of order")
		assert.Equal(t, br.State(), prev, "the last event is the breaker's state")
	})
}
