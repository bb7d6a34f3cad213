package circuitbreaker

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// sentinel is the type of the package's sentinel errors. ErrCallNotPermitted is itself a levee
// rejection, so that a bare sentinel is recognised like the error it stands for.
type sentinel struct {
	msg       string
	rejection bool
}

func (s *sentinel) Error() string { return s.msg }

func (s *sentinel) LeveeRejection() bool { return s.rejection }

var (
	// ErrCallNotPermitted is matched (errors.Is) by every *CallNotPermittedError: the breaker
	// refused the call and did not run it, as Resilience4j's CallNotPermittedException.
	ErrCallNotPermitted error = &sentinel{msg: "circuitbreaker: call not permitted", rejection: true}

	// ErrIllegalStateTransition is matched by every *IllegalStateTransitionError.
	ErrIllegalStateTransition error = &sentinel{msg: "circuitbreaker: illegal state transition"}

	// ErrResultRecordedAsFailure is matched by every *ResultRecordedAsFailureError.
	ErrResultRecordedAsFailure error = &sentinel{msg: "circuitbreaker: result recorded as failure"}

	// ErrNilCircuitBreaker is returned, instead of a panic, by Execute, Acquire and the
	// TransitionToXxxState methods when the *CircuitBreaker is nil. The other methods of a nil
	// *CircuitBreaker do nothing and return zero values.
	ErrNilCircuitBreaker = errors.New("circuitbreaker: nil or zero *CircuitBreaker (create one with circuitbreaker.New)")
)

// CallNotPermittedError is the error of a call the breaker refused: OPEN before its wait
// ended, HALF_OPEN with every probe permit taken, or FORCED_OPEN. It matches
// ErrCallNotPermitted and is a levee rejection (levee.IsRejection), so retry does not retry it
// and an outer breaker does not record it unless configured to. A breaker returns one value per
// state, built by New, so that refusing allocates nothing: read it, do not modify it.
type CallNotPermittedError struct {
	Name  string // the breaker's name
	State State  // the state that refused the call
}

// Error returns Resilience4j's message:
// "circuitbreaker: CircuitBreaker 'payment' is OPEN and does not permit further calls".
func (e *CallNotPermittedError) Error() string {
	return fmt.Sprintf("circuitbreaker: CircuitBreaker '%s' is %v and does not permit further calls", e.Name, e.State)
}

// Is reports whether target is ErrCallNotPermitted.
func (e *CallNotPermittedError) Is(target error) bool { return target == ErrCallNotPermitted }

// LeveeRejection marks the error as a rejection by a levee pattern.
func (e *CallNotPermittedError) LeveeRejection() bool { return true }

// IllegalStateTransitionError is returned by a TransitionToXxxState method whose move the
// transition table forbids (CLOSED→HALF_OPEN, METRICS_ONLY→OPEN, METRICS_ONLY→HALF_OPEN), as
// Resilience4j's IllegalStateTransitionException. The state is left unchanged.
type IllegalStateTransitionError struct {
	Name     string
	From, To State
}

// Error returns Resilience4j's message: "circuitbreaker: CircuitBreaker 'payment' tried an
// illegal state transition from CLOSED to HALF_OPEN".
func (e *IllegalStateTransitionError) Error() string {
	return fmt.Sprintf("circuitbreaker: CircuitBreaker '%s' tried an illegal state transition from %v to %v", e.Name, e.From, e.To)
}

// Is reports whether target is ErrIllegalStateTransition.
func (e *IllegalStateTransitionError) Is(target error) bool {
	return target == ErrIllegalStateTransition
}

// ResultRecordedAsFailureError is the error of the ERROR event published when
// RecordResultPredicate turns a returned value into a failure, as Resilience4j's
// ResultRecordedAsFailureException. The caller never receives it: Execute returns the value.
type ResultRecordedAsFailureError struct {
	Name   string
	Result any
}

// Error returns Resilience4j's message: "circuitbreaker: CircuitBreaker 'payment' has recorded
// '503' as a failure". A result whose %v form is longer than 64 characters is named by its
// type instead ("'*http.Response'"): a whole response in every log line is noise. Result
// itself keeps the value.
func (e *ResultRecordedAsFailureError) Error() string {
	result := fmt.Sprintf("%v", e.Result)
	if utf8.RuneCountInString(result) > maxResultText {
		result = fmt.Sprintf("%T", e.Result)
	}
	return "circuitbreaker: CircuitBreaker '" + e.Name + "' has recorded '" + result + "' as a failure"
}

// maxResultText is the longest %v form of a result that ResultRecordedAsFailureError prints.
const maxResultText = 64

// Is reports whether target is ErrResultRecordedAsFailure.
func (e *ResultRecordedAsFailureError) Is(target error) bool {
	return target == ErrResultRecordedAsFailure
}
