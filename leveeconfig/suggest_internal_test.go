package leveeconfig

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLevenshtein(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"abc", "abc", 0},
		{"kitten", "sitting", 3}, {"slidingwindowszie", "slidingwindowsize", 2}, {"flaw", "lawn", 2},
	} {
		assert.Equal(t, tc.want, levenshtein(tc.a, tc.b), "%q %q", tc.a, tc.b)
		assert.Equal(t, tc.want, levenshtein(tc.b, tc.a), "%q %q", tc.b, tc.a)
	}
	assert.Equal(t, "", suggest("zzz", []string{"maxAttempts"}))
}
