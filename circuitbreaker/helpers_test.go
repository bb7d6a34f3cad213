package circuitbreaker_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	cb "github.com/levee-go/levee/circuitbreaker"
)

var (
	errBoom    = errors.New("boom")
	errInvalid = errors.New("invalid order")
)

func mustNew(t testing.TB, cfg cb.Config) *cb.CircuitBreaker {
	t.Helper()
	b, err := cb.New("test", cfg)
	require.NoError(t, err)
	return b
}

// small is a count-based breaker that evaluates after 4 calls, opens at 50% and lets 2 probes
// through after a 10s wait.
func small() cb.Config {
	return cb.Config{
		SlidingWindowSize:                     4,
		MinimumNumberOfCalls:                  4,
		WaitDurationInOpenState:               10 * time.Second,
		PermittedNumberOfCallsInHalfOpenState: 2,
	}
}

// run executes one call through b that takes d (use inside a synctest bubble for d > 0) and
// returns err.
func run(b *cb.CircuitBreaker, d time.Duration, err error) error {
	_, e := cb.Execute(context.Background(), b, func(context.Context) (int, error) {
		if d > 0 {
			time.Sleep(d)
		}
		return 1, err
	})
	return e
}

func ok(b *cb.CircuitBreaker) error   { return run(b, 0, nil) }
func fail(b *cb.CircuitBreaker) error { return run(b, 0, errBoom) }

// events records a breaker's events.
type events struct {
	mu  sync.Mutex
	all []cb.Event
}

func record(b *cb.CircuitBreaker) *events {
	r := &events{}
	b.Subscribe(func(e cb.Event) {
		r.mu.Lock()
		r.all = append(r.all, e)
		r.mu.Unlock()
	})
	return r
}

func (r *events) types() []cb.EventType {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []cb.EventType{}
	for _, e := range r.all {
		out = append(out, e.Type)
	}
	return out
}

func (r *events) list() []cb.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]cb.Event(nil), r.all...)
}

func (r *events) reset() {
	r.mu.Lock()
	r.all = nil
	r.mu.Unlock()
}

// transitions returns the STATE_TRANSITION events as "FROM>TO" strings.
func (r *events) transitions() []string {
	out := []string{}
	for _, e := range r.list() {
		if e.Type == cb.EventStateTransition {
			out = append(out, e.From.String()+">"+e.To.String())
		}
	}
	return out
}

type counts struct {
	buffered, failed, successful, slow, slowSuccessful, slowFailed, notPermitted int
}

func countsOf(m cb.Metrics) counts {
	return counts{m.NumberOfBufferedCalls, m.NumberOfFailedCalls, m.NumberOfSuccessfulCalls,
		m.NumberOfSlowCalls, m.NumberOfSlowSuccessfulCalls, m.NumberOfSlowFailedCalls, m.NumberOfNotPermittedCalls}
}

// acquire takes a permit from b, failing the test if b refuses.
func acquire(t testing.TB, b *cb.CircuitBreaker) cb.Permit {
	t.Helper()
	p, err := b.Acquire()
	require.NoError(t, err)
	return p
}

// try asks b for one permission and returns its answer; a granted permit is kept, as by a
// call still running.
func try(b *cb.CircuitBreaker) error {
	_, err := b.Acquire()
	return err
}

// report runs one call on the permit API that takes d (inside a synctest bubble for d > 0)
// and reports err with OnError, or success when err is nil.
func report(t testing.TB, b *cb.CircuitBreaker, d time.Duration, err error) {
	t.Helper()
	p := acquire(t, b)
	if d > 0 {
		time.Sleep(d)
	}
	if err != nil {
		p.OnError(err)
	} else {
		p.OnSuccess()
	}
}
