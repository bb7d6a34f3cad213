package leveeconfig_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A partitioned instance queues nobody: its maxWaitDuration, like its maxQueued, is refused
// rather than silently ignored, and the error names the key.
func TestPartitionedInstanceRefusesMaxWaitDuration(t *testing.T) {
	_, err := load(t, "levee.adaptive.instances.a:\n  maxWaitDuration: 2s\n  partitions: {live: {share: 0.5}}\n")
	assert.EqualError(t, err, "app.yml:2: levee.adaptive.instances.a.maxWaitDuration: must be 0 for a PartitionedLimiter, got 2s")
}
