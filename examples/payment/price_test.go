package payment_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/examples/payment"
)

// fnv1a32 is FNV-1a written out from its definition, to check ListPrice against.
func fnv1a32(s string) uint32 {
	h := uint32(2166136261)
	for i := range len(s) {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

func TestListPriceIsDerivedFromTheSKUHash(t *testing.T) {
	for _, sku := range []string{"", "book-1", "book-2", "978-0134190440", "é"} {
		want := 199 + int64(fnv1a32(sku)%9801)
		assert.Equal(t, want, payment.ListPrice(sku), sku)
	}
}

func TestListPriceStaysInRangeAndVaries(t *testing.T) {
	seen := map[int64]bool{}
	lo, hi := int64(payment.MaxPriceCents), int64(payment.MinPriceCents)
	for i := range 10000 {
		p := payment.ListPrice("sku-" + strconv.Itoa(i))
		require.GreaterOrEqual(t, p, int64(payment.MinPriceCents))
		require.LessOrEqual(t, p, int64(payment.MaxPriceCents))
		lo, hi = min(lo, p), max(hi, p)
		seen[p] = true
	}
	assert.Equal(t, int64(199), int64(payment.MinPriceCents))
	assert.Equal(t, int64(9999), int64(payment.MaxPriceCents))
	assert.Greater(t, len(seen), 5000, "prices spread over the range")
	assert.Less(t, lo, int64(300))
	assert.Greater(t, hi, int64(9900))
}

func TestPriceEndpointAnswersJSON(t *testing.T) {
	gw, c := start(t)
	status, body := raw(t, http.MethodGet, gw.URL()+"/price?sku=book-1")
	assert.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"sku":"book-1","cents":`+strconv.FormatInt(payment.ListPrice("book-1"), 10)+`}`, body)

	for _, sku := range []string{"book-1", "book-2", "a b&c"} {
		cents, err := c.Price(context.Background(), sku)
		require.NoError(t, err)
		assert.Equal(t, payment.ListPrice(sku), cents, sku)
		again, err := c.Price(context.Background(), sku)
		require.NoError(t, err)
		assert.Equal(t, cents, again, "deterministic per sku")
	}
	assert.Equal(t, int64(7), gw.Received())
}

func TestChargeEndpointAnswersText(t *testing.T) {
	gw, _ := start(t)
	status, body := raw(t, http.MethodPost, gw.URL()+"/charge?order=DH001")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "PAID:DH001", body)
	status, body = raw(t, http.MethodPost, gw.URL()+"/charge?order=BAD1")
	assert.Equal(t, http.StatusUnprocessableEntity, status)
	assert.Equal(t, "invalid order BAD1\n", body)
}
