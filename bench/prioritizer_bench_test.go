package bench

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkPrioritizer: one admitted call through a prioritizer and its adaptive limiter,
// levee's beside failsafe-go's, and each limiter alone.
func BenchmarkPrioritizer(b *testing.B) {
	cases, err := PrioritizerCases()
	runCases(b, must(b, cases, err), false)
}

// Every prioritizer case admits its call.
func TestPrioritizerCasesAdmit(t *testing.T) {
	cases, err := PrioritizerCases()
	require.NoError(t, err)
	defer CloseAll(cases)
	require.Len(t, cases, 4)
	for _, c := range cases {
		for range 1000 {
			require.NoError(t, c.Do(context.Background()), c.Impl)
		}
	}
}
