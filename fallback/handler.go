package fallback

import (
	"context"
	"fmt"
	"reflect"
)

// Handler is one way a Fallback may answer: for an error sentinel (OnError), an error type
// (OnType), any error (OnAny) or a result (OnResult). It is opaque and immutable, so one Handler
// may be given to several Fallbacks. The zero Handler is refused by New.
type Handler[T any] struct {
	h *handler[T]
}

type kind uint8

const (
	kindSentinel kind = iota + 1
	kindType
	kindAny
	kindResult
)

// handler is the shared, read-only description behind a Handler.
type handler[T any] struct {
	kind kind
	desc string // how errors and events name the handler, e.g. `type *main.GatewayError`

	target     error // kindSentinel
	comparable bool  // kindSentinel: target may be compared with ==, as errors.Is checks

	typ reflect.Type                   // kindType
	as  func(link error) (error, bool) // kindType: one link as an E, without walking its chain

	run func(ctx context.Context, err error) (T, error) // error kinds

	pred    func(T) bool                              // kindResult
	replace func(ctx context.Context, v T) (T, error) // kindResult

	nilFunc string // which function was nil, for New's error; "" when none
}

// OnError returns a handler for the sentinel target: it is chosen for a link of the error's chain
// that is target, as errors.Is decides for one link (the link == target, or the link's
// Is(target) method reports true). h receives the whole error the call returned, not only the
// link. target must not be nil; to handle a type, use OnType.
func OnError[T any](target error, h func(ctx context.Context, err error) (T, error)) Handler[T] {
	x := &handler[T]{kind: kindSentinel, target: target, run: h, desc: "error " + describe(target)}
	if target != nil {
		x.comparable = reflect.TypeOf(target).Comparable()
	}
	if h == nil {
		x.nilFunc = "handler function"
	}
	return Handler[T]{x}
}

// OnType returns a handler for the error type E: it is chosen for a link of the error's chain
// that is an E, as errors.As decides for one link (a type assertion, or the link's As method).
// h receives that link typed as E. E may be a concrete type such as *GatewayError or an
// interface type such as interface{ Timeout() bool }; it may not be error itself (use OnAny).
func OnType[E error, T any](h func(ctx context.Context, err E) (T, error)) Handler[T] {
	typ := reflect.TypeFor[E]()
	x := &handler[T]{kind: kindType, typ: typ, as: asLink[E], desc: "type " + typ.String()}
	if h == nil {
		x.nilFunc = "handler function"
	} else {
		x.run = func(ctx context.Context, err error) (T, error) {
			e, _ := err.(E) // a link that As set to a nil interface arrives as the zero E
			return h(ctx, e)
		}
	}
	return Handler[T]{x}
}

// asLink reports whether link itself (not its chain) is an E, returning it boxed as an error.
func asLink[E error](link error) (error, bool) {
	if _, ok := link.(E); ok {
		return link, true // the link already holds the E: no need to box it again
	}
	if x, ok := link.(interface{ As(any) bool }); ok {
		var e E
		if x.As(&e) {
			return e, true
		}
	}
	return nil, false
}

// OnAny returns the catch-all handler: it answers an error no sentinel or type handler matches,
// wherever it is listed. h receives the whole error. A Fallback has at most one.
func OnAny[T any](h func(ctx context.Context, err error) (T, error)) Handler[T] {
	x := &handler[T]{kind: kindAny, run: h, desc: "any error"}
	if h == nil {
		x.nilFunc = "handler function"
	}
	return Handler[T]{x}
}

// OnResult returns a handler that replaces a successful call's result when pred reports true
// for it, as Resilience4j's withFallback(resultPredicate, resultHandler): h receives the result
// and returns the answer. Several OnResult handlers are tried in the order listed; the first
// whose predicate matches answers. A call that failed never reaches them.
func OnResult[T any](pred func(T) bool, h func(ctx context.Context, v T) (T, error)) Handler[T] {
	x := &handler[T]{kind: kindResult, pred: pred, replace: h, desc: "result"}
	switch {
	case pred == nil:
		x.nilFunc = "predicate"
	case h == nil:
		x.nilFunc = "handler function"
	}
	return Handler[T]{x}
}

// match reports whether one link of a chain is for h; for a type handler it also returns the
// link as the handler's E.
func (h *handler[T]) match(link error) (error, bool) {
	switch h.kind {
	case kindSentinel:
		if h.comparable && link == h.target {
			return link, true
		}
		if x, ok := link.(interface{ Is(error) bool }); ok && x.Is(h.target) {
			return link, true
		}
	case kindType:
		return h.as(link)
	}
	return nil, false
}

// describe names a sentinel by its message. Error methods of user types may panic (a typed nil
// pointer, say), and building a Fallback must not.
func describe(err error) (s string) {
	if err == nil {
		return "<nil>"
	}
	defer func() {
		if recover() != nil {
			s = fmt.Sprintf("%T", err)
		}
	}()
	return fmt.Sprintf("%q", err.Error())
}
