package bulkhead

import "errors"

// ErrBulkheadFull is the sentinel every rejection by a bulkhead matches with errors.Is, as
// Resilience4j's BulkheadFullException. levee.IsRejection reports true for it: the call never
// reached the dependency, so by default a circuit breaker does not count it and Retry does not
// retry it.
var ErrBulkheadFull error = &rejection{"bulkhead: bulkhead is full"}

// ErrNilBulkhead is returned, instead of a panic, by Execute, Acquire and ChangeConfig when the
// bulkhead is nil. The other methods of a nil *Bulkhead do nothing and return zero values.
var ErrNilBulkhead = errors.New("bulkhead: nil or zero *Bulkhead (create one with bulkhead.New)")

// BulkheadFullError is the error Acquire and Execute return when no permit came within
// MaxWaitDuration. Name is the bulkhead's name. It matches ErrBulkheadFull with errors.Is.
type BulkheadFullError struct {
	Name string
}

// Error returns "bulkhead: Bulkhead '<name>' is full and does not
// permit further calls".
func (e *BulkheadFullError) Error() string {
	return "bulkhead: Bulkhead '" + e.Name + "' is full and does not permit further calls"
}

// Is reports whether target is ErrBulkheadFull.
func (e *BulkheadFullError) Is(target error) bool { return target == ErrBulkheadFull }

// LeveeRejection marks the error as a levee rejection (see levee.IsRejection).
func (e *BulkheadFullError) LeveeRejection() bool { return true }

// rejection is the type of the sentinel, so that the sentinel itself is a levee rejection.
type rejection struct{ msg string }

func (r *rejection) Error() string        { return r.msg }
func (r *rejection) LeveeRejection() bool { return true }
