package fallback_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/errmatch"
)

// panicMsg is a comparable error whose Error method panics.
type panicMsg struct{}

func (panicMsg) Error() string { panic("no message") }

// boxError is of a comparable type, but == panics when it holds an uncomparable value.
type boxError struct{ v any }

func (e boxError) Error() string { return fmt.Sprint("box ", e.v) }

type timeoutTemporary interface {
	timeouter
	Temporary() bool
}

func onType[E error](s string) fallback.Handler[string] {
	return fallback.OnType(func(context.Context, E) (string, error) { return s, nil })
}

func TestNewRefusesInvalidHandlers(t *testing.T) {
	var nilGateway *GatewayError
	gwSentinel := &GatewayError{Status: 503, Err: errBoom}
	a := answer("a")
	tests := []struct {
		name     string
		handlers []fallback.Handler[string]
		want     string
	}{
		{"no handler", nil,
			`fallback: no handlers; give at least one of OnError, OnType, OnAny or OnResult`},
		{"zero Handler", []fallback.Handler[string]{fallback.OnAny(a), {}},
			`fallback: handler 1 is the zero Handler; build handlers with OnError, OnType, OnAny or OnResult`},
		{"nil OnError function", []fallback.Handler[string]{fallback.OnError[string](errBoom, nil)},
			`fallback: handler 0 (error "boom") has a nil handler function`},
		{"nil OnType function", []fallback.Handler[string]{fallback.OnType[*GatewayError, string](nil)},
			`fallback: handler 0 (type *fallback_test.GatewayError) has a nil handler function`},
		{"nil OnAny function", []fallback.Handler[string]{fallback.OnError(errBoom, a), fallback.OnAny[string](nil)},
			`fallback: handler 1 (any error) has a nil handler function`},
		{"nil OnResult predicate", []fallback.Handler[string]{fallback.OnResult(nil, func(_ context.Context, v string) (string, error) { return v, nil })},
			`fallback: handler 0 (result) has a nil predicate`},
		{"nil OnResult function", []fallback.Handler[string]{fallback.OnResult[string](func(string) bool { return true }, nil)},
			`fallback: handler 0 (result) has a nil handler function`},
		{"nil FailFast wrap", []fallback.Handler[string]{fallback.OnAny(fallback.FailFast[string](nil))},
			`fallback: handler 0 (any error) has a nil handler function`},
		{"nil LastKnown", []fallback.Handler[string]{fallback.OnAny((*fallback.LastKnown[int, string])(nil).Serve(nil))},
			`fallback: handler 0 (any error) has a nil handler function`},
		{"nil OnError target", []fallback.Handler[string]{fallback.OnError(nil, a)},
			`fallback: handler 0 has a nil OnError target; use OnType to handle a type, OnAny to handle every error`},
		{"type marker as OnError target", []fallback.Handler[string]{fallback.OnError(errmatch.Type[*GatewayError](), a)},
			`fallback: handler 0 has levee.ErrorType[*fallback_test.GatewayError]() as OnError target; use OnType[*fallback_test.GatewayError]`},
		{"typed nil OnError target", []fallback.Handler[string]{fallback.OnError(error(nilGateway), a)},
			`fallback: handler 0 has a nil *fallback_test.GatewayError as OnError target`},
		{"OnType[error]", []fallback.Handler[string]{onType[error]("e")},
			`fallback: handler 0 is OnType[error], which matches every error; use OnAny`},
		{"two handlers for one sentinel", []fallback.Handler[string]{fallback.OnError(errBoom, a), fallback.OnAny(a), fallback.OnError(errBoom, a)},
			`fallback: handlers 0 and 2 both handle error "boom"`},
		{"two handlers for one value sentinel", []fallback.Handler[string]{fallback.OnError(valueError{7}, a), fallback.OnError(valueError{7}, a)},
			`fallback: handlers 0 and 1 both handle error "value error 7"`},
		{"two handlers for one sentinel whose Error panics", []fallback.Handler[string]{fallback.OnError(panicMsg{}, a), fallback.OnError(panicMsg{}, a)},
			`fallback: handlers 0 and 1 both handle error fallback_test.panicMsg`},
		{"two handlers for one type", []fallback.Handler[string]{fallback.OnAny(a), onType[*GatewayError]("1"), fallback.OnError(errBoom, a), onType[*GatewayError]("3")},
			`fallback: handlers 1 and 3 both handle type *fallback_test.GatewayError`},
		{"two catch-alls", []fallback.Handler[string]{fallback.OnAny(a), fallback.OnError(errBoom, a), fallback.OnAny(a)},
			`fallback: handlers 0 and 2 are both catch-alls (OnAny)`},
		{"type shadowed by an interface listed first", []fallback.Handler[string]{onType[timeouter]("t"), onType[*GatewayError]("g")},
			`fallback: handler 1 (type *fallback_test.GatewayError) is shadowed by handler 0 (type fallback_test.timeouter), which matches every *fallback_test.GatewayError first; list the more specific handler first`},
		{"interface shadowed by a broader interface", []fallback.Handler[string]{onType[timeouter]("t"), onType[timeoutTemporary]("tt")},
			`fallback: handler 1 (type fallback_test.timeoutTemporary) is shadowed by handler 0 (type fallback_test.timeouter), which matches every fallback_test.timeoutTemporary first; list the more specific handler first`},
		{"sentinel shadowed by its type listed first", []fallback.Handler[string]{onType[*GatewayError]("g"), fallback.OnError(gwSentinel, a)},
			`fallback: handler 1 (error "gateway: status 503: boom") is shadowed by handler 0 (type *fallback_test.GatewayError), which matches every *fallback_test.GatewayError first; list the more specific handler first`},
		{"sentinel shadowed by an interface listed first", []fallback.Handler[string]{onType[timeouter]("t"), fallback.OnError(gwSentinel, a)},
			`fallback: handler 1 (error "gateway: status 503: boom") is shadowed by handler 0 (type fallback_test.timeouter), which matches every *fallback_test.GatewayError first; list the more specific handler first`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := fallback.New("pricing", tt.handlers...)
			require.Error(t, err)
			assert.Nil(t, f)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

func TestNewAcceptsSpecificBeforeBroad(t *testing.T) {
	gwSentinel := &GatewayError{Status: 503, Err: errBoom}
	a := answer("a")
	tests := []struct {
		name     string
		handlers []fallback.Handler[string]
	}{
		{"one catch-all", []fallback.Handler[string]{fallback.OnAny(a)}},
		{"one result handler", []fallback.Handler[string]{fallback.OnResult(func(string) bool { return true }, func(_ context.Context, v string) (string, error) { return v, nil })}},
		{"two result handlers", []fallback.Handler[string]{
			fallback.OnResult(func(string) bool { return true }, func(_ context.Context, v string) (string, error) { return v, nil }),
			fallback.OnResult(func(string) bool { return true }, func(_ context.Context, v string) (string, error) { return v, nil })}},
		{"type before the interface it implements", []fallback.Handler[string]{onType[*GatewayError]("g"), onType[timeouter]("t")}},
		{"sentinel before its type", []fallback.Handler[string]{fallback.OnError(gwSentinel, a), onType[*GatewayError]("g")}},
		{"sentinel before an interface its type implements", []fallback.Handler[string]{fallback.OnError(gwSentinel, a), onType[timeouter]("t")}},
		{"two sentinels of one value type", []fallback.Handler[string]{fallback.OnError(valueError{1}, a), fallback.OnError(valueError{2}, a)}},
		{"two sentinels holding uncomparable values", []fallback.Handler[string]{fallback.OnError(boxError{[]int{1}}, a), fallback.OnError(boxError{[]int{1}}, a)}},
		{"two uncomparable sentinels", []fallback.Handler[string]{fallback.OnError(listError{[]string{"x"}}, a), fallback.OnError(listError{[]string{"x"}}, a)}},
		{"unrelated types and interfaces", []fallback.Handler[string]{onType[timeouter]("t"), onType[*isError]("i"), onType[valueError]("v")}},
		{"every kind once", []fallback.Handler[string]{fallback.OnAny(a), fallback.OnError(errBoom, a), onType[*GatewayError]("g"),
			fallback.OnResult(func(string) bool { return true }, func(_ context.Context, v string) (string, error) { return v, nil })}},
		{"cancellation targets", []fallback.Handler[string]{fallback.OnError(context.Canceled, a), fallback.OnError(context.DeadlineExceeded, a)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := fallback.New("pricing", tt.handlers...)
			require.NoError(t, err)
			require.NotNil(t, f)
			assert.Equal(t, "pricing", f.Name())
		})
	}
}

// One Handler value may serve several Fallbacks, built concurrently.
func TestHandlerSharedAcrossFallbacks(t *testing.T) {
	h := fallback.OnError(errBoom, answer("shared"))
	done := make(chan *fallback.Fallback[string], 2)
	for range 2 {
		go func() {
			f, err := fallback.New("x", h, fallback.OnAny(answer("any")))
			assert.NoError(t, err)
			done <- f
		}()
	}
	for range 2 {
		f := <-done
		v, err := fallback.Execute(context.Background(), f, failing[string](errBoom))
		require.NoError(t, err)
		assert.Equal(t, "shared", v)
	}
}

// Building a Fallback twice from the same handler is refused as a duplicate.
func TestSameHandlerTwiceIsADuplicate(t *testing.T) {
	h := onType[*GatewayError]("g")
	_, err := fallback.New("pricing", h, h)
	require.EqualError(t, err, `fallback: handlers 0 and 1 both handle type *fallback_test.GatewayError`)
}
