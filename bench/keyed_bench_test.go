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

// BenchmarkKeyedLookup: the lookup alone, levee's Get beside a map read under a mutex.
func BenchmarkKeyedLookup(b *testing.B) {
	cases, err := KeyedLookupCases()
	runCases(b, must(b, cases, err), false)
}

// Every case answers every call, through the breaker of the key it picked.
func TestKeyedCasesSucceed(t *testing.T) {
	cases, err := KeyedCases()
	require.NoError(t, err)
	require.Equal(t, []string{"levee", "levee-idle", "map-gobreaker"}, impls(cases))
	for _, c := range cases {
		for range 200 {
			require.NoError(t, c.Do(context.Background()), c.Impl)
		}
	}
}

func TestKeyedLookupCasesSucceed(t *testing.T) {
	cases, err := KeyedLookupCases()
	require.NoError(t, err)
	require.Equal(t, []string{"levee", "levee-idle", "map-mutex"}, impls(cases))
	for _, c := range cases {
		for range 200 {
			require.NoError(t, c.Do(context.Background()), c.Impl)
		}
	}
}
