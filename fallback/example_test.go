package fallback_test

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/levee-go/levee/fallback"
)

// The Bookshelf price: the pricing service's answer when it has one, the last known price
// marked stale when it fails, and a way for the caller to tell which it got.
func Example() {
	var lastKnown fallback.LastKnown[string, Money]
	pricing, err := fallback.New("pricing",
		fallback.OnAny(lastKnown.Serve(func(m Money) Money { m.Stale = true; return m })))
	if err != nil {
		panic(err)
	}

	up := true
	fetch := func(_ context.Context, isbn string) (Money, error) { // stands for the remote call
		if !up {
			return Money{}, &GatewayError{Status: 503, Err: io.ErrUnexpectedEOF}
		}
		return Money{ISBN: isbn, Cents: 1999}, nil
	}
	price := func(ctx context.Context, isbn string) (Money, fallback.Outcome, error) {
		ctx = lastKnown.WithKey(ctx, isbn)
		return fallback.ExecuteOutcome(ctx, pricing, func(ctx context.Context) (Money, error) {
			m, err := fetch(ctx, isbn)
			if err == nil {
				lastKnown.Put(isbn, m)
			}
			return m, err
		})
	}

	m, out, err := price(context.Background(), "978-0134190440")
	fmt.Printf("%+v fallback=%v err=%v\n", m, out.Fallback, err)
	up = false
	m, out, err = price(context.Background(), "978-0134190440")
	fmt.Printf("%+v fallback=%v cause=%v\n", m, out.Fallback, out.Cause)
	_, _, err = price(context.Background(), "978-0000000000")
	fmt.Println(err)
	fmt.Printf("%+v\n", pricing.Metrics())
	// Output:
	// {ISBN:978-0134190440 Cents:1999 Stale:false} fallback=false err=<nil>
	// {ISBN:978-0134190440 Cents:1999 Stale:true} fallback=true cause=gateway: status 503: unexpected EOF
	// fallback "pricing": fallback: no last known value for 978-0000000000 (cause: gateway: status 503: unexpected EOF)
	// {NumberOfFallbackAnswers:1 NumberOfFailedFallbacks:1 NumberOfUnhandledErrors:0}
}

// The closest match wins: the handler of the outermost link of the error's chain that has
// one, whatever the order the handlers are listed in; the catch-all only when no link matches.
func ExampleNew_closestMatch() {
	f, err := fallback.New("payments",
		fallback.OnError(io.ErrUnexpectedEOF, func(context.Context, error) (string, error) {
			return "connection dropped", nil
		}),
		fallback.OnType(func(_ context.Context, e *GatewayError) (string, error) {
			return fmt.Sprintf("gateway said %d", e.Status), nil
		}),
		fallback.OnAny(func(context.Context, error) (string, error) { return "something else", nil }),
	)
	if err != nil {
		panic(err)
	}
	gw := &GatewayError{Status: 503, Err: io.ErrUnexpectedEOF}
	for _, cause := range []error{
		gw,                        // a *GatewayError wrapping io.ErrUnexpectedEOF
		fmt.Errorf("pay: %w", gw), // the same, wrapped once more
		fmt.Errorf("read: %w", io.ErrUnexpectedEOF),
		errors.New("disk full"),
	} {
		v, _ := fallback.Execute(context.Background(), f, func(context.Context) (string, error) { return "", cause })
		fmt.Println(v)
	}
	// Output:
	// gateway said 503
	// gateway said 503
	// connection dropped
	// something else
}

// Ambiguous handlers are refused when the Fallback is built, never on a call.
func ExampleNew_ambiguous() {
	_, err := fallback.New("pricing",
		fallback.OnType(func(context.Context, *GatewayError) (Money, error) { return Money{}, nil }),
		fallback.OnError(io.EOF, fallback.Value(Money{})),
		fallback.OnType(func(context.Context, *GatewayError) (Money, error) { return Money{Stale: true}, nil }),
	)
	fmt.Println(err)
	// Output:
	// fallback: handlers 0 and 2 both handle type *fallback_test.GatewayError
}

// An error returned by a handler keeps the original in its chain.
func ExampleError() {
	f, _ := fallback.New("pricing", fallback.OnAny(func(context.Context, error) (Money, error) {
		return Money{}, errors.New("price cache offline")
	}))
	cause := &GatewayError{Status: 503, Err: io.ErrUnexpectedEOF}
	_, err := fallback.Execute(context.Background(), f, func(context.Context) (Money, error) { return Money{}, cause })
	fmt.Println(err)
	fmt.Println(errors.Is(err, io.ErrUnexpectedEOF))
	// Output:
	// fallback "pricing": price cache offline (cause: gateway: status 503: unexpected EOF)
	// true
}

// A result can be replaced too, as Resilience4j's withFallback(resultPredicate, handler).
func ExampleOnResult() {
	f, _ := fallback.New("recommendations",
		fallback.OnResult(func(titles []string) bool { return len(titles) == 0 },
			func(context.Context, []string) ([]string, error) { return []string{"The Go Programming Language"}, nil }))
	v, out, _ := fallback.ExecuteOutcome(context.Background(), f, func(context.Context) ([]string, error) { return nil, nil })
	fmt.Println(v, out.Fallback)
	// Output:
	// [The Go Programming Language] true
}

// Every use of a fallback leaves a trace: subscribe to the events, or read the metrics.
func ExampleFallback_Subscribe() {
	f, _ := fallback.New("pricing", fallback.OnError(io.ErrUnexpectedEOF, fallback.Value(Money{Cents: 1999, Stale: true})))
	unsubscribe := f.Subscribe(func(e fallback.Event) {
		fmt.Printf("%s %s handler=%s cause=%v\n", e.Name, e.Type, e.Handler, e.Cause)
	})
	defer unsubscribe()
	for _, cause := range []error{io.ErrUnexpectedEOF, io.ErrClosedPipe} {
		_, _ = fallback.Execute(context.Background(), f, func(context.Context) (Money, error) { return Money{}, cause })
	}
	// Output:
	// pricing ANSWERED handler=error "unexpected EOF" cause=unexpected EOF
	// pricing UNHANDLED handler= cause=io: read/write on closed pipe
}
