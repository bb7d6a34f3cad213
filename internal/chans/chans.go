// Package chans holds the context-aware channel operations of levee's stream stages (package
// stream and the rxgo operators module), so both follow one rule: try the operation without
// blocking first, and select on the context's done channel only when it would block. A ready
// channel then costs one channel operation, not a select over two (see the bench module).
package chans

// Receive takes the next element of in. ok is false when in is closed or done is.
func Receive[V any](in <-chan V, done <-chan struct{}) (v V, ok bool) {
	select {
	case v, ok = <-in:
		return v, ok
	default:
	}
	select {
	case v, ok = <-in:
	case <-done:
	}
	return v, ok
}

// Send delivers v on out and reports whether it did; it gives up when done is closed first.
// A done channel closed before Send is called wins over an out that is ready: a consumer that
// cancelled gets nothing more, even when it is still reading or out has room.
func Send[T any](out chan<- T, v T, done <-chan struct{}) bool {
	return SendOr(out, v, done, nil) // a nil channel is never ready: it watches done alone
}

// SendOr is Send that gives up when either of two done channels is closed first: an
// operator's own done channel and that of the consumer's context it derives from. Package
// context cancels a context derived from one of a type of the caller's own from a goroutine
// of its own, a moment after that context is done; until then only the consumer's channel
// tells, and a send that watched the derived one alone would still deliver.
func SendOr[T any](out chan<- T, v T, done, also <-chan struct{}) bool {
	if Closed(done) || Closed(also) {
		return false
	}
	select {
	case out <- v:
		return true
	default:
	}
	select {
	case out <- v:
		return true
	case <-done:
		return false
	case <-also:
		return false
	}
}

// Closed reports whether done is closed, without blocking.
func Closed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}
