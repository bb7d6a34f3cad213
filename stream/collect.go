package stream

import "context"

// Collect reads items, the output of Subscribe, until it closes and returns the values in
// order, and the error of the last item when the stream ended with one: the stream package's
// counterpart of the operators module's Collect. When ctx ends first it returns the values so
// far and ctx.Err(), so a cancelled stream is never taken for a complete one (after the error
// item, ctx ending stops the wait for the close and the error is returned); give Subscribe
// the same ctx (or one it derives from), so that its output closes too and nothing is left
// blocked on a send. A nil ctx means context.Background().
func Collect[T any](ctx context.Context, items <-chan Item[T]) ([]T, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	var out []T
	for {
		select {
		case it, ok := <-items:
			if !ok {
				if err := ctx.Err(); err != nil {
					return out, err // Subscribe closes its output at a cancellation too
				}
				return out, nil
			}
			if it.Err != nil {
				drainUntil(ctx, items) // the error is the last item: wait for the close, or ctx
				return out, it.Err
			}
			out = append(out, it.Value)
		case <-ctx.Done():
			return out, ctx.Err()
		}
	}
}

// drainUntil reads items until it closes or ctx ends.
func drainUntil[T any](ctx context.Context, items <-chan Item[T]) {
	for {
		select {
		case _, ok := <-items:
			if !ok {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}
