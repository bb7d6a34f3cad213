package main

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
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

// The fleet admits at most 50 calls in every second Redis runs, and at least 45 (the demand
// exceeds the limit); while Redis is down each replica admits its share, ⌈50/4⌉ = 13 per
// second, within 2 (a local limiter counts its cycles from its own start, not from whole
// seconds, and a check that waits for Redis's timeout may land in the next second).
func TestFleet(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("redis-server not on PATH (apt-get install -y redis-server)")
		}
		t.Fatal("redis-server not on PATH under CI: apt-get install -y redis-server")
	}
	var out bytes.Buffer
	secs, err := run(t.Context(), &out, defaultSchedule)
	require.NoError(t, err)
	t.Log("\n" + out.String())
	require.Len(t, secs, defaultSchedule.End)
	up, down := 0, 0
	for _, s := range secs {
		switch s.Phase {
		case phaseUp:
			up++
			assert.LessOrEqual(t, s.Total, limit, "second %d", s.Index)
			assert.GreaterOrEqual(t, s.Total, limit-5, "second %d", s.Index)
		case phaseDown:
			down++
			for i, a := range s.Admitted {
				assert.InDelta(t, 13, a, 2, "second %d, replica %d", s.Index, i+1)
			}
		}
	}
	assert.Equal(t, 5, up)
	assert.Equal(t, 2, down)
}
