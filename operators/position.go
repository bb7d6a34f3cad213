package operators

import "github.com/levee-go/levee/internal/engine"

// PositionWatermark is a commit watermark over positions the user names instead of a count of
// elements: each element's partition K and position P within it, a Kafka topic partition and
// offset, a Redis Streams key and entry ID. Load returns, per partition, the position of the
// last element below which everything of that partition was delivered and acknowledged, so a
// consumer commits it (for Kafka, the offset after it) without keeping its own map from
// Result.Index of MapResults to offset. It is built on a Watermark: give Watermark() to the operator with
// CommitWatermark, and acknowledge each Result of MapResults with Ack(r.Index, r.In).
//
// Within a partition positions must grow in input order, as a log's offsets and a stream's
// entry IDs do: the position reported is that of the partition's last element among those
// below the count watermark (Watermark.Load), all of which are done. It is conservative: a
// partition whose later elements are done while an element of another partition before them
// is not stays at its last position below that element (the Window bounds how far behind it
// is). A partition appears in Load's
// map once one of its elements is below the watermark. Make one with NewPositionWatermark or
// NewPartitionWatermark; its methods are safe for concurrent use. Resilience4j has no
// counterpart.
type PositionWatermark[V any, K comparable, P any] struct {
	w  *Watermark
	ps *engine.Positions[V, K, P]
}

// NewPartitionWatermark returns a PositionWatermark reading each element's partition and its
// position within it with pos, which must not be nil.
func NewPartitionWatermark[V any, K comparable, P any](pos func(V) (partition K, position P)) *PositionWatermark[V, K, P] {
	ps := engine.NewPositions(pos)
	return &PositionWatermark[V, K, P]{w: &Watermark{w: ps.W}, ps: ps}
}

// NewPositionWatermark returns a PositionWatermark over positions without partitions (one
// Redis stream, one queue), reading each element's position with pos, which must not be nil;
// read it with Position.
func NewPositionWatermark[V any, P any](pos func(V) P) *PositionWatermark[V, struct{}, P] {
	return NewPartitionWatermark(func(v V) (struct{}, P) { return struct{}{}, pos(v) })
}

// Watermark returns the count watermark this one is built on, to give to the operator with
// CommitWatermark. Acknowledge through the PositionWatermark's Ack, not the Watermark's.
func (w *PositionWatermark[V, K, P]) Watermark() *Watermark { return w.w }

// Ack acknowledges one Result, received and handled by the consumer, with its Index and its
// element (r.Index, r.In), in any order, once per Result, as Watermark.Ack.
func (w *PositionWatermark[V, K, P]) Ack(index int, in V) { w.ps.Ack(index, in) }

// Load returns, for each partition with an element below the watermark, the position of its
// last such element: every element of the partition up to it was delivered and acknowledged.
// The map is the caller's. Positions never go back.
func (w *PositionWatermark[V, K, P]) Load() map[K]P { return w.ps.Load() }

// Position is Load for a PositionWatermark without partitions (NewPositionWatermark): the
// position of the last element below the watermark, and false while there is none.
func (w *PositionWatermark[V, K, P]) Position() (P, bool) {
	var zero K
	p, ok := w.ps.Load()[zero]
	return p, ok
}
