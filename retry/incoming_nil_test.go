package retry_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/retry"
)

// TestWithIncomingAttemptNilContext: a nil ctx means context.Background(), as everywhere in
// levee, rather than a panic in context.WithValue.
func TestWithIncomingAttemptNilContext(t *testing.T) {
	var ctx context.Context
	require.NotPanics(t, func() { ctx = retry.WithIncomingAttempt(nil, 2) }) //nolint:staticcheck // nil on purpose
	assert.Equal(t, 2, retry.IncomingAttempt(ctx))
}
