package circuitbreaker_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
	cb "github.com/levee-go/levee/circuitbreaker"
)

var errBadRequest = errors.New("bad request")

// breakerOverFullBulkhead runs 10 concurrent calls to a healthy dependency through a breaker in
// front of a 2-permit bulkhead that does not wait. A barrier holds the 2 admitted calls until
// the 8 others have been refused, so the figures are exact. It returns the breaker's events
// by type and how many calls were refused by the bulkhead.
func breakerOverFullBulkhead(t *testing.T, b *cb.CircuitBreaker) (types map[cb.EventType]int, refused int) {
	t.Helper()
	bh, err := bulkhead.New("inventory", bulkhead.Config{MaxConcurrentCalls: 2})
	require.NoError(t, err)
	ev := record(b)
	entered, release := make(chan struct{}, 2), make(chan struct{})
	results := make(chan error, 10)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			_, err := cb.Execute(context.Background(), b, func(ctx context.Context) (string, error) {
				return bulkhead.Execute(ctx, bh, func(context.Context) (string, error) {
					entered <- struct{}{}
					<-release // the dependency is healthy, and slow enough to fill the bulkhead
					return "ok", nil
				})
			})
			results <- err
		})
	}
	<-entered
	<-entered
	for range 8 {
		err := <-results
		require.ErrorIs(t, err, bulkhead.ErrBulkheadFull)
		refused++
	}
	close(release)
	wg.Wait()
	close(results)
	for err := range results {
		require.NoError(t, err)
	}
	types = map[cb.EventType]int{}
	for _, e := range ev.list() {
		types[e.Type]++
	}
	return types, refused
}

func scenarioConfig() cb.Config {
	return cb.Config{SlidingWindowSize: 10, MinimumNumberOfCalls: 10, FailureRateThreshold: 50}
}

// TestPitfallA1_CatchAllRecordPredicateNeverSeesRejections: written the natural Go way
// ("everything except a bad request"), a record predicate does not count the 8 rejections of a
// full inner bulkhead: the breaker stays CLOSED with 2 successes and no failure.
func TestPitfallA1_CatchAllRecordPredicateNeverSeesRejections(t *testing.T) {
	cfg := scenarioConfig()
	var seen []error
	var mu sync.Mutex
	cfg.RecordErrorPredicate = func(err error) bool {
		mu.Lock()
		seen = append(seen, err)
		mu.Unlock()
		return !errors.Is(err, errBadRequest)
	}
	b := mustNew(t, cfg)
	types, refused := breakerOverFullBulkhead(t, b)
	assert.Equal(t, 8, refused)
	assert.Equal(t, cb.Closed, b.State())
	assert.Equal(t, counts{buffered: 2, successful: 2}, countsOf(b.Metrics()))
	assert.Equal(t, map[cb.EventType]int{cb.EventSuccess: 2, cb.EventIgnoredError: 8}, types)
	assert.Empty(t, seen, "the predicate never saw a rejection")
}

// TestPitfallA1_RecordRejectionsCountsThemOnRequest: Resilience4j's behaviour is one line
// away: with RecordRejections naming bulkhead.ErrBulkheadFull the same 8 rejections are
// failures, and with the 2 successes they open the breaker at 80%.
func TestPitfallA1_RecordRejectionsCountsThemOnRequest(t *testing.T) {
	cfg := scenarioConfig()
	cfg.RecordErrorPredicate = func(err error) bool { return !errors.Is(err, errBadRequest) }
	cfg.RecordRejections = []error{bulkhead.ErrBulkheadFull}
	b := mustNew(t, cfg)
	types, refused := breakerOverFullBulkhead(t, b)
	assert.Equal(t, 8, refused)
	assert.Equal(t, cb.Open, b.State())
	m := b.Metrics()
	assert.Equal(t, counts{buffered: 10, failed: 8, successful: 2}, countsOf(m))
	assert.Equal(t, float32(80), m.FailureRate)
	assert.Equal(t, map[cb.EventType]int{cb.EventError: 8, cb.EventSuccess: 2,
		cb.EventFailureRateExceeded: 1, cb.EventStateTransition: 1}, types)
}
