// Command kafka is a Kafka consumer group whose circuit breaker drives the client: it pauses
// the fetches of its partitions while the breaker is OPEN and resumes them for the HALF_OPEN
// probe, commits offsets at the position watermark, goes through a rebalance and a kill, and
// then counts what was lost, reordered and handled twice.
//
//	go run ./examples/kafka                                  # an in-process broker (kfake): nothing to install
//	KAFKA_BROKERS=host1:9092,host2:9092 go run ./examples/kafka   # a real cluster (a fresh topic and group, deleted after)
//
// A producer writes 2,100 records of 40 keys to a topic of 6 partitions (the key picks the
// partition), in four batches as the run goes. Each consumer of the group ("consumer-1",
// "consumer-2", ...) is a franz-go client (kgo) with eager rebalancing and
// kgo.BlockRebalanceOnPoll, and for each assignment one stream.Map over the assigned
// partitions: 4 records handled at once, each key's records in order (stream.OrderByKey),
// through Retry(CircuitBreaker(handle)) on a downstream that fails for a while, with
// stream.PauseWhileOpen holding the records the open breaker refuses. The results loop
// stores each result, acknowledges it to a stream.PositionWatermark over (partition, offset)
// and commits, per partition, the offset after the last record below the watermark, before
// it stores more: what is stored and not committed is at most stream.MaxUncommitted (32)
// records.
//
// The breaker's transitions (CircuitBreaker.OnStateChange) drive the client: OPEN calls
// PauseFetchPartitions on every assigned partition, HALF_OPEN and CLOSED call
// ResumeFetchPartitions. The poll loop asks PollRecords for no more records than the
// operator's input has room for, so nothing piles up in memory during the outage.
//
// The run: at 150 records stored the downstream fails; the breaker opens (fetches paused),
// its first HALF_OPEN probe fails (resumed, paused again), the second succeeds. Then a
// second member joins: a rebalance revokes every partition of the first, which finishes the
// records handed to it (or, past 5 s, drops them: they are redelivered) and commits at the
// watermark. Then the first member is killed: its stream is cancelled whatever it holds, and
// nothing is committed at close. A restarted member joins. When every record is stored and
// every partition committed to its end, the program prints what it counted and checks:
//
//   - lost 0: every record stored, every partition committed up to its end offset;
//   - per-key order violations 0;
//   - duplicates ≤ MaxUncommitted per session that ended (the killed one included), each
//     duplicate counted against the session that had stored the record before;
//   - records returned by PollRecords calls that began after PauseFetchPartitions had
//     returned and ended before ResumeFetchPartitions was called: 0 (and such polls were
//     made).
//
// It exits 1 when a check fails.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := defaultConfig()
	cfg.brokers = brokersFromEnv(os.Getenv("KAFKA_BROKERS"))
	rep, err := run(ctx, cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kafka:", err)
		os.Exit(2)
	}
	rep.print(os.Stdout)
	if f := failed(rep.checks()); len(f) > 0 {
		fmt.Printf("\n✗ %d checks failed\n", len(f))
		os.Exit(1)
	}
	fmt.Println("\n✓ every check holds")
}

// brokersFromEnv splits KAFKA_BROKERS, a comma-separated list of host:port; empty means the
// in-process broker.
func brokersFromEnv(v string) []string {
	var out []string
	for _, b := range strings.Split(v, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}
