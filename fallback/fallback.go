package fallback

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"

	"github.com/levee-go/levee/internal/errmatch"
	"github.com/levee-go/levee/internal/event"
)

// Fallback answers for failed calls of result type T with the handlers it was built with. It is
// immutable once built apart from its counters and subscribers, and safe for concurrent use; one
// Fallback normally serves every call to one dependency, so its metrics describe that dependency.
//
// Choosing: for an error, the handler of the closest link of the error's chain (outermost first,
// depth-first pre-order as errors.Is walks it) that a sentinel or type handler matches; within a
// link, the one listed first; else the catch-all; else none, and the error comes back unchanged.
// For a successful result, the first OnResult handler whose predicate reports true, else none.
type Fallback[T any] struct {
	name     string
	onErr    []handler[T] // sentinel and type handlers, in the order given to New
	onCancel []handler[T] // those of onErr whose target is context.Canceled or DeadlineExceeded
	catchAll *handler[T]
	onResult []handler[T]

	answered  atomic.Int64
	failed    atomic.Int64
	unhandled atomic.Int64
	events    event.Publisher[Event]
}

var errorType = reflect.TypeFor[error]()

// New builds a Fallback named name from handlers. It refuses, with an error naming the handlers
// by their index in handlers: no handler at all; the zero Handler; a nil handler function or
// predicate; a nil OnError target, a typed nil one, or a levee.ErrorType marker as target (use
// OnType); OnType[error] (use OnAny); two handlers for the same sentinel or the same type; two
// catch-alls; and a sentinel or type handler shadowed by an earlier type handler that matches
// every error it would (an interface type listed before a type implementing it), which could
// never be chosen for such a link. It refuses them here, once, rather than on every call.
//
// Handlers of other kinds are never in conflict: within one link the one listed first wins,
// and the catch-all answers only when no link matches, wherever it is listed.
func New[T any](name string, handlers ...Handler[T]) (*Fallback[T], error) {
	if len(handlers) == 0 {
		return nil, errors.New("fallback: no handlers; give at least one of OnError, OnType, OnAny or OnResult")
	}
	f := &Fallback[T]{name: name}
	var pos []int  // pos[j] is the index in handlers of f.onErr[j]
	catchAll := -1 // index in handlers of the catch-all
	for i, hd := range handlers {
		h := hd.h
		if err := check(h, i); err != nil {
			return nil, fmt.Errorf("fallback: %w", err)
		}
		switch h.kind {
		case kindSentinel, kindType:
			for j := range f.onErr {
				if err := conflict(&f.onErr[j], pos[j], h, i); err != nil {
					return nil, fmt.Errorf("fallback: %w", err)
				}
			}
			f.onErr = append(f.onErr, *h)
			pos = append(pos, i)
			if h.kind == kindSentinel && (h.target == context.Canceled || h.target == context.DeadlineExceeded) {
				f.onCancel = append(f.onCancel, *h)
			}
		case kindAny:
			if catchAll >= 0 {
				return nil, fmt.Errorf("fallback: handlers %d and %d are both catch-alls (OnAny)", catchAll, i)
			}
			c := *h
			f.catchAll, catchAll = &c, i
		case kindResult:
			f.onResult = append(f.onResult, *h)
		}
	}
	return f, nil
}

// check validates one handler on its own.
func check[T any](h *handler[T], i int) error {
	if h == nil {
		return fmt.Errorf("handler %d is the zero Handler; build handlers with OnError, OnType, OnAny or OnResult", i)
	}
	if h.nilFunc != "" {
		return fmt.Errorf("handler %d (%s) has a nil %s", i, h.desc, h.nilFunc)
	}
	switch h.kind {
	case kindSentinel:
		if h.target == nil {
			return fmt.Errorf("handler %d has a nil OnError target; use OnType to handle a type, OnAny to handle every error", i)
		}
		if t, ok := errmatch.TypeOf(h.target); ok {
			return fmt.Errorf("handler %d has levee.ErrorType[%v]() as OnError target; use OnType[%v]", i, t, t)
		}
		if typedNil(h.target) {
			return fmt.Errorf("handler %d has a nil %T as OnError target", i, h.target)
		}
	case kindType:
		if h.typ == errorType {
			return fmt.Errorf("handler %d is OnType[error], which matches every error; use OnAny", i)
		}
	}
	return nil
}

// conflict reports why the new handler h (at index i) cannot follow the accepted handler p (at
// index pi): both handle the same sentinel or type, or p matches first every link h would.
func conflict[T any](p *handler[T], pi int, h *handler[T], i int) error {
	switch {
	case p.kind == kindSentinel && h.kind == kindSentinel:
		if h.comparable && sameTarget(p.target, h.target) {
			return fmt.Errorf("handlers %d and %d both handle %s", pi, i, h.desc)
		}
	case p.kind == kindType && h.kind == kindType:
		if p.typ == h.typ {
			return fmt.Errorf("handlers %d and %d both handle %s", pi, i, h.desc)
		}
		if p.typ.Kind() == reflect.Interface && h.typ.Implements(p.typ) {
			return shadowed(p, pi, h, i, h.typ)
		}
	case p.kind == kindType && h.kind == kindSentinel:
		if t := reflect.TypeOf(h.target); t.AssignableTo(p.typ) {
			return shadowed(p, pi, h, i, t)
		}
	}
	return nil
}

// sameTarget reports whether a == b. A comparable type may still hold an uncomparable value in
// an interface field, where == panics; such targets are not the same, and New must not panic.
func sameTarget(a, b error) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

func shadowed[T any](p *handler[T], pi int, h *handler[T], i int, t reflect.Type) error {
	return fmt.Errorf("handler %d (%s) is shadowed by handler %d (%s), which matches every %v first; list the more specific handler first",
		i, h.desc, pi, p.desc, t)
}

// typedNil reports whether err is a non-nil interface holding a nil pointer, map, slice, func
// or channel: a target that no real error is likely to equal, so a mistake.
func typedNil(err error) bool {
	v := reflect.ValueOf(err)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return v.IsNil()
	}
	return false
}

// Name returns the name the Fallback was built with; it appears in its errors and events.
func (f *Fallback[T]) Name() string {
	if f == nil {
		return ""
	}
	return f.name
}
