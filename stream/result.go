package stream

import (
	"errors"
	"fmt"
	"time"
)

// Result is the outcome of one guarded call of a per-emission operator.
//
// For Map, each input element yields exactly one Result, until the stream stops early
// (StopOnError, cancellation). Filter yields one for each element kept or failed, none for an
// element its predicate turned down; FlatMap one for each value the call returned, or one
// carrying the error; Batch one for each batch.
type Result[V, R any] struct {
	// Index is the position of In in the operator's input, counted from 0 (for Batch, the
	// position of the batch among the batches). With Unordered, results come out of index
	// order and Index tells where each belongs.
	Index int
	// In is the input element the call was made for (for Batch, the batch).
	In V
	// Value is the call's value, or the fallback's answer. It is meaningful when Err is nil.
	Value R
	// Err is the error the element failed with once every fallback has had its say: the
	// pipeline's error (a rejection, a *retry.MaxRetriesExceededError, a *levee.PanicError,
	// the call's own error...), a *fallback.Error when a fallback could not answer, or with
	// StopOnError a *StoppedError wrapping it.
	Err error
	// Fallback is true when a fallback (the pipeline's or WithFallback) answered instead of
	// the call; Cause is then the error it answered.
	Fallback bool
	Cause    error
	// Paused is the time the element waited under PauseWhileOpen after its own call was
	// refused, up to the retry that was not: the stage's pause, for the element that was held.
	// 0 when its call was not refused; an element that merely waited for another to be let go
	// before its first call (with Concurrency > 1) has 0 too.
	Paused time.Duration
}

// ErrStopped is matched (errors.Is) by the error of the last Result of a stream ended by
// StopOnError.
var ErrStopped = errors.New("stream: stopped at the first failure")

// ErrNilInput is returned by the per-emission operators when their input channel is nil: a
// nil channel never delivers an element, so the stream could never end.
var ErrNilInput = errors.New("stream: nil input channel")

// StoppedError is the error of the element that ended a stream under StopOnError. It names
// the element, matches ErrStopped, and wraps the element's own error, so errors.Is and
// errors.As find both.
type StoppedError[V any] struct {
	Index int   // the element's position in the input, from 0
	In    V     // the element
	Err   error // the element's error
}

// Error reads "stream: stopped at element 3 (order-17): <err>"; on a nil *StoppedError,
// "stream: stopped at the first failure", ErrStopped's text.
func (e *StoppedError[V]) Error() string {
	if e == nil {
		return ErrStopped.Error()
	}
	return fmt.Sprintf("stream: stopped at element %d (%v): %v", e.Index, e.In, e.Err)
}

// Is reports whether target is ErrStopped.
func (e *StoppedError[V]) Is(target error) bool { return target == ErrStopped }

// Unwrap returns the element's own error, nil on a nil *StoppedError.
func (e *StoppedError[V]) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}
