package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/stream"
	"github.com/levee-go/levee/timelimiter"
)

// consumeCommand is the first argument that makes the program the consumer.
const consumeCommand = "consume"

// How the consumer reads, prices and acknowledges.
const (
	concurrency = 8  // orders priced at once, and the bulkhead's size
	window      = 64 // the operator's reorder window (stream.Window)
	// maxUncommitted bounds the orders taken and not yet below the commit watermark
	// (stream.MaxUncommitted), and so what a kill redelivers: the duplicates.
	maxUncommitted = 64
	readCount      = 100
	// maxBatch bounds the results stored in one round trip (XADD each, then one XACK).
	maxBatch = 64
	// claimMinIdle is XAUTOCLAIM's min-idle-time: the consumer runs alone, after the one it
	// replaces has died, so every pending entry is an orphan and any small value will do.
	claimMinIdle = 10 * time.Millisecond
	// idleEnd ends the consumer when the stream has had no new entry for that long: the
	// example's producer has written the whole backlog before the consumer starts.
	idleEnd = 200 * time.Millisecond

	slidingWindow = 50 // the breaker's SlidingWindowSize, in calls
	failureRate   = 50 // the breaker's FailureRateThreshold, in percent
	minimumCalls  = 20 // the breaker's MinimumNumberOfCalls
	attempts      = 3  // the retry's MaxAttempts
	openWait      = 100 * time.Millisecond
	// timeLimit is far above a healthy answer's latency: the gateway fails fast in the outage
	// and is never slow, so a timeout could only be a loaded machine's, which would answer a
	// healthy order from the fallback and break the paused run's bound.
	timeLimit = time.Second
	maxPause  = 20 * time.Second
)

// consumeOptions are the consumer's command-line flags.
type consumeOptions struct {
	redis   string // address of the Redis server
	gateway string // base URL of the payment gateway
	name    string // the consumer's name in the group
	pause   bool   // stream.PauseWhileOpen, or drain into the fallback
}

// consumeSummary is what a consumer that ran to the end prints on its standard output, as one
// JSON object.
type consumeSummary struct {
	Claimed int `json:"claimed"` // pending entries of another consumer it claimed
	Read    int `json:"read"`    // new entries it read
	Stored  int `json:"stored"`  // results it stored
}

// consumeMain is the consumer's main: it runs until the stream has no new entry, then prints
// its summary and returns 0, or returns 1 after an error. SIGTERM and SIGINT stop it early.
func consumeMain(args []string) int {
	fs := flag.NewFlagSet(consumeCommand, flag.ContinueOnError)
	var o consumeOptions
	fs.StringVar(&o.redis, "redis", "", "address of the Redis server")
	fs.StringVar(&o.gateway, "gateway", "", "base URL of the payment gateway")
	fs.StringVar(&o.name, "name", "", "the consumer's name in the group")
	fs.BoolVar(&o.pause, "pause", false, "hold orders the open breaker refuses instead of answering them from the fallback")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.redis == "" || o.gateway == "" || o.name == "" {
		fmt.Fprintln(os.Stderr, "consume: -redis, -gateway and -name are required")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := consume(ctx, o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "consume %s: %v\n", o.name, err)
		return 1
	}
	if err := json.NewEncoder(os.Stdout).Encode(sum); err != nil {
		return 1
	}
	return 0
}

// entry is one entry of the orders stream as the consumer handles it.
type entry struct {
	ID string // the stream entry's id, for XACK
	Order
}

// consume prices every entry it claims or reads, stores each result, and acknowledges the
// entries below the commit watermark.
func consume(ctx context.Context, o consumeOptions) (consumeSummary, error) {
	var sum consumeSummary
	rdb := redis.NewClient(&redis.Options{Addr: o.redis})
	defer rdb.Close()
	client := payment.NewClient(o.gateway)
	defer client.Close()

	ps, err := newPatterns()
	if err != nil {
		return sum, err
	}
	pricing := levee.DefaultPipeline[int64](ps, nil)
	price := func(ctx context.Context, e entry) (int64, error) { return client.Price(ctx, e.SKU) }
	// The fallback quotes the catalogue's list price; the result is stored as stale.
	listPrice := func(_ context.Context, e entry, _ error) (int64, error) { return payment.ListPrice(e.SKU), nil }

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	in := make(chan entry)
	srcDone := make(chan error, 1)
	go func() {
		defer close(in)
		srcDone <- source(ctx, rdb, o.name, in, &sum)
	}()

	wm := stream.NewWatermark()
	opts := []stream.Option{
		stream.Concurrency(concurrency),
		stream.CommitWatermark(wm),
		stream.WithFallback(listPrice),
	}
	opts = append(opts, orderOptions()...)
	if o.pause {
		opts = append(opts, stream.PauseWhileOpen(maxPause))
	}
	results, err := stream.Map(ctx, in, pricing, price, opts...)
	if err != nil {
		cancel()
		<-srcDone
		return sum, err
	}

	s := storer{rdb: rdb, name: o.name, wm: wm, ids: map[int]string{}}
	batch := make([]stream.Result[entry, int64], 0, maxBatch)
	for r := range results {
		batch = append(batch[:0], r)
	more:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-results:
				if !ok {
					break more
				}
				batch = append(batch, r)
			default:
				break more
			}
		}
		if err := s.store(ctx, batch); err != nil {
			cancel()
			for range results {
			}
			<-srcDone
			return sum, err
		}
		sum.Stored += len(batch)
	}
	if err := <-srcDone; err != nil {
		return sum, err
	}
	if err := ctx.Err(); err != nil {
		return sum, err
	}
	if n := len(s.ids); n != 0 {
		return sum, fmt.Errorf("%d results stored but not acknowledged at the end", n)
	}
	return sum, nil
}

// source sends the consumer's entries on in: first the entries another consumer read and did
// not acknowledge (XAUTOCLAIM), oldest first, then the entries not yet delivered to the
// group (XREADGROUP >), until the stream has had no new entry for idleEnd.
func source(ctx context.Context, rdb *redis.Client, name string, in chan<- entry, sum *consumeSummary) error {
	send := func(msgs []redis.XMessage) error {
		for _, m := range msgs {
			o, err := orderOf(m.Values)
			if err != nil {
				return err
			}
			select {
			case in <- entry{ID: m.ID, Order: o}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}

	// Claim until no other consumer holds a pending entry. An entry delivered less than
	// claimMinIdle ago is skipped by XAUTOCLAIM and claimed on the next pass; an entry this
	// consumer claimed on an earlier pass may come again and is not sent twice.
	claimed := map[string]bool{}
	for {
		start := "0-0"
		for {
			msgs, next, err := rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{
				Stream: ordersStream, Group: group, Consumer: name,
				MinIdle: claimMinIdle, Start: start, Count: readCount,
			}).Result()
			if err != nil {
				return fmt.Errorf("XAUTOCLAIM: %w", err)
			}
			fresh := msgs[:0]
			for _, m := range msgs {
				if !claimed[m.ID] {
					claimed[m.ID] = true
					fresh = append(fresh, m)
				}
			}
			sum.Claimed += len(fresh)
			if err := send(fresh); err != nil {
				return err
			}
			if next == "0-0" {
				break
			}
			start = next
		}
		p, err := rdb.XPending(ctx, ordersStream, group).Result()
		if err != nil {
			return fmt.Errorf("XPENDING: %w", err)
		}
		others := int64(0)
		for c, n := range p.Consumers {
			if c != name {
				others += n
			}
		}
		if others == 0 {
			break
		}
		select {
		case <-time.After(claimMinIdle):
		case <-ctx.Done():
			return ctx.Err()
		}
	}

	for {
		streams, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: group, Consumer: name, Streams: []string{ordersStream, ">"},
			Count: readCount, Block: idleEnd,
		}).Result()
		if errors.Is(err, redis.Nil) {
			return nil // nothing new for idleEnd: the backlog is read
		}
		if err != nil {
			return fmt.Errorf("XREADGROUP: %w", err)
		}
		for _, s := range streams {
			sum.Read += len(s.Messages)
			if err := send(s.Messages); err != nil {
				return err
			}
		}
	}
}

// storer stores results and acknowledges entries.
type storer struct {
	rdb  *redis.Client
	name string
	wm   *stream.Watermark
	// ids holds the entry id of each result stored and not yet acknowledged to Redis, by
	// Result.Index; acked is the watermark last acknowledged: every entry below it is.
	ids   map[int]string
	acked int
}

// store writes the batch's results to the results stream in one round trip; only then does
// it acknowledge them to the watermark, and acknowledge to Redis (XACK) the entries the
// watermark has passed. A consumer that dies between the two leaves entries whose result is
// stored pending: the next consumer prices them again, the duplicates at-least-once allows.
func (s *storer) store(ctx context.Context, batch []stream.Result[entry, int64]) error {
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, r := range batch {
			if r.Err != nil {
				return fmt.Errorf("order %s: %w", r.In.ID, r.Err)
			}
			live := "1"
			if r.Fallback {
				live = "0"
			}
			p.XAdd(ctx, &redis.XAddArgs{Stream: resultsStream, Values: []any{
				"order", r.In.Order.ID, "customer", r.In.Customer, "seq", r.In.Seq, "sku", r.In.SKU,
				"entry", r.In.ID, "cents", r.Value, "live", live,
				"paused_us", strconv.FormatInt(r.Paused.Microseconds(), 10), "consumer", s.name,
			}})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("storing results: %w", err)
	}
	for _, r := range batch {
		s.ids[r.Index] = r.In.ID
		s.wm.Ack(r.Index)
	}
	w := s.wm.Load()
	if w == s.acked {
		return nil
	}
	ids := make([]string, 0, w-s.acked)
	for i := s.acked; i < w; i++ {
		ids = append(ids, s.ids[i])
		delete(s.ids, i)
	}
	if err := s.rdb.XAck(ctx, ordersStream, group, ids...).Err(); err != nil {
		return fmt.Errorf("XACK: %w", err)
	}
	s.acked = w
	return nil
}

// newPatterns configures the patterns guarding the gateway: 5xx answers and timeouts are
// retried and recorded, the caller's own errors (4xx) neither.
func newPatterns() (levee.Patterns, error) {
	backoff, err := retry.ExponentialRandomBackoff(10*time.Millisecond, 2, 0.5, 40*time.Millisecond, nil)
	if err != nil {
		return levee.Patterns{}, err
	}
	return levee.NewPatterns("pricing", levee.Configs{
		Retry: &retry.Config{
			MaxAttempts:      attempts,
			IntervalFunction: backoff,
			RetryErrors:      []error{payment.ErrGateway, timelimiter.ErrTimeout},
			IgnoreErrors:     []error{payment.ErrInvalidOrder},
		},
		CircuitBreaker: &circuitbreaker.Config{
			SlidingWindowSize:    slidingWindow,
			MinimumNumberOfCalls: minimumCalls,
			FailureRateThreshold: failureRate,
			// Probe with one call: a held order is the probe, and its retry, refused once
			// the probe has failed, holds it again instead of failing it.
			PermittedNumberOfCallsInHalfOpenState: 1,
			WaitDurationInOpenState:               openWait,
			IgnoreErrors:                          []error{payment.ErrInvalidOrder},
		},
		// The gateway's quota: 20,000 requests a second, in 50ms slices.
		RateLimiter: &ratelimiter.Config{
			LimitForPeriod:     1000,
			LimitRefreshPeriod: 50 * time.Millisecond,
			TimeoutDuration:    250 * time.Millisecond,
		},
		TimeLimiter: &timelimiter.Config{TimeoutDuration: timeLimit},
		Bulkhead:    &bulkhead.Config{MaxConcurrentCalls: concurrency, MaxWaitDuration: timeLimit},
	})
}
