package bench

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkKeyed: a lookup of one of 64 keys and a successful call through its breaker,
// levee's keyed breakers beside a map and mutex of gobreakers.
func BenchmarkKeyed(b *testing.B) {
	cases, err := KeyedCases()
	runCases(b, must(b, cases, err), false)
}

func TestKeyedCasesSucceed(t *testing.T) {
	cases, err := KeyedCases()
	require.NoError(t, err)
	for _, c := range cases {
		for range 200 {
			require.NoError(t, c.Do(context.Background()), c.Impl)
		}
	}
}
