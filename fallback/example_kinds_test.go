package fallback_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/levee-go/levee/fallback"
)

// Cached value: the last known price, served marked stale. Put on every success; the handler
// finds the call's key in the context.
func ExampleLastKnown() {
	var prices fallback.LastKnown[string, Money]
	f, _ := fallback.New("pricing", fallback.OnAny(prices.Serve(func(m Money) Money { m.Stale = true; return m })))

	prices.Put("978-1", Money{ISBN: "978-1", Cents: 2599}) // a call that succeeded earlier
	ctx := prices.WithKey(context.Background(), "978-1")
	m, _ := fallback.Execute(ctx, f, func(context.Context) (Money, error) { return Money{}, errors.New("pricing: 503") })
	fmt.Printf("%+v\n", m)
	// Output:
	// {ISBN:978-1 Cents:2599 Stale:true}
}

// Default: an optional feature degrades to its neutral value, an empty list.
func ExampleValue() {
	f, _ := fallback.New("recommendations", fallback.OnAny(fallback.Value([]string{})))
	titles, out, err := fallback.ExecuteOutcome(context.Background(), f, func(context.Context) ([]string, error) {
		return nil, errors.New("recommendations: timeout")
	})
	fmt.Println(len(titles), titles != nil, out.Fallback, err)
	// Output:
	// 0 true true <nil>
}

// Reviews is the answer of the reviews service: a rating and the review texts.
type Reviews struct {
	Rating   float64
	Texts    []string
	Degraded bool // only part of the answer is available
}

// Degraded response: when the review texts cannot be fetched, the rating (kept locally) is
// still shown, and the answer says it is partial.
func Example_degraded() {
	ratings := map[string]float64{"978-1": 4.5} // local, cheap, cannot fail the same way
	reviews, _ := fallback.New("reviews", fallback.OnAny(func(ctx context.Context, _ error) (Reviews, error) {
		isbn := ctx.Value(isbnKey{}).(string)
		return Reviews{Rating: ratings[isbn], Degraded: true}, nil
	}))
	ctx := context.WithValue(context.Background(), isbnKey{}, "978-1")
	r, _ := fallback.Execute(ctx, reviews, func(context.Context) (Reviews, error) {
		return Reviews{}, errors.New("reviews: 503")
	})
	fmt.Printf("%+v\n", r)
	// Output:
	// {Rating:4.5 Texts:[] Degraded:true}
}

type isbnKey struct{}

// Fail fast: with no honest answer, a clear error a server maps to 503, that keeps its cause.
func ExampleFailFast() {
	f, _ := fallback.New("pricing", fallback.OnAny(fallback.FailFast[Money](func(cause error) error {
		return &PriceUnavailableError{ISBN: "978-2", Cause: cause}
	})))
	cause := errors.New("pricing: connection refused")
	_, err := fallback.Execute(context.Background(), f, func(context.Context) (Money, error) { return Money{}, cause })

	var unavailable *PriceUnavailableError
	if errors.As(err, &unavailable) {
		fmt.Println(http.StatusServiceUnavailable, unavailable.ISBN)
	}
	fmt.Println(errors.Is(err, cause))
	fmt.Println(err)
	// Output:
	// 503 978-2
	// true
	// fallback "pricing": price of 978-2 unavailable: pricing: connection refused
}
