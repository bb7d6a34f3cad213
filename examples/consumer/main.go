// Command consumer is a Redis Streams consumer group that prices a backlog of orders through
// levee, is killed with SIGKILL halfway through, and is restarted, and then counts what was
// priced twice, what was lost and whether each customer's orders kept their order.
//
//	go run ./examples/consumer            # starts redis-server (from PATH) on a free loopback port
//	go run ./examples/consumer -redis 127.0.0.1:6379   # or uses a Redis you give it (its data is flushed)
//
// A producer writes 10,000 orders of 200 customers to the stream "orders" (XADD), all at once:
// the backlog a consumer finds when it starts. The consumer is a child process, this program
// run again as "consumer consume": it reads the group "pricing" with XREADGROUP and prices each
// order with stream.Map through levee.DefaultPipeline on the loopback gateway of
// examples/payment (GET /price?sku=), which the parent runs:
//
//	Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(price)))))
//
// 8 at a time, each customer's orders in input order (stream.OrderByKey), with the SKU's list
// price, marked stale, as fallback. Each result is written to the stream "orders:priced"
// with its order's id; then the consumer acknowledges it to the operator's commit watermark
// (stream.CommitWatermark), and acknowledges to Redis (XACK) every entry below the watermark:
// at-least-once delivery, an entry is acknowledged only once its result is stored.
//
// The parent moves the gateway through healthy → outage (every request answered 503, for a
// time) → healthy: the outage starts when 3,000 results are stored. At 6,000 stored results it
// kills the consumer with SIGKILL and starts a new one, which first claims the entries the dead
// one had read and not acknowledged (XAUTOCLAIM) and prices them, then reads on. The parent
// then reads every result back and counts, per order id: orders in, priced live, answered by
// the fallback, priced twice (duplicates), never priced (lost), and per customer, results out
// of the customer's order. A duplicate can only be an entry whose result was stored and not
// yet acknowledged when the consumer died: the parent lists those (XPENDING of the dead
// consumer, against the stored results) before it restarts the consumer, and checks that the
// duplicates are exactly those.
//
// It does this twice: once with stream.PauseWhileOpen, where an order the open breaker refuses
// is held and no new order starts until the breaker lets calls through again, and once
// without, where the backlog drains into the fallback while the breaker is open. It prints
// both runs side by side and checks that nothing was lost, no customer's orders were reordered,
// the duplicates are the entries in flight at the kill (no more than stream.MaxUncommitted, the
// orders taken and not yet below the commit watermark), and that the paused run priced all but a few orders live. It exits 1
// when a check fails.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == consumeCommand {
		os.Exit(consumeMain(os.Args[2:]))
	}
	os.Exit(demoMain(os.Args[1:]))
}

// demoMain runs the two runs side by side and returns the exit code.
func demoMain(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opts, err := parseDemoFlags(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		return 2
	}
	addr := opts.redis
	if addr == "" {
		srv, err := startRedis(ctx, "")
		if err != nil {
			fmt.Fprintln(os.Stderr, "consumer:", err)
			return 2
		}
		defer srv.stop()
		addr = srv.addr
	}
	cfg := defaultConfig()
	cfg.redis = addr
	cfg.self = selfCommand()
	reps, err := compare(ctx, cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		return 2
	}
	printSideBySide(os.Stdout, reps)
	if n := failedChecks(reps); n > 0 {
		fmt.Printf("\n✗ %d checks failed\n", n)
		return 1
	}
	fmt.Println("\n✓ every check holds")
	return 0
}

// selfCommand returns the command line that runs this program as the consumer: the program's
// own executable, run again with the consume command.
func selfCommand() []string {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return []string{exe, consumeCommand}
}
