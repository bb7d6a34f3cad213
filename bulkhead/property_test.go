package bulkhead_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/levee-go/levee/bulkhead"
)

type waiterStatus int

const (
	waiting waiterStatus = iota
	granted
	full
	cancelled
)

// model is the reference the bulkhead is checked against: a counter of permits in flight and
// a FIFO queue of waiters, each with its deadline.
type model struct {
	max, inFlight int
	fair          bool
	maxWait       time.Duration
	now           time.Duration
	queue         []int
	status        []waiterStatus
	deadline      []time.Duration
}

func (m *model) grant() {
	for len(m.queue) > 0 && m.inFlight < m.max {
		m.status[m.queue[0]] = granted
		m.queue = m.queue[1:]
		m.inFlight++
	}
}

func (m *model) free() bool { return m.inFlight < m.max }

// bubbleTB hides *testing.T from rapid, which would otherwise call t.Deadline, a call
// testing forbids inside a synctest bubble.
type bubbleTB struct{ testing.TB }

type realWaiter struct {
	cancel context.CancelFunc
	result chan error
	status waiterStatus
	done   bool
}

// TestBulkheadMatchesModel drives a bulkhead with random acquisitions, releases, changes of the
// configuration, waiters, cancellations and the passing of time, and checks after every step that
// its metrics and the outcome of every waiter are those of the model.
func TestBulkheadMatchesModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rapid.Check(bubbleTB{t}, func(rt *rapid.T) {
			drawConfig := func(rt *rapid.T) bulkhead.Config {
				cfg := bulkhead.Config{
					MaxConcurrentCalls:      rapid.SampledFrom([]int{bulkhead.NoConcurrentCalls, 1, 2, 3, 4}).Draw(rt, "max"),
					DisableFairCallHandling: rapid.Bool().Draw(rt, "unfair"),
				}
				if rapid.Bool().Draw(rt, "waits") {
					cfg.MaxWaitDuration = time.Duration(rapid.IntRange(1, 100).Draw(rt, "maxWaitMs")) * time.Millisecond
				}
				return cfg
			}
			m := &model{}
			apply := func(cfg bulkhead.Config) {
				m.max, m.maxWait, m.fair = max(cfg.MaxConcurrentCalls, 0), cfg.MaxWaitDuration, !cfg.DisableFairCallHandling
			}
			cfg := drawConfig(rt)
			apply(cfg)
			b, err := bulkhead.New("model", cfg)
			if err != nil {
				rt.Fatal(err)
			}
			var waiters []*realWaiter
			defer func() { // leave nothing behind in the bubble
				for _, w := range waiters {
					w.cancel()
				}
				synctest.Wait()
			}()

			check := func() {
				synctest.Wait()
				for i, w := range waiters {
					if !w.done {
						select {
						case err := <-w.result:
							w.done = true
							switch {
							case err == nil:
								w.status = granted
							case errors.Is(err, bulkhead.ErrBulkheadFull):
								w.status = full
							case errors.Is(err, context.Canceled):
								w.status = cancelled
							default:
								rt.Fatalf("waiter %d: unexpected error %v", i, err)
							}
						default:
						}
					}
					if w.status != m.status[i] {
						rt.Fatalf("waiter %d: status %d, model %d", i, w.status, m.status[i])
					}
				}
				want := bulkhead.Metrics{
					AvailableConcurrentCalls:  max(0, m.max-m.inFlight),
					MaxAllowedConcurrentCalls: m.max,
					NumberOfWaitingCalls:      len(m.queue),
				}
				if got := b.Metrics(); got != want {
					rt.Fatalf("metrics %+v, model %+v", got, want)
				}
			}

			rt.Repeat(map[string]func(*rapid.T){
				"TryAcquire": func(rt *rapid.T) {
					want := m.free() && (len(m.queue) == 0 || !m.fair)
					if got := b.TryAcquire(); got != want {
						rt.Fatalf("TryAcquire %v, model %v", got, want)
					}
					if want {
						m.inFlight++
					}
					check()
				},
				"Release": func(rt *rapid.T) {
					if rapid.Bool().Draw(rt, "withEvent") {
						b.Release()
					} else {
						b.ReleasePermission()
					}
					if m.inFlight > 0 {
						m.inFlight--
						m.grant()
					}
					check()
				},
				"ChangeConfig": func(rt *rapid.T) {
					// The waiters already queued keep their deadlines; later ones use the new
					// MaxWaitDuration and fairness.
					cfg := drawConfig(rt)
					if err := b.ChangeConfig(cfg); err != nil {
						rt.Fatal(err)
					}
					apply(cfg)
					m.grant()
					check()
				},
				"Acquire": func(rt *rapid.T) {
					ctx, cancel := context.WithCancel(context.Background())
					w := &realWaiter{cancel: cancel, result: make(chan error, 1)}
					waiters = append(waiters, w)
					go func() { w.result <- b.Acquire(ctx) }()
					m.deadline = append(m.deadline, m.now+m.maxWait)
					switch {
					case len(m.queue) == 0 && m.free():
						m.status = append(m.status, granted)
						m.inFlight++
					case m.maxWait == 0:
						m.status = append(m.status, full)
					default:
						m.status = append(m.status, waiting)
						m.queue = append(m.queue, len(m.status)-1)
					}
					check()
				},
				"Cancel": func(rt *rapid.T) {
					if len(waiters) == 0 {
						rt.Skip("no waiter")
					}
					i := rapid.IntRange(0, len(waiters)-1).Draw(rt, "waiter")
					waiters[i].cancel()
					if m.status[i] == waiting {
						m.status[i] = cancelled
						m.queue = slices.DeleteFunc(m.queue, func(j int) bool { return j == i })
					}
					check()
				},
				"Sleep": func(rt *rapid.T) {
					d := time.Duration(rapid.IntRange(1, 60).Draw(rt, "ms")) * time.Millisecond
					time.Sleep(d)
					m.now += d
					m.queue = slices.DeleteFunc(m.queue, func(j int) bool {
						if m.deadline[j] <= m.now {
							m.status[j] = full
							return true
						}
						return false
					})
					check()
				},
			})
		})
	})
}

// TestPropertyNegativesOtherThanTheConstantAreRefused: NoConcurrentCalls is the only negative
// MaxConcurrentCalls New and ChangeConfig accept; any other, −1 ("unlimited" in much Go code)
// included, is refused with the field's range and the constant, and leaves a bulkhead as it was.
func TestPropertyNegativesOtherThanTheConstantAreRefused(t *testing.T) {
	b, err := bulkhead.New("inventory", bulkhead.Config{MaxConcurrentCalls: 3})
	require.NoError(t, err)
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.OneOf(rapid.Just(-1), rapid.IntRange(bulkhead.NoConcurrentCalls+1, -1)).Draw(t, "n")
		want := fmt.Sprintf("bulkhead: MaxConcurrentCalls must be in [1, 2147483647] or NoConcurrentCalls (which refuses every call; a bulkhead has no unlimited size), got %d", n)
		_, err := bulkhead.New("inventory", bulkhead.Config{MaxConcurrentCalls: n})
		require.EqualError(t, err, want)
		require.EqualError(t, b.ChangeConfig(bulkhead.Config{MaxConcurrentCalls: n}), want)
		require.Equal(t, 3, b.Config().MaxConcurrentCalls)
	})
	none, err := bulkhead.New("inventory", bulkhead.Config{MaxConcurrentCalls: bulkhead.NoConcurrentCalls})
	require.NoError(t, err)
	again, err := bulkhead.New("inventory", none.Config())
	require.NoError(t, err)
	assert.Equal(t, bulkhead.NoConcurrentCalls, again.Config().MaxConcurrentCalls)
	assert.False(t, again.TryAcquire())
}
