package keyed

import (
	"fmt"
	"reflect"
)

// ErrKeyNotComparable is the sentinel a Get matches with errors.Is when its key cannot be
// held: a key that does not equal itself — a float NaN, or a struct, array or interface
// holding one, since NaN != NaN — could never be found again, so every Get of it would add a
// key that no Get, Remove or eviction can reach; and a key of an interface type (K = any, or
// a struct with an interface field) whose dynamic value is not comparable, such as a []int,
// cannot be a map key at all (Go panics with "hash of unhashable type"). Such a key is
// refused with a *KeyError before anything is stored: it is neither a hit nor a miss in
// Metrics, and create is not called. It is not a levee rejection: it is the caller's input
// that is wrong, as Go's own map panics say.
var ErrKeyNotComparable error = errKeyNotComparable{}

type errKeyNotComparable struct{}

func (errKeyNotComparable) Error() string {
	return "keyed: the key does not equal itself, or is not comparable"
}

// KeyError is the error of a Get whose key cannot be held (see ErrKeyNotComparable). Type is
// the key's dynamic type as %T prints it ("float64", "[]int"), Reason why the key is refused.
// The key itself is not kept, so that the error holds no tenant or host name. It matches
// ErrKeyNotComparable.
type KeyError struct {
	Type   string
	Reason string
}

// Error returns "keyed: key of type <Type> refused: <Reason>", e.g. "keyed: key of type
// float64 refused: it is or holds a NaN, which never equals itself, so it could never be found
// again".
func (e *KeyError) Error() string { return "keyed: key of type " + e.Type + " refused: " + e.Reason }

// Is reports whether target is ErrKeyNotComparable.
func (e *KeyError) Is(target error) bool { return target == ErrKeyNotComparable }

// The reasons of a KeyError.
const (
	reasonNaN           = "it is or holds a NaN, which never equals itself, so it could never be found again"
	reasonNotComparable = "its value is not comparable, so it cannot be a map key"
)

// checkKey returns the *KeyError of a key that cannot be held, or nil. It is one comparison
// of key with itself (trivially false for a key type without floats or interfaces), and a
// recover for a comparison that panics, which only a key holding an interface can do.
func checkKey[K comparable](key K) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &KeyError{Type: fmt.Sprintf("%T", any(key)), Reason: reasonNotComparable + " (" + fmt.Sprint(r) + ")"}
		}
	}()
	if key != key {
		return &KeyError{Type: fmt.Sprintf("%T", any(key)), Reason: reasonNaN}
	}
	return nil
}

// mayBeUnhashable reports whether a value of t can hold an interface, whose dynamic value
// may not be comparable: then a map lookup of such a key panics, so Get checks the key before
// its lock-free lookup.
func mayBeUnhashable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Array:
		return mayBeUnhashable(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if mayBeUnhashable(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}
