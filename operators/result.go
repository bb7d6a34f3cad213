package operators

import (
	"fmt"
	"reflect"

	"github.com/levee-go/levee/stream"
)

// Result is the outcome of one guarded call of a per-emission operator, the stream package's
// Result: MapResults emits one as the value of an item for each element. Index counts the
// upstream's value items from 0 (error items have no index).
type Result[V, R any] = stream.Result[V, R]

// StoppedError is the error of the element that ended a subscription (Map, Filter and
// FlatMap by default, MapResults under StopOnError), the stream package's: it names the element (Index, In), matches ErrStopped and wraps the
// element's own error.
type StoppedError[V any] = stream.StoppedError[V]

// ErrStopped is matched (errors.Is) by the error of the element that ended a subscription.
// It is stream.ErrStopped.
var ErrStopped = stream.ErrStopped

// ItemTypeError is the error of an upstream item whose value is not of the operator's input
// type: Map[V, R] makes its guarded call with a V, and rxgo items carry interface{} values.
// Such an item is a failed element (nothing was called) with this error; a nil value is
// accepted as the zero V only when V is an interface type.
type ItemTypeError struct {
	Index int          // the item's position among the upstream's value items, from 0
	Value any          // the value the item carried
	Want  reflect.Type // the operator's input type
}

// Error reads "operators: item 3 is string, not int"; on a nil *ItemTypeError, "operators:
// item of another type".
func (e *ItemTypeError) Error() string {
	if e == nil {
		return "operators: item of another type"
	}
	return fmt.Sprintf("operators: item %d is %T, not %v", e.Index, e.Value, e.Want)
}

// as converts an item's value to V.
func as[V any](x any, index int) (V, error) {
	if v, ok := x.(V); ok {
		return v, nil
	}
	var zero V
	if x == nil && reflect.TypeFor[V]().Kind() == reflect.Interface {
		return zero, nil
	}
	return zero, &ItemTypeError{Index: index, Value: x, Want: reflect.TypeFor[V]()}
}
