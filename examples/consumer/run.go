package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/levee-go/levee/examples/payment"
)

// demoOptions are the program's command-line flags.
type demoOptions struct {
	redis string
}

func parseDemoFlags(args []string) (demoOptions, error) {
	fs := flag.NewFlagSet("consumer", flag.ContinueOnError)
	var o demoOptions
	fs.StringVar(&o.redis, "redis", "", "address of a Redis server to use, whose data is flushed "+
		"(default: start redis-server from PATH on a free loopback port)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return o, nil
}

// config is one comparison of the paused and the draining consumer.
type config struct {
	redis string   // address of the Redis server
	self  []string // the command line that runs the consumer

	orders, customers, skus int
	outageAt                int           // stored results at which the gateway starts failing
	outage                  time.Duration // how long it fails
	killAt                  int           // stored results at which the consumer is killed
	timeout                 time.Duration // bound on one run
}

// defaultConfig is the program's: 10,000 orders of 200 customers over 400 SKUs, the gateway
// failing for 1s from the 3,000th stored result, the consumer killed at the 6,000th.
func defaultConfig() config {
	return config{
		orders: 10000, customers: 200, skus: 400,
		outageAt: 3000, outage: time.Second, killAt: 6000,
		timeout: 2 * time.Minute,
	}
}

// report is what one run measured.
type report struct {
	name  string
	pause bool

	in         int           // orders in the stream
	distinct   int           // orders with at least one stored result
	live       int           // orders whose first result the gateway priced
	fallback   int           // orders whose first result the fallback answered
	stored     int           // results stored, duplicates included
	duplicates int           // results stored for an order that already had one
	lost       int           // orders with no result
	violations int           // results stored before the result of an earlier order of the same customer
	wrongPrice int           // results whose price is not the SKU's list price
	paused     time.Duration // Result.Paused summed over the results stored
	longest    time.Duration // the longest Result.Paused
	held       int           // results whose order was held (Paused > 0)

	pendingAtKill   int             // entries the killed consumer had read and not acknowledged
	inFlightAtKill  int             // those of them whose result was already stored
	dupOutsideKill  int             // duplicated orders that were not among those
	inFlight        map[string]bool // the entry ids counted by inFlightAtKill
	claimed         int             // entries the restarted consumer claimed
	pendingAtEnd    int             // entries still pending once the last consumer ended
	storedAtKill    int             // results stored when the consumer was killed
	outageFrom      time.Duration
	outageTo        time.Duration
	killedAt        time.Duration
	elapsed         time.Duration
	gatewayRequests int64
}

// compare runs the consumer with PauseWhileOpen, then draining into the fallback, printing on
// w what happens as it happens, and returns both reports.
func compare(ctx context.Context, cfg config, w io.Writer) ([]*report, error) {
	var reps []*report
	for _, r := range []struct {
		name  string
		pause bool
	}{{"paused", true}, {"drain", false}} {
		rep, err := runOnce(ctx, cfg, r.name, r.pause, w)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", r.name, err)
		}
		reps = append(reps, rep)
	}
	return reps, nil
}

// child is a running consumer process.
type child struct {
	name string
	cmd  *exec.Cmd
	out  bytes.Buffer
	done chan error
}

func startChild(cfg config, gatewayURL, name string, pause bool) (*child, error) {
	args := append(cfg.self[1:len(cfg.self):len(cfg.self)],
		"-redis", cfg.redis, "-gateway", gatewayURL, "-name", name, "-pause="+strconv.FormatBool(pause))
	c := &child{name: name, cmd: exec.Command(cfg.self[0], args...), done: make(chan error, 1)}
	c.cmd.Stdout = &c.out
	c.cmd.Stderr = os.Stderr
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() { c.done <- c.cmd.Wait() }()
	return c, nil
}

// kill kills the consumer with SIGKILL, as the machine going away would, and waits for it.
func (c *child) kill() {
	_ = c.cmd.Process.Kill()
	<-c.done
}

// runOnce runs one consumer through the outage and the kill, and measures what it stored.
func runOnce(ctx context.Context, cfg config, name string, pause bool, w io.Writer) (*report, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	rep := &report{name: name, pause: pause}
	rdb := redis.NewClient(&redis.Options{Addr: cfg.redis})
	defer rdb.Close()
	if err := rdb.FlushDB(ctx).Err(); err != nil {
		return nil, fmt.Errorf("FLUSHDB: %w", err)
	}
	orders := makeOrders(cfg.orders, cfg.customers, cfg.skus)
	if err := produce(ctx, rdb, orders); err != nil {
		return nil, err
	}
	mode := "PauseWhileOpen"
	if !pause {
		mode = "draining into the fallback"
	}
	fmt.Fprintf(w, "── run %s: %d orders of %d customers in the stream %q, consumed %s ──\n",
		name, len(orders), cfg.customers, ordersStream, mode)

	gw, err := payment.Start()
	if err != nil {
		return nil, err
	}
	defer gw.Close()

	start := time.Now()
	cur, err := startChild(cfg, gw.URL(), "consumer-1", pause)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cur != nil {
			cur.kill()
		}
	}()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	var outageEnd time.Time
	outage, killed := false, false
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: %w", cur.name, ctx.Err())
		case err := <-cur.done:
			c := cur
			cur = nil
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.name, err)
			}
			if !killed {
				return nil, fmt.Errorf("%s ended before it was killed", c.name)
			}
			var sum consumeSummary
			if err := json.Unmarshal(c.out.Bytes(), &sum); err != nil {
				return nil, fmt.Errorf("%s: summary %q: %w", c.name, c.out.String(), err)
			}
			rep.claimed = sum.Claimed
			rep.elapsed = time.Since(start)
			gw.SetMode(payment.ModeOK)
			if rep.outageTo == 0 {
				rep.outageTo = rep.elapsed
			}
			fmt.Fprintf(w, "%6.2fs  %s ended: claimed %d entries, read %d new, stored %d results\n",
				rep.elapsed.Seconds(), c.name, sum.Claimed, sum.Read, sum.Stored)
			return rep, rep.tally(ctx, rdb, orders)
		case <-tick.C:
		}
		now := time.Since(start)
		if outage && rep.outageTo == 0 && time.Now().After(outageEnd) {
			gw.SetMode(payment.ModeOK)
			rep.outageTo = now
			fmt.Fprintf(w, "%6.2fs  gateway healthy again\n", now.Seconds())
		}
		if outage && killed {
			continue
		}
		n, err := rdb.XLen(ctx, resultsStream).Result()
		if err != nil {
			return nil, fmt.Errorf("XLEN: %w", err)
		}
		if !outage && n >= int64(cfg.outageAt) {
			gw.SetMode(payment.ModeFail)
			outage, outageEnd, rep.outageFrom = true, time.Now().Add(cfg.outage), now
			fmt.Fprintf(w, "%6.2fs  %d results stored: gateway outage (503) for %v\n", now.Seconds(), n, cfg.outage)
		}
		if !killed && n >= int64(cfg.killAt) {
			cur.kill()
			killed, rep.killedAt = true, time.Since(start)
			if err := rep.atKill(ctx, rdb, cur.name); err != nil {
				return nil, err
			}
			fmt.Fprintf(w, "%6.2fs  %d results stored: %s killed (SIGKILL) with %d entries pending, "+
				"%d of them with their result stored\n",
				rep.killedAt.Seconds(), rep.storedAtKill, cur.name, rep.pendingAtKill, rep.inFlightAtKill)
			if cur, err = startChild(cfg, gw.URL(), "consumer-2", pause); err != nil {
				return nil, err
			}
		}
	}
}

// atKill records, once the killed consumer has exited, the entries it left pending and which
// of them have their result stored: the next consumer will store those again.
func (r *report) atKill(ctx context.Context, rdb *redis.Client, name string) error {
	pending, err := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{
		Stream: ordersStream, Group: group, Start: "-", End: "+", Count: 1 << 20, Consumer: name,
	}).Result()
	if err != nil {
		return fmt.Errorf("XPENDING: %w", err)
	}
	results, err := rdb.XRange(ctx, resultsStream, "-", "+").Result()
	if err != nil {
		return fmt.Errorf("XRANGE: %w", err)
	}
	stored := map[string]bool{}
	for _, m := range results {
		e, _ := m.Values["entry"].(string)
		stored[e] = true
	}
	r.storedAtKill = len(results)
	r.pendingAtKill = len(pending)
	r.inFlight = map[string]bool{}
	for _, p := range pending {
		if stored[p.ID] {
			r.inFlight[p.ID] = true
		}
	}
	r.inFlightAtKill = len(r.inFlight)
	return nil
}

// tally reads every stored result back and counts.
func (r *report) tally(ctx context.Context, rdb *redis.Client, orders []Order) error {
	n, err := rdb.XLen(ctx, ordersStream).Result()
	if err != nil {
		return fmt.Errorf("XLEN: %w", err)
	}
	r.in = int(n)
	p, err := rdb.XPending(ctx, ordersStream, group).Result()
	if err != nil {
		return fmt.Errorf("XPENDING: %w", err)
	}
	r.pendingAtEnd = int(p.Count)
	results, err := rdb.XRange(ctx, resultsStream, "-", "+").Result()
	if err != nil {
		return fmt.Errorf("XRANGE: %w", err)
	}
	byID := make(map[string]Order, len(orders))
	for _, o := range orders {
		byID[o.ID] = o
	}
	seen := map[string]bool{}
	last := map[string]int{} // per customer, the highest seq stored so far, plus one
	for _, m := range results {
		str := func(k string) string { s, _ := m.Values[k].(string); return s }
		id := str("order")
		o, ok := byID[id]
		if !ok {
			return fmt.Errorf("result %s for an unknown order %q", m.ID, id)
		}
		r.stored++
		cents, err := strconv.ParseInt(str("cents"), 10, 64)
		if err != nil || cents != payment.ListPrice(o.SKU) {
			r.wrongPrice++
		}
		us, err := strconv.ParseInt(str("paused_us"), 10, 64)
		if err != nil {
			return fmt.Errorf("result %s: paused_us: %w", m.ID, err)
		}
		if us > 0 {
			r.held++
			d := time.Duration(us) * time.Microsecond
			r.paused += d
			r.longest = max(r.longest, d)
		}
		if seen[id] {
			r.duplicates++
			if !r.inFlight[str("entry")] {
				r.dupOutsideKill++
			}
			continue
		}
		seen[id] = true
		if str("live") == "1" {
			r.live++
		} else {
			r.fallback++
		}
		if o.Seq < last[o.Customer] {
			r.violations++
		} else {
			last[o.Customer] = o.Seq + 1
		}
	}
	r.distinct = len(seen)
	r.lost = r.in - r.distinct
	if r.in != len(orders) {
		return errors.New("the stream does not hold the orders produced")
	}
	return nil
}
