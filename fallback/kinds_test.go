package fallback_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/fallback"
)

func TestValue(t *testing.T) {
	f := labelled(t, fallback.OnAny(fallback.Value([]string{"default"})))
	v, out, err := fallback.ExecuteOutcome(context.Background(), f, failing[[]string](errBoom))
	require.NoError(t, err)
	assert.Equal(t, []string{"default"}, v)
	assert.Equal(t, fallback.Outcome{Fallback: true, Cause: errBoom}, out)
}

// PriceUnavailableError is the clear, mappable error of the fail-fast kind.
type PriceUnavailableError struct {
	ISBN  string
	Cause error
}

func (e *PriceUnavailableError) Error() string {
	return fmt.Sprintf("price of %s unavailable: %v", e.ISBN, e.Cause)
}
func (e *PriceUnavailableError) Unwrap() error { return e.Cause }

func TestFailFast(t *testing.T) {
	cause := &GatewayError{Status: 503, Err: errBoom}
	f := labelled(t, fallback.OnAny(fallback.FailFast[Money](func(cause error) error {
		return &PriceUnavailableError{ISBN: "978-0", Cause: cause}
	})))
	v, out, err := fallback.ExecuteOutcome(context.Background(), f, failing[Money](cause))
	assert.Equal(t, Money{}, v)
	assert.Equal(t, fallback.Outcome{}, out)
	var pu *PriceUnavailableError
	require.ErrorAs(t, err, &pu)
	assert.Equal(t, "978-0", pu.ISBN)
	assert.ErrorIs(t, err, cause)
	// The wrapper already holds the cause: the message does not repeat it.
	assert.Equal(t, `fallback "pricing": price of 978-0 unavailable: gateway: status 503: boom`, err.Error())
	assert.Equal(t, fallback.Metrics{NumberOfFailedFallbacks: 1}, f.Metrics())

	// A wrap that drops the cause still leaves it in the chain; one returning nil fails with
	// the cause rather than answering a zero value.
	f = labelled(t, fallback.OnAny(fallback.FailFast[Money](func(error) error { return errPriceUnavailable })))
	_, err = fallback.Execute(context.Background(), f, failing[Money](cause))
	assert.ErrorIs(t, err, errPriceUnavailable)
	assert.ErrorIs(t, err, cause)
	assert.Equal(t, `fallback "pricing": price unavailable (cause: gateway: status 503: boom)`, err.Error())

	f = labelled(t, fallback.OnAny(fallback.FailFast[Money](func(error) error { return nil })))
	v, out, err = fallback.ExecuteOutcome(context.Background(), f, failing[Money](cause))
	assert.Equal(t, Money{}, v)
	assert.False(t, out.Fallback)
	assert.ErrorIs(t, err, cause)
}

func TestLastKnownStore(t *testing.T) {
	var c fallback.LastKnown[string, Money] // the zero value is ready
	_, ok := c.Get("a")
	assert.False(t, ok)
	assert.Equal(t, 0, c.Len())
	c.Delete("a") // on an empty store: nothing happens

	c.Put("a", Money{ISBN: "a", Cents: 100})
	c.Put("b", Money{ISBN: "b", Cents: 200})
	c.Put("a", Money{ISBN: "a", Cents: 150})
	m, ok := c.Get("a")
	assert.True(t, ok)
	assert.Equal(t, Money{ISBN: "a", Cents: 150}, m)
	assert.Equal(t, 2, c.Len())
	c.Delete("a")
	_, ok = c.Get("a")
	assert.False(t, ok)
	assert.Equal(t, 1, c.Len())
}

func TestLastKnownKeys(t *testing.T) {
	var prices, other fallback.LastKnown[string, Money]
	ctx := prices.WithKey(context.Background(), "978-1")
	k, ok := prices.Key(ctx)
	assert.True(t, ok)
	assert.Equal(t, "978-1", k)
	_, ok = other.Key(ctx)
	assert.False(t, ok, "a store does not read another store's key")
	_, ok = prices.Key(context.Background())
	assert.False(t, ok)
	//lint:ignore SA1012 a nil context is what is being tested
	k, ok = prices.Key(prices.WithKey(nil, "978-2"))
	assert.True(t, ok)
	assert.Equal(t, "978-2", k)
}

func TestLastKnownServe(t *testing.T) {
	var prices fallback.LastKnown[string, Money]
	stale := func(m Money) Money { m.Stale = true; return m }
	f := labelled(t, fallback.OnAny(prices.Serve(stale)))
	unmarked := labelled(t, fallback.OnAny(prices.Serve(nil)))
	calls := 0
	price := func(f *fallback.Fallback[Money], isbn string, up bool) (Money, fallback.Outcome, error) {
		return fallback.ExecuteOutcome(prices.WithKey(context.Background(), isbn), f, func(context.Context) (Money, error) {
			calls++
			if !up {
				return Money{}, errBoom
			}
			m := Money{ISBN: isbn, Cents: 1999}
			prices.Put(isbn, m)
			return m, nil
		})
	}

	m, out, err := price(f, "978-1", true)
	require.NoError(t, err)
	assert.Equal(t, Money{ISBN: "978-1", Cents: 1999}, m)
	assert.False(t, out.Fallback)

	m, out, err = price(f, "978-1", false)
	require.NoError(t, err)
	assert.Equal(t, Money{ISBN: "978-1", Cents: 1999, Stale: true}, m)
	assert.Equal(t, fallback.Outcome{Fallback: true, Cause: errBoom}, out)

	m, _, err = price(unmarked, "978-1", false)
	require.NoError(t, err)
	assert.Equal(t, Money{ISBN: "978-1", Cents: 1999}, m)

	_, out, err = price(f, "978-2", false)
	assert.ErrorIs(t, err, fallback.ErrNoLastKnown)
	assert.ErrorIs(t, err, errBoom)
	assert.False(t, out.Fallback)
	assert.Equal(t, `fallback "pricing": fallback: no last known value for 978-2 (cause: boom)`, err.Error())

	_, err = fallback.Execute(context.Background(), f, failing[Money](errBoom))
	assert.ErrorIs(t, err, fallback.ErrNoLastKnown)
	assert.Equal(t, `fallback "pricing": fallback: no last known value: the context holds no key (use WithKey) (cause: boom)`, err.Error())

	assert.Equal(t, 4, calls)
	assert.Equal(t, fallback.Metrics{NumberOfFallbackAnswers: 1, NumberOfFailedFallbacks: 2}, f.Metrics())
}

func TestLastKnownConcurrent(t *testing.T) {
	var c fallback.LastKnown[int, int]
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				c.Put(i%10, g)
				// Another goroutine may delete the key between Put and Get.
				if v, ok := c.Get(i % 10); ok && (v < 0 || v >= 8) {
					t.Errorf("Get(%d) = %d, %v", i%10, v, ok)
				}
				if i%50 == 0 {
					c.Delete(i % 10)
				}
				_ = c.Len()
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, c.Len(), 10)
}
