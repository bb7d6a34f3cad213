package operators

// The channel helpers try the operation without blocking first and select on the context's
// done channel only when it would block: a ready channel then costs one channel operation,
// not a select over two.

// receive takes the next value of in. ok is false when in is closed or done is.
func receive[V any](in <-chan V, done <-chan struct{}) (v V, ok bool) {
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

// send delivers v on out and reports whether it did; it gives up when done is closed first.
func send[T any](out chan<- T, v T, done <-chan struct{}) bool {
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
	}
}

// closed reports whether done is closed, without blocking.
func closed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}
