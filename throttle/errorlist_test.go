package throttle_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/throttle"
)

type statusError struct{ code int }

func (e *statusError) Error() string { return "status" }

// TestRecordErrorsTypeMarkerMatches: an entry made by levee.ErrorType matches every error of
// its type, as in every other pattern's error list.
func TestRecordErrorsTypeMarkerMatches(t *testing.T) {
	th := newThrottler(t, throttle.Config{RecordErrors: []error{levee.ErrorType[*statusError]()}})
	_, err := throttle.Execute(context.Background(), th, func(context.Context) (int, error) {
		return 0, &statusError{code: 503}
	})
	require.Error(t, err)
	m := th.Metrics()
	assert.Equal(t, uint64(1), m.Requests)
	assert.Equal(t, uint64(0), m.Accepts, "a *statusError is listed by type: the backend rejected it")
}

// TestRecordErrorsRefusesEntriesThatCannotMatch: a levee rejection never counts, so listing
// one could never match; nor could a typed nil. New refuses both, naming the field.
func TestRecordErrorsRefusesEntriesThatCannotMatch(t *testing.T) {
	_, err := throttle.New("x", throttle.Config{RecordErrors: []error{bulkhead.ErrBulkheadFull}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "throttle: RecordErrors[0] must not be a levee rejection")

	_, err = throttle.New("x", throttle.Config{RecordErrors: []error{(*statusError)(nil)}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "throttle: RecordErrors[0] is a nil *throttle_test.statusError")

	_, err = throttle.New("x", throttle.Config{RecordErrors: []error{nil}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "throttle: RecordErrors[0] is nil")
}
