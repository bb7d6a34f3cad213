package leveeprom

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The decaying maximum forgets a sample between 80 and 120 seconds after it, as Micrometer's
// TimeWindowMax with its defaults (2 minutes, 3 buckets).
func TestDecayingMax(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	m := newDecayingMax(t0)
	assert.Equal(t, time.Duration(0), m.poll(t0))

	m.record(at(1), 5*time.Millisecond)
	assert.Equal(t, 5*time.Millisecond, m.poll(at(1)))
	m.record(at(50), 3*time.Millisecond) // after the first rotation, at 40s
	assert.Equal(t, 5*time.Millisecond, m.poll(at(50)))
	assert.Equal(t, 5*time.Millisecond, m.poll(at(80)), "still in the bucket read after the second rotation")
	assert.Equal(t, 3*time.Millisecond, m.poll(at(120)), "the sample of 1s is forgotten at the third rotation")
	m.record(at(130), time.Millisecond)
	assert.Equal(t, 3*time.Millisecond, m.poll(at(130)), "a smaller sample does not lower the maximum")
	assert.Equal(t, time.Millisecond, m.poll(at(160)))
	m.record(at(170), 7*time.Millisecond)
	assert.Equal(t, 7*time.Millisecond, m.poll(at(170)))
	assert.Equal(t, time.Duration(0), m.poll(at(400)), "a long silence empties every bucket")
	m.record(at(401), 2*time.Millisecond)
	assert.Equal(t, 2*time.Millisecond, m.poll(at(401)))
}
