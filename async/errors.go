package async

import (
	"errors"
	"fmt"

	"github.com/levee-go/levee/bulkhead"
)

// ErrNilFuture is what the methods of a nil *Future report instead of panicking.
var ErrNilFuture = errors.New("async: nil or zero *Future (create one with async.Go)")

// ErrNotStarted is matched, with errors.Is, by the error of a fan-out call that was never
// started: its fan-out's context ended, or a FailFast failure stopped the fan-out, before a
// slot (see MaxConcurrency) came free for it. The error also matches the context's error
// (context.Canceled or context.DeadlineExceeded), so code that only asks "was this cancelled?"
// gets the right answer; after a FailFast failure its message names that failure, which it
// does not match (the call itself was refused by nothing).
var ErrNotStarted = errors.New("async: call not started")

// ErrNoCalls is returned by FirstSuccess given no calls: no call can succeed.
var ErrNoCalls = errors.New("async: no calls")

// ErrNilWorkerPool is returned by Submit given a nil *WorkerPool.
var ErrNilWorkerPool = errors.New("async: nil or zero *WorkerPool (create one with async.NewWorkerPool)")

// ErrPoolClosed is returned by Submit once Close or Shutdown has been called, and completes the
// futures of tasks that Close removed from the queue before they started. It is not a
// rejection for overload (see WorkerPoolFullError): the pool is gone, not busy.
var ErrPoolClosed = errors.New("async: worker pool is closed")

// WorkerPoolFullError is the error Submit returns when every worker is busy, the pool has
// MaxThreadPoolSize workers and the queue is full, as Resilience4j's ThreadPoolBulkhead throws
// BulkheadFullException. It matches bulkhead.ErrBulkheadFull with errors.Is, so one check
// covers both kinds of bulkhead, and it is a levee rejection (levee.IsRejection): the task
// never ran.
type WorkerPoolFullError struct {
	// Name is the worker pool's name.
	Name string
}

// Error returns "async: WorkerPool '<name>' is full and does not permit further calls".
func (e *WorkerPoolFullError) Error() string {
	return "async: WorkerPool '" + e.Name + "' is full and does not permit further calls"
}

// Is reports whether target is bulkhead.ErrBulkheadFull.
func (e *WorkerPoolFullError) Is(target error) bool { return target == bulkhead.ErrBulkheadFull }

// LeveeRejection marks the error as a levee rejection (see levee.IsRejection).
func (e *WorkerPoolFullError) LeveeRejection() bool { return true }

// notStartedError is the error of a fan-out call that never started: ErrNotStarted together
// with the context error that stopped the fan-out, and the FailFast failure that ended that
// context, if one did. Only the context error is unwrapped: a call never started was refused
// by nothing, so it must not match the failure's sentinels (bulkhead.ErrBulkheadFull, say).
type notStartedError struct{ cause, stoppedBy error }

func (e *notStartedError) Error() string {
	if e.stoppedBy != nil {
		return fmt.Sprintf("%v: %v: the fan-out stopped at a failure (FailFast): %v", ErrNotStarted, e.cause, e.stoppedBy)
	}
	return fmt.Sprintf("%v: %v", ErrNotStarted, e.cause)
}

// failFastStop is the cause of a fan-out's context cancelled by a FailFast failure.
type failFastStop struct{ err error }

func (e *failFastStop) Error() string           { return "async: fan-out stopped at a failure: " + e.err.Error() }
func (e *notStartedError) Is(target error) bool { return target == ErrNotStarted }
func (e *notStartedError) Unwrap() error        { return e.cause }

// errExited is the result of a call that left its goroutine by runtime.Goexit (t.FailNow in a
// test, say) instead of returning: the future must still complete.
var errExited = errors.New("async: call exited without returning")
