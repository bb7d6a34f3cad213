package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/levee-go/levee/internal/integration"
)

// TestMain lets the test binary serve as a replica process: run re-executes it with
// FLEET_REPLICA set.
func TestMain(m *testing.M) {
	if os.Getenv(envReplica) != "" {
		if err := replica(); err != nil {
			os.Stderr.WriteString("fleet replica: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// The fleet admits at most 50 calls in every second Redis decides them all, and at least 45 (the demand
// exceeds the limit); while Redis is down each replica admits its share, ⌈50/4⌉ = 13 per
// second: over the full seconds of the outage, 13 per second within one cycle's 13 (a local
// limiter counts its cycles from its own start, not from whole seconds, so a cycle may fall
// on either side of a second's boundary).
func TestFleet(t *testing.T) {
	integration.Program(t, "apt-get install -y redis-server", "redis-server")
	var out bytes.Buffer
	secs, err := run(t.Context(), &out, defaultSchedule)
	require.NoError(t, err)
	t.Log("\n" + out.String())
	require.Len(t, secs, defaultSchedule.End)
	up, down := 0, 0
	var outage [replicas]int
	for _, s := range secs {
		switch s.Phase {
		case phaseUp:
			up++
			assert.LessOrEqual(t, s.Total, limit, "second %d", s.Index)
			assert.GreaterOrEqual(t, s.Total, limit-5, "second %d", s.Index)
		case phaseDown:
			down++
			for i, a := range s.Admitted {
				outage[i] += a
			}
		}
	}
	for i, a := range outage {
		assert.InDelta(t, 13*down, a, 13, "replica %d over the %d seconds of outage", i+1, down)
	}
	// A loaded machine may make a check miss StoreTimeout: that replica then admits through
	// its share for a moment, and the second is reported "missed" rather than "redis".
	assert.GreaterOrEqual(t, up, 3)
	assert.Equal(t, 2, down)
}
