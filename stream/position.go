package stream

import (
	"errors"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/internal/engine"
)

// PositionWatermark is a commit watermark over positions the user names instead of a count of
// elements: each element's partition K and position P within it, a Kafka topic partition and
// offset, a Redis Streams key and entry ID. Load returns, per partition, the position of the
// last element below which everything of that partition was delivered and acknowledged, so a
// consumer commits it (for Kafka, the offset after it) without keeping its own map from
// Result.Index to offset. It is built on a Watermark: give Watermark() to the operator with
// CommitWatermark, and acknowledge each Result with Ack(r.Index, r.In).
//
// Within a partition positions must grow in input order, as a log's offsets and a stream's
// entry IDs do: the position reported is that of the partition's last element among those
// below the count watermark (Watermark.Load), all of which are done. It is conservative: a
// partition whose later elements are done while an element of another partition before them
// is not stays at its last position below that element (the Window bounds how far behind it
// is). A partition appears in Load's
// map once one of its elements is below the watermark. Make one with NewPositionWatermark or
// NewPartitionWatermark; its methods are safe for concurrent use. A nil or zero PositionWatermark
// does nothing: Ack is ignored, Load returns an empty map, and CommitWatermark refuses its
// Watermark with an error. Resilience4j has no
// counterpart.
type PositionWatermark[V any, K comparable, P any] struct {
	w      *Watermark
	ps     *engine.Positions[V, K, P] // nil for the zero one and one made with a nil function
	nilPos bool                       // made with a nil function
}

// NewPartitionWatermark returns a PositionWatermark reading each element's partition and its
// position within it with pos. A nil pos gives a PositionWatermark that acts as the zero one
// (see PositionWatermark: CommitWatermark refuses its Watermark, Ack does nothing) and whose
// Err returns levee.ErrNilCall.
func NewPartitionWatermark[V any, K comparable, P any](pos func(V) (partition K, position P)) *PositionWatermark[V, K, P] {
	if pos == nil {
		return &PositionWatermark[V, K, P]{nilPos: true}
	}
	ps := engine.NewPositions(pos)
	return &PositionWatermark[V, K, P]{w: &Watermark{w: ps.W}, ps: ps}
}

// NewPositionWatermark returns a PositionWatermark over positions without partitions (one
// Redis stream, one queue), reading each element's position with pos; read it with Position.
// A nil pos is NewPartitionWatermark's.
func NewPositionWatermark[V any, P any](pos func(V) P) *PositionWatermark[V, struct{}, P] {
	if pos == nil {
		return NewPartitionWatermark[V, struct{}, P](nil)
	}
	return NewPartitionWatermark(func(v V) (struct{}, P) { return struct{}{}, pos(v) })
}

// Watermark returns the count watermark this one is built on, to give to the operator with
// CommitWatermark. Acknowledge through the PositionWatermark's Ack, not the Watermark's. For
// a nil or zero PositionWatermark, or one made with a nil function, it returns a zero
// Watermark, which CommitWatermark refuses with an error: the operator does not start.
func (w *PositionWatermark[V, K, P]) Watermark() *Watermark {
	if w == nil || w.ps == nil {
		return &Watermark{invalid: errNoPositions(w)}
	}
	return w.w
}

// Ack acknowledges one Result, received and handled by the consumer, with its Index and its
// element (r.Index, r.In), in any order, once per Result, as Watermark.Ack. It calls the
// position function with in, once.
//
// A panic in the position function, or a partition it returns that Go cannot hash (K an
// interface type holding a slice, say), is recovered, and a partition not equal to itself (a
// NaN) is refused, since no Load could find its positions again: the Result counts as not
// acknowledged, so the watermark never moves past its element (as past an element cut by a
// cancellation), and Err returns the panic as a *levee.PanicError, or ErrPartitionNotEqual. Ack does nothing on a nil or zero PositionWatermark,
// or one made with a nil function.
func (w *PositionWatermark[V, K, P]) Ack(index int, in V) {
	if w == nil || w.ps == nil {
		return
	}
	w.ps.Ack(index, in)
}

// Err returns what keeps the watermark from serving: levee.ErrNilCall for a PositionWatermark
// made with a nil function, or, once the position function has panicked in Ack or returned a
// NaN partition, the first such panic as a *levee.PanicError or an error matching
// ErrPartitionNotEqual (the watermark then stays below that element for good). It
// returns nil otherwise, and on a nil or zero PositionWatermark, whose methods do nothing.
func (w *PositionWatermark[V, K, P]) Err() error {
	switch {
	case w == nil:
		return nil
	case w.nilPos:
		return levee.ErrNilCall
	case w.ps == nil:
		return nil
	}
	return w.ps.Err()
}

// Load returns, for each partition with an element below the watermark, the position of its
// last such element: every element of the partition up to it was delivered and acknowledged.
// The map is the caller's. Positions never go back. On a nil or zero PositionWatermark, or one
// made with a nil function, it returns an empty map.
func (w *PositionWatermark[V, K, P]) Load() map[K]P {
	if w == nil || w.ps == nil {
		return map[K]P{}
	}
	return w.ps.Load()
}

// Position is Load for a PositionWatermark without partitions (NewPositionWatermark): the
// position of the last element below the watermark, and false while there is none (always, on
// a nil or zero PositionWatermark, or one made with a nil function).
func (w *PositionWatermark[V, K, P]) Position() (P, bool) {
	var zero K
	p, ok := w.Load()[zero]
	return p, ok
}

// errNoPositions is the error CommitWatermark gives for the Watermark of w, a PositionWatermark
// that has none.
func errNoPositions[V any, K comparable, P any](w *PositionWatermark[V, K, P]) error {
	if w != nil && w.nilPos {
		return errors.New("CommitWatermark needs the Watermark of a PositionWatermark with a position function, got one made with a nil function")
	}
	return errors.New("CommitWatermark needs the Watermark of a PositionWatermark from NewPositionWatermark or NewPartitionWatermark, got a nil or zero PositionWatermark")
}

// ErrPartitionNotEqual is matched by PositionWatermark.Err once the position function
// returned a partition not equal to itself (a NaN float, or a struct or interface holding
// one): it equals no partition, so its positions could never be reported; its element counts
// as not acknowledged.
var ErrPartitionNotEqual = engine.ErrPartitionNotEqual
