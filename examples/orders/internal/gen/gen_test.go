package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The committed file is the generator's output for its default flags, byte for byte: whoever
// changes the generator regenerates the file (go generate ./examples/orders).
func TestCommittedFileIsTheGeneratorsOutput(t *testing.T) {
	committed, err := os.ReadFile("../../testdata/orders.jsonl")
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, write(&buf, 10000, 2025))
	require.True(t, bytes.Equal(buf.Bytes(), committed),
		"testdata/orders.jsonl differs from the generator's output: run go generate ./examples/orders")
	assert.Less(t, len(committed), 1500*1000, "the file must stay under 1.5 MB")
}

func TestOrdersAreValidAndInTimeOrder(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, write(&buf, 2000, 7))
	sc := bufio.NewScanner(&buf)
	var prev Order
	skus := map[string]int{}
	n := 0
	for sc.Scan() {
		var o Order
		require.NoError(t, json.Unmarshal(sc.Bytes(), &o), "line %d", n+1)
		assert.NotEmpty(t, o.ID)
		assert.NotEmpty(t, o.Customer)
		assert.Contains(t, allSKUs(), o.SKU)
		assert.GreaterOrEqual(t, o.Quantity, 1)
		assert.LessOrEqual(t, o.Quantity, 6)
		assert.False(t, o.PlacedAt.Before(opening))
		if n > 0 {
			assert.False(t, o.PlacedAt.Before(prev.PlacedAt), "line %d goes back in time", n+1)
			assert.NotEqual(t, prev.ID, o.ID)
		}
		skus[o.SKU]++
		prev = o
		n++
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, 2000, n)
	// Skewed popularity: out of 320 SKUs, the best seller alone takes more than a tenth of the
	// orders, while some of the long tail is not ordered at all.
	best := 0
	for _, c := range skus {
		best = max(best, c)
	}
	assert.Greater(t, best, 2000/10)
	assert.Less(t, len(skus), len(allSKUs()))
}

func TestSameSeedSameOrders(t *testing.T) {
	var a, b, c bytes.Buffer
	require.NoError(t, write(&a, 100, 1))
	require.NoError(t, write(&b, 100, 1))
	require.NoError(t, write(&c, 100, 2))
	assert.Equal(t, a.String(), b.String())
	assert.NotEqual(t, a.String(), c.String())
}

func allSKUs() []string {
	var s []string
	for _, c := range categories {
		for i := range perCategory {
			s = append(s, fmt.Sprintf("%s-%03d", c, i+1))
		}
	}
	return s
}
