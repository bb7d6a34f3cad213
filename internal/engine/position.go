package engine

import (
	"errors"
	"fmt"
	"sync"

	"github.com/levee-go/levee/internal/safe"
)

// Positions keeps a commit watermark over positions the user names: each element's partition
// K and position P within it (a Kafka partition and offset, a Redis stream and entry ID). It
// wraps a Watermark over input indexes: the elements below that watermark are all done, so for
// each partition the position of its last element below the watermark is one below which
// everything of that partition was delivered (positions grow in input order within a
// partition, as a log's offsets do).
type Positions[V any, K comparable, P any] struct {
	W   *Watermark
	pos func(V) (K, P)

	mu     sync.Mutex
	seen   map[int]partPos[K, P] // acknowledged elements at or above folded
	folded int                   // elements below it are in done
	done   map[K]P               // per partition, the position of its last element below folded
	err    error                 // the first panic of pos, as a *safe.PanicError
}

type partPos[K comparable, P any] struct {
	k K
	p P
}

// NewPositions returns Positions reading each element's partition and position with pos,
// which must not be nil.
func NewPositions[V any, K comparable, P any](pos func(V) (K, P)) *Positions[V, K, P] {
	return &Positions[V, K, P]{W: NewWatermark(), pos: pos, seen: make(map[int]partPos[K, P]), done: make(map[K]P)}
}

// Ack acknowledges the Result of index for the element in, as Watermark.Ack, and notes in's
// position. It calls pos once, outside every lock; a panic in it, or a partition Go cannot
// hash (an interface holding a slice), is recovered, and a partition not equal to itself (a
// NaN) refused: the Result counts as not acknowledged, so the watermark never moves past its
// element, and Err returns the first such panic (or ErrPartitionNotEqual).
func (ps *Positions[V, K, P]) Ack(index int, in V) {
	k, p, ok := ps.read(in)
	if !ok {
		return
	}
	ps.mu.Lock()
	if index >= ps.folded {
		ps.seen[index] = partPos[K, P]{k, p}
	}
	ps.mu.Unlock()
	ps.W.Ack(index)
}

// read calls pos with in, turning a panic into Err's error.
func (ps *Positions[V, K, P]) read(in V) (k K, p P, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			ps.keepFirst(safe.NewPanicError(r))
			ok = false
		}
	}()
	k, p = ps.pos(in)
	// A partition of an interface type holding a value Go cannot hash ([]byte) would panic in
	// Load's map, at every Load: comparing it here panics the same way, inside the recover,
	// so that the element counts as not acknowledged, as for a panic of pos.
	if k != k { // NaN, or a partition holding one: it equals no partition, not even itself
		ps.keepFirst(fmt.Errorf("%w; got %v", ErrPartitionNotEqual, k))
		return k, p, false
	}
	return k, p, true
}

// keepFirst keeps err as Err's answer unless an earlier one is kept.
func (ps *Positions[V, K, P]) keepFirst(err error) {
	ps.mu.Lock()
	if ps.err == nil {
		ps.err = err
	}
	ps.mu.Unlock()
}

// ErrPartitionNotEqual is Err's error for a partition not equal to itself (a NaN, or a struct
// or interface holding one): Load could never find its positions again, so its element counts
// as not acknowledged, as for a panic of the position function.
var ErrPartitionNotEqual = errors.New("levee: position partition not equal to itself (a NaN): its positions could never be found again")

// Err returns the first panic of pos in Ack, as a *safe.PanicError, or an error matching
// ErrPartitionNotEqual for a NaN partition, whichever came first, or nil.
func (ps *Positions[V, K, P]) Err() error {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.err
}

// Load returns, per partition with an element below the watermark, the position of its last
// element below it, in a map of the caller's.
func (ps *Positions[V, K, P]) Load() map[K]P {
	low := ps.W.Load()
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for ; ps.folded < low; ps.folded++ {
		if kp, ok := ps.seen[ps.folded]; ok { // an element Filter dropped has none
			ps.done[kp.k] = kp.p
			delete(ps.seen, ps.folded)
		}
	}
	out := make(map[K]P, len(ps.done))
	for k, p := range ps.done {
		out[k] = p
	}
	return out
}
