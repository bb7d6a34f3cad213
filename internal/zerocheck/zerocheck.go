// Package zerocheck is a test helper: it checks that a pattern's zero value, used without its
// constructor, answers every exported method and function exactly as a nil pointer does,
// without panicking.
package zerocheck

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// Methods calls every exported method of nilPtr's type on nilPtr and on zeroPtr with the same
// generated arguments (a cancelled context for a context, a function returning zero values for
// a function, the zero value otherwise) and reports a method that panics or whose answers
// differ. It returns the number of methods called, so that a caller can assert none is missed.
func Methods(t *testing.T, nilPtr, zeroPtr any) int {
	t.Helper()
	typ := reflect.TypeOf(nilPtr)
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		t.Run(m.Name, func(t *testing.T) {
			compare(t, m.Func, 0, reflect.ValueOf(nilPtr), reflect.ValueOf(zeroPtr))
		})
	}
	return typ.NumMethod()
}

// Func calls the function f, whose parameter at index arg is nilPtr's type, once with nilPtr and
// once with zeroPtr there and generated arguments elsewhere, and reports a panic or a difference
// in the answers (a function answer is called in turn and its answers compared).
func Func(t *testing.T, name string, f any, arg int, nilPtr, zeroPtr any) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		compare(t, reflect.ValueOf(f), arg, reflect.ValueOf(nilPtr), reflect.ValueOf(zeroPtr))
	})
}

func compare(t *testing.T, f reflect.Value, arg int, nilV, zeroV reflect.Value) {
	t.Helper()
	nilOut, nilCalls := call(t, f, arg, nilV)
	zeroOut, zeroCalls := call(t, f, arg, zeroV)
	if nilCalls != zeroCalls {
		t.Errorf("the zero value called its function arguments %d times, nil %d times", zeroCalls, nilCalls)
	}
	for i := range nilOut {
		same(t, fmt.Sprintf("result %d", i), nilOut[i], zeroOut[i], 2)
	}
}

func call(t *testing.T, f reflect.Value, arg int, recv reflect.Value) (out []reflect.Value, calls int) {
	t.Helper()
	ft := f.Type()
	in := make([]reflect.Value, ft.NumIn())
	for i := range in {
		if i == arg && recv.IsValid() {
			in[i] = recv
			continue
		}
		in[i] = value(ft.In(i), &calls)
	}
	defer func() {
		if r := recover(); r != nil {
			what := "nil"
			if recv.IsValid() && !recv.IsNil() {
				what = "the zero value"
			}
			t.Fatalf("panic with %s: %v", what, r)
		}
	}()
	if ft.IsVariadic() {
		return f.CallSlice(in), calls
	}
	return f.Call(in), calls
}

var ctxType = reflect.TypeFor[context.Context]()

// cancelled is the context every generated call gets: done already, so that a method that
// waits (an event stream, a queue) returns at once even when the zero value is mishandled.
var cancelled = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

func value(typ reflect.Type, calls *int) reflect.Value {
	switch {
	case typ == ctxType:
		return reflect.ValueOf(cancelled)
	case typ.Kind() == reflect.Func:
		return reflect.MakeFunc(typ, func([]reflect.Value) []reflect.Value {
			*calls++
			out := make([]reflect.Value, typ.NumOut())
			for i := range out {
				out[i] = reflect.Zero(typ.Out(i))
			}
			return out
		})
	}
	return reflect.Zero(typ)
}

var errType = reflect.TypeFor[error]()

func same(t *testing.T, what string, nilV, zeroV reflect.Value, depth int) {
	t.Helper()
	switch {
	case nilV.Type() == errType:
		nilErr, _ := nilV.Interface().(error)
		zeroErr, _ := zeroV.Interface().(error)
		if (nilErr == nil) != (zeroErr == nil) || nilErr != nil && !errors.Is(zeroErr, nilErr) {
			t.Errorf("%s: zero value returned error %v, nil returned %v", what, zeroErr, nilErr)
		}
	case nilV.Kind() == reflect.Func:
		if nilV.IsNil() != zeroV.IsNil() {
			t.Errorf("%s: zero value returned func nil=%v, nil returned nil=%v", what, zeroV.IsNil(), nilV.IsNil())
			return
		}
		if nilV.IsNil() || depth == 0 {
			return
		}
		nilOut, nilCalls := call(t, nilV, -1, reflect.Value{})
		zeroOut, zeroCalls := call(t, zeroV, -1, reflect.Value{})
		if nilCalls != zeroCalls {
			t.Errorf("%s: the zero value's func called its arguments %d times, nil's %d times", what, zeroCalls, nilCalls)
		}
		for i := range nilOut {
			same(t, fmt.Sprintf("%s, result %d", what, i), nilOut[i], zeroOut[i], depth-1)
		}
	case nilV.Kind() == reflect.Chan:
		if nilV.IsNil() != zeroV.IsNil() {
			t.Errorf("%s: zero value returned chan nil=%v, nil returned nil=%v", what, zeroV.IsNil(), nilV.IsNil())
			return
		}
		if !nilV.IsNil() {
			_, nilOK := nilV.TryRecv()
			_, zeroOK := zeroV.TryRecv()
			if nilOK != zeroOK {
				t.Errorf("%s: zero value's channel received %v, nil's %v", what, zeroOK, nilOK)
			}
		}
	case nilV.Kind() == reflect.Pointer && !nilV.IsNil() && !zeroV.IsNil() && depth > 0 &&
		nilV.Type().NumMethod() > 0:
		// A wrapper around the receiver (a *T built from it) answers as the receiver does
		// when its own methods do.
		for i := range nilV.Type().NumMethod() {
			m := nilV.Type().Method(i)
			t.Run(m.Name, func(t *testing.T) { compare(t, m.Func, 0, nilV, zeroV) })
		}
	default:
		if !reflect.DeepEqual(nilV.Interface(), zeroV.Interface()) {
			t.Errorf("%s: zero value returned %#v, nil returned %#v", what, zeroV.Interface(), nilV.Interface())
		}
	}
}
