package leveestatus

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A ring holds no buffer until events come, grows with them up to its size, then keeps the
// newest.
func TestRingGrowsWithItsEventsUpToItsSize(t *testing.T) {
	r := newRing(65536)
	assert.Equal(t, 0, cap(r.buf), "an idle instance costs no buffer")
	assert.Empty(t, r.records())
	for i := range 3 {
		r.add(record{name: string(rune('a' + i))})
	}
	assert.LessOrEqual(t, cap(r.buf), 4)
	assert.Equal(t, []string{"a", "b", "c"}, names(r.records()))

	small := newRing(2)
	for i := range 5 {
		small.add(record{name: string(rune('a' + i))})
	}
	assert.Equal(t, []string{"d", "e"}, names(small.records()))
}

func names(recs []record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.name
	}
	return out
}
