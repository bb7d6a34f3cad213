// Command fleet runs four replicas of a service, as four processes, that share one limit of 50
// calls per second to a payment gateway through a Redis-backed leveeredis.RateLimiter.
//
// It starts a redis-server (from PATH) on a free loopback port and the loopback payment gateway
// of levee's examples, then re-executes itself four times as the replicas. Every replica calls
// the gateway from 4 goroutines as fast as the limiter lets it (after one second of warm-up).
// The program prints, second by second, the calls each replica was admitted and the fleet's
// total: at most 50 while Redis runs. It then kills Redis for three seconds: each replica falls
// back to a local limiter at its share of the limit, ⌊50/4⌋ = 12 calls per second, learned from
// the replicas' heartbeats, once its store circuit breaker opens (from the second second on:
// the checks of the second in which Redis went away promised Redis that the replica would take
// nothing locally then and in the next, so that the others could count on it); when Redis is
// back on the same port (empty), the replicas use it again, and while some are back and some
// still decide alone, Redis holds back the shares of those without a promise: no second admits
// more than the limit (and the package's slack of 5 %). The seconds in which Redis goes away or comes back are
// marked "transition": a replica returns to Redis only once its store circuit breaker lets
// it. A second in which Redis ran but some replica's check missed the store timeout (a loaded
// machine) is marked "missed": that check was refused, or the replica's breaker opened.
//
//	go run ./examples/fleet
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	if os.Getenv(envReplica) != "" {
		if err := replica(); err != nil {
			fmt.Fprintln(os.Stderr, "fleet replica:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := run(ctx, os.Stdout, defaultSchedule); err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}
