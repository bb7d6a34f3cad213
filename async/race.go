package async

import (
	"context"
	"errors"

	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/reject"
	"github.com/levee-go/levee/internal/safe"
)

// race runs attempts of a call concurrently until one succeeds live; FirstSuccess and Hedge
// decide when to start them. Only the goroutine that created the race uses its fields; the
// attempts talk to it through results.
type race[T any] struct {
	ctx     context.Context // the caller's context
	actx    context.Context // the attempts' context, cancelled when the race is decided
	cancel  context.CancelFunc
	results chan attemptResult[T] // buffered so that attempts rarely wait to report; see newRace
	running int
	started int
	errs    []error           // the failures, by attempt index, one entry per attempt started
	answer  *attemptResult[T] // the fallback answer of the lowest attempt index so far
	exec    func(ctx context.Context, i int) Result[T]
}

type attemptResult[T any] struct {
	i int
	Result[T]
}

// newRace returns a race of at most max attempts. Nothing is sized by max beyond a bound:
// Hedge's maxHedges may be huge (hedge until the context ends). The buffer of results is a
// convenience, not a need: the race's goroutine receives until no attempt is running, so an
// attempt that finds it full waits a moment, never for ever.
func newRace[T any](ctx context.Context, max int, exec func(context.Context, int) Result[T]) *race[T] {
	ctx = safe.Ctx(ctx)
	actx, cancel := context.WithCancel(ctx)
	return &race[T]{
		ctx: ctx, actx: actx, cancel: cancel,
		results: make(chan attemptResult[T], min(max, maxRaceBuffer)),
		exec:    exec,
	}
}

// maxRaceBuffer bounds the buffer of a race's results.
const maxRaceBuffer = 64

// start runs attempt i on a goroutine of its own.
func (r *race[T]) start(i int) {
	r.running++
	r.started++
	r.errs = append(r.errs, nil)
	go func() {
		res := Result[T]{Err: errExited}
		defer func() {
			if x := recover(); x != nil {
				res = Result[T]{Err: safe.NewPanicError(x)}
			}
			r.results <- attemptResult[T]{i: i, Result: res}
		}()
		res = r.exec(r.actx, i)
	}()
}

// live reports whether a is a success of the call itself, not a fallback's answer.
func live[T any](a attemptResult[T]) bool { return a.Err == nil && !a.Outcome.Fallback }

// cause returns the error a failed attempt failed with, the one its fallback answered
// included (nil when the fallback replaced a result).
func cause[T any](a attemptResult[T]) error {
	if a.Outcome.Fallback {
		return a.Outcome.Cause
	}
	return a.Err
}

// rejected reports whether the attempt was refused by a levee pattern before it ran.
func rejected[T any](a attemptResult[T]) bool { return reject.Is(cause(a)) }

// receive waits for the next attempt to finish. ok is false when the caller's context ended
// first: an attempt that had already reported is received even if the context has ended
// since, so that a success is never dropped for a cancellation that came after it.
func (r *race[T]) receive() (a attemptResult[T], ok bool) {
	select {
	case a = <-r.results:
		r.running--
		return a, true
	default:
	}
	select {
	case a = <-r.results:
		r.running--
		return a, true
	case <-r.ctx.Done():
		select { // a result that arrived together with the cancellation
		case a = <-r.results:
			r.running--
			return a, true
		default:
			return a, false
		}
	}
}

// note keeps a failed attempt for the verdict: its error, or its fallback answer.
func (r *race[T]) note(a attemptResult[T]) {
	if a.Outcome.Fallback && a.Err == nil {
		if r.answer == nil || a.i < r.answer.i {
			r.answer = &a
		}
		return
	}
	r.errs[a.i] = a.Err
}

// finish cancels the attempts still running and waits for them to return, so that every
// permit they took is back when the race's caller returns.
func (r *race[T]) finish() {
	r.cancel()
	for ; r.running > 0; r.running-- {
		<-r.results
	}
}

// won ends the race with a.
func (r *race[T]) won(a attemptResult[T]) (T, fallback.Outcome, error) {
	r.finish()
	return a.Value, a.Outcome, a.Err
}

// abandoned ends the race because the caller's context ended.
func (r *race[T]) abandoned() (T, fallback.Outcome, error) {
	r.finish()
	var zero T
	return zero, fallback.Outcome{}, r.ctx.Err()
}

// lost ends a race no attempt won: the fallback answer of the lowest attempt index if there
// is one, else every failure, in attempt order (a single one as it is).
func (r *race[T]) lost() (T, fallback.Outcome, error) {
	r.finish()
	if r.answer != nil {
		return r.answer.Value, r.answer.Outcome, nil
	}
	var zero T
	var errs []error
	for _, err := range r.errs {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 1 {
		return zero, fallback.Outcome{}, errs[0]
	}
	return zero, fallback.Outcome{}, errors.Join(errs...)
}
