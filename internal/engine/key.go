package engine

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/levee-go/levee/internal/safe"
)

// Key is what OrderByKey records: the key function of the elements of type V, keys of type K.
type Key[V any, K comparable] struct{ fn func(V) K }

// KeyBy returns the Key of fn, for SetKey.
func KeyBy[V any, K comparable](fn func(V) K) *Key[V, K] { return &Key[V, K]{fn: fn} }

// keyOf is the part of a *Key[V, K] that an operator with elements of type V can use without
// knowing K.
type keyOf[V any] interface {
	newLanes() LaneSet[V]
}

func (k *Key[V, K]) funcType() reflect.Type { return reflect.TypeOf(k.fn) }

func (k *Key[V, K]) newLanes() LaneSet[V] {
	return &lanes[V, K]{key: k.fn, m: make(map[K]*Lane)}
}

// SetKey records OrderByKey(key); isNil tells whether key's function is nil.
func (s *Settings) SetKey(key any, isNil bool) error {
	if isNil {
		return errors.New("OrderByKey needs a key function, got nil")
	}
	s.Key, s.KeyInputOrder = key, false
	s.keyOptions |= keyByOption
	return nil
}

// SetKeyAndInput records OrderByKeyAndInput(key); isNil tells whether key's function is nil.
func (s *Settings) SetKeyAndInput(key any, isNil bool) error {
	if isNil {
		return errors.New("OrderByKeyAndInput needs a key function, got nil")
	}
	s.Key, s.KeyInputOrder = key, true
	s.keyOptions |= keyAndInputOption
	return nil
}

// Keys returns the maker of the lanes of OrderByKey or OrderByKeyAndInput for the operator op,
// whose elements are of type V, or nil without either. Each run of a stage needs lanes of its own.
func Keys[V any](op string, s *Settings) (func() LaneSet[V], error) {
	if s.Key == nil {
		return nil, nil
	}
	k, ok := s.Key.(keyOf[V])
	if !ok {
		var got any = s.Key
		if f, ok := s.Key.(interface{ funcType() reflect.Type }); ok {
			got = f.funcType()
		}
		name := "OrderByKey"
		if s.KeyInputOrder {
			name = "OrderByKeyAndInput"
		}
		return nil, fmt.Errorf("%s needs an %s function of type func(%v) K, got %v",
			op, name, reflect.TypeFor[V](), got)
	}
	return k.newLanes, nil
}

// Lane is the state of one key with inputs in flight under OrderByKey: at most one of its
// inputs is being called at a time (busy), and the ones taken after it wait, in input order,
// in a list of the stage's waiting slots (head to tail, linked by the slots). A Lane exists
// only while its key has an input taken and not yet called to the end.
type Lane struct {
	busy       bool
	head, tail int // waiting slots, -1 when none
	id         int // index in its lane set's pool
}

// LaneSet gives each input of a stage the Lane of its key. Its methods are called under the
// stage's lock.
type LaneSet[I any] interface {
	// Enter returns the Lane of in's key, made if the key had none; nil when in has no key
	// (it is called at once, ordered with nothing). err, with a nil Lane, is the error the
	// input fails with, the key function having panicked.
	Enter(in I) (l *Lane, err error)
	// Leave forgets l, whose key has nothing in flight any more.
	Leave(l *Lane)
	// Len returns the number of keys with inputs in flight.
	Len() int
}

// lanes is the LaneSet of a Key[V, K]. Lanes left are kept for reuse, so that a stage that has
// seen its most keys in flight at once makes no more.
type lanes[V any, K comparable] struct {
	key  func(V) K
	m    map[K]*Lane
	keys []K     // of the lanes in use, by id
	pool []*Lane // lanes left, for reuse
}

// Enter turns a panic of the key function, or of the map given a key it cannot hash (an
// interface K holding a slice), into the input's error; the lanes are left as they were. A
// key not equal to itself (NaN, or a struct or interface holding one) has no lane: its input
// is ordered with nothing, as it equals no other key, and a lane under it could never leave
// the map.
func (s *lanes[V, K]) Enter(v V) (l *Lane, err error) {
	defer func() {
		if r := recover(); r != nil {
			l, err = nil, safe.NewPanicError(r)
		}
	}()
	k := s.key(v)
	if l := s.m[k]; l != nil {
		return l, nil
	}
	if k != k { // NaN, or a key holding one: it matches no key, not even itself
		return nil, nil
	}
	if n := len(s.pool); n > 0 {
		l, s.pool = s.pool[n-1], s.pool[:n-1]
		s.keys[l.id] = k
	} else {
		l = &Lane{id: len(s.keys)}
		s.keys = append(s.keys, k)
	}
	l.busy, l.head, l.tail = false, -1, -1
	s.m[k] = l
	return l, nil
}

func (s *lanes[V, K]) Leave(l *Lane) {
	var zero K
	delete(s.m, s.keys[l.id])
	s.keys[l.id] = zero // hold no key past its lane
	s.pool = append(s.pool, l)
}

func (s *lanes[V, K]) Len() int { return len(s.m) }
