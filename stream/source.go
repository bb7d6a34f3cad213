package stream

import (
	"context"
	"errors"

	"github.com/levee-go/levee/internal/chans"
)

// Source is a lazy stream: a function that produces the stream's elements by calling emit
// for each, in order, and returns nil when the stream ended cleanly or the error it ended
// with. Nothing happens until Subscribe calls it, inside the guarded execution, so an error
// returned or a panic raised while the stream is being set up is a failure of the stream like
// any other: the patterns record it, retry may call the Source again, and the fallback
// source answers it. (Reactor's pitfall of a method that throws before returning its Mono,
// which skips the fallback, cannot happen.)
//
// emit blocks until the consumer has taken the element (backpressure) and returns an error
// when the element cannot be delivered: the consumer cancelled, a time limit ended the
// attempt, or retry ended it to start over. The Source must then stop and return, with that
// error or any other: an attempt ended from outside has the outcome of what ended it, whatever
// the Source returns. ctx is cancelled when the attempt ends, however it ends; everything the
// Source starts must stop with it. emit is safe for concurrent use; once the Source has
// returned, emit refuses every element.
//
// A Source is called once per attempt, so a Source that retry may restart must be able to
// start over (open the stream again); the elements a failed attempt emitted have already
// been delivered, and Item.Attempt tells them apart.
type Source[T any] func(ctx context.Context, emit func(T) error) error

// FromChan adapts the lazy channel source of levee's design, a function that builds a
// stream and returns its channel, to a Source. The channel is opened by calling open inside
// the guarded execution, once per attempt; an error from open (or a panic in it) fails the
// attempt without an element. The stream ends cleanly when the channel is closed; it has no
// way to end with an error, for which Source itself serves.
//
// open receives the attempt's context and should make whatever feeds the channel stop when
// that context is done: FromChan stops reading at the end of the attempt, and a feeder that
// ignores the context would block for ever. A nil channel fails the attempt with
// ErrNilChannel; a nil open makes Subscribe return levee.ErrNilCall.
func FromChan[T any](open func(ctx context.Context) (<-chan T, error)) Source[T] {
	if open == nil {
		return nil
	}
	return func(ctx context.Context, emit func(T) error) error {
		ch, err := open(ctx)
		if err != nil {
			return err
		}
		if ch == nil {
			return ErrNilChannel
		}
		done := ctx.Done()
		for {
			v, ok := chans.Receive(ch, done)
			if !ok {
				if err := ctx.Err(); err != nil {
					return err
				}
				return nil
			}
			if err := emit(v); err != nil {
				return err
			}
		}
	}
}

// ErrNilChannel is the error of an attempt whose FromChan source opened a nil channel.
var ErrNilChannel = errors.New("stream: source opened a nil channel")

// Item is one element of a guarded subscription, or its end with an error.
type Item[T any] struct {
	// Value is the element; zero on the final item of a failed stream.
	Value T
	// Err is set only on the last item, when the stream ended with an error: the rejection
	// of a pattern, the Source's error (wrapped by retry when its attempts ran out), a
	// *timelimiter.TimeoutError, or a *fallback.Error when the fallback source failed too.
	// A stream that ended cleanly, or whose consumer cancelled, has no such item.
	Err error
	// Attempt is the attempt that emitted Value, from 1; 0 for elements of the fallback
	// source. Elements of a failed attempt have already been delivered when retry starts the
	// next one, which may emit them again.
	Attempt int
	// Fallback is true for the elements emitted by the fallback source.
	Fallback bool
}
