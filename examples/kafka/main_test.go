package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests: kfake's broker and every kgo
// client are closed, every stream has ended.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestKafka runs the program's scenario on the in-process broker and checks its figures:
// exact where they do not depend on timing (lost, order, what was polled while paused, the
// committed offsets), within the bound the program promises where they do (duplicates).
func TestKafka(t *testing.T) {
	rep := runScenario(t, defaultConfig())
	assert.Equal(t, 0, rep.count(endDropped), "no revoked session needed 5s to finish its records")
	assert.GreaterOrEqual(t, rep.count(endFinished), 1)
}

// TestKafkaDropOnRevoke runs the scenario with revoked sessions dropping their in-flight
// records at once instead of finishing them: they are redelivered to the partitions' next
// owner, and the same promises hold.
func TestKafkaDropOnRevoke(t *testing.T) {
	cfg := defaultConfig()
	cfg.revokeDrain = 0
	rep := runScenario(t, cfg)
	assert.Equal(t, 0, rep.count(endFinished))
	assert.GreaterOrEqual(t, rep.count(endDropped), 1)
}

// runScenario runs cfg and checks what every run promises.
func runScenario(t *testing.T, cfg config) *report {
	t.Helper()
	var out bytes.Buffer
	rep, err := run(t.Context(), cfg, &out)
	require.NoError(t, err, out.String())
	rep.print(&out)
	t.Log("\n" + out.String())

	assert.Equal(t, 2100, rep.produced)
	assert.Equal(t, 2100, rep.distinct)
	assert.Equal(t, 0, rep.lost)
	assert.True(t, rep.committedAll)
	assert.Equal(t, 0, rep.violations)
	assert.Equal(t, rep.stored-rep.distinct, rep.duplicates)
	for s, d := range rep.dupBySession {
		assert.LessOrEqual(t, d, maxUncommitted, "session %d", s)
	}
	// What a session leaves stored and not committed is its duplicates' bound: the records
	// taken and not below the watermark.
	assert.LessOrEqual(t, rep.duplicates, maxUncommitted*(len(rep.ends)))

	// Fetches paused while OPEN: no poll that ran wholly between PauseFetchPartitions and
	// ResumeFetchPartitions returned a record, and such polls were made.
	assert.Equal(t, int64(0), rep.recordsPaused)
	assert.GreaterOrEqual(t, rep.pollsPaused, int64(1))
	// The first probe fails (the downstream heals on the second OPEN), the second succeeds.
	assert.GreaterOrEqual(t, rep.opened, int64(2))
	assert.GreaterOrEqual(t, rep.halfOpened, int64(2))
	assert.Equal(t, rep.opened, rep.pauses)
	assert.GreaterOrEqual(t, rep.resumes, rep.halfOpened)

	assert.Equal(t, 1, rep.count(endKilled))
	assert.Equal(t, 0, rep.count(endLost))
	assert.Equal(t, int64(0), rep.failed)
	assert.Equal(t, int64(0), rep.orphans)
	assert.Empty(t, failed(rep.checks()))
	return rep
}

// TestTally checks the counting on stores written by hand: a duplicate counted against the
// session that stored the record first, a record stored before an earlier one of its key, a
// key going back within one session, and a lost record.
func TestTally(t *testing.T) {
	rec := func(p int32, o int64, key string, seq int) record {
		return record{Partition: p, Offset: o, Key: key, Seq: seq}
	}
	st := func(r record, session int) storedRecord { return storedRecord{rec: r, session: session} }
	a0, a1, a2 := rec(0, 0, "a", 0), rec(0, 1, "a", 1), rec(0, 2, "a", 2)
	b0, b1 := rec(1, 0, "b", 0), rec(1, 1, "b", 1)
	r := &report{produced: 6, dupBySession: map[int]int{}}
	tallyStores(r, []storedRecord{
		st(a0, 1), st(a1, 1), st(b0, 1),
		st(a1, 2), // a duplicate of session 1's store, in order within session 2
		st(a0, 2), // a duplicate again, and a key going back within session 2
		st(b1, 2),
		st(a2, 3),
		st(b1, 3), // a duplicate of session 2's store
	})
	assert.Equal(t, 6, r.produced)
	assert.Equal(t, 5, r.distinct) // c never stored
	assert.Equal(t, 1, r.lost)
	assert.Equal(t, 3, r.duplicates)
	assert.Equal(t, map[int]int{1: 2, 2: 1}, r.dupBySession)
	assert.Equal(t, 1, r.violations)

	r = &report{produced: 2, dupBySession: map[int]int{}}
	tallyStores(r, []storedRecord{st(a1, 1), st(a0, 2)}) // a1 first stored before a0
	assert.Equal(t, 1, r.violations)
	assert.Equal(t, 0, r.duplicates)
	assert.Equal(t, 0, r.lost)
}

// TestBrokersFromEnv checks the parsing of KAFKA_BROKERS.
func TestBrokersFromEnv(t *testing.T) {
	assert.Nil(t, brokersFromEnv(""))
	assert.Equal(t, []string{"a:9092", "b:9093"}, brokersFromEnv(" a:9092, ,b:9093,"))
}
