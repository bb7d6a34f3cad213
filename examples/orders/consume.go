package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/stream"
	"github.com/levee-go/levee/timelimiter"
)

// config is one run of the consumer.
type config struct {
	Limit       int     // orders to read, 0 for all
	Speedup     float64 // pace of the replay (see replay); 0 for as fast as the consumer goes
	Concurrency int     // orders priced at once, and the bulkhead's size
	Phases      []phase

	TimeLimit   time.Duration // per attempt
	Backoff     time.Duration // the retry's first wait, doubled for the second, with jitter
	SlowLatency time.Duration // of the gateway in its slow phases; above TimeLimit
	// OpenWait is the breaker's WaitDurationInOpenState; 0 lets it probe again at the next
	// call, which makes a test's phases meet the breaker the same way whatever their duration.
	OpenWait time.Duration

	// Pause holds an order the pipeline refuses (stream.PauseWhileOpen) instead of answering
	// it from the fallback, for at most MaxPause (0: no bound). Its phases must end by the
	// clock: a paused consumer reads no order.
	Pause    bool
	MaxPause time.Duration
}

// defaultConfig is the program's first run, which drains as it goes: 10,000 orders replayed in about
// eight seconds, the outage switched by order count.
func defaultConfig() config {
	const slow = 300 * time.Millisecond
	return config{
		Speedup:     3000,
		Concurrency: 8,
		Phases:      defaultPhases(slow),
		TimeLimit:   100 * time.Millisecond,
		Backoff:     50 * time.Millisecond,
		SlowLatency: slow,
		OpenWait:    500 * time.Millisecond,
	}
}

// pausedConfig is the program's third run: the same orders as a backlog (all due at once,
// as for a consumer restarting on a log), paused while the pipeline refuses, through an
// outage of 1.5s of 503s and 1.5s of slow answers from the 3,000th order on.
func pausedConfig() config {
	cfg := defaultConfig()
	cfg.Speedup = 0
	cfg.Phases = backlogPhases(cfg.SlowLatency, 1500*time.Millisecond, 1500*time.Millisecond)
	cfg.Pause = true
	cfg.MaxPause = 10 * time.Second
	return cfg
}

// drainBacklogConfig is the paused run without the pause: the backlog drained into the
// fallback once the breaker opens, as a consumer does by default.
func drainBacklogConfig() config {
	cfg := pausedConfig()
	cfg.Pause, cfg.MaxPause = false, 0
	return cfg
}

// settleTimeout bounds the waits for the gateway and the goroutines to wind down at the end.
const settleTimeout = 5 * time.Second

// priceOrders is the program's core: it starts the gateway and its client, prices every order
// read from orders through the default pipeline with a last-known-price fallback, moving the
// gateway through cfg's phases, then closes everything and reports what it measured. The
// error is for a run that could not take place (the gateway did not start, a bad line);
// invariants are the report's business.
func priceOrders(ctx context.Context, cfg config, orders io.Reader) (*report, error) {
	goroutinesBefore := runtime.NumGoroutine()
	gw, err := payment.Start()
	if err != nil {
		return nil, err
	}
	defer gw.Close() // for the early returns: closing is measured, so it is done below too
	client := payment.NewClient(gw.URL())
	defer client.Close()
	gw.SetLatency(cfg.SlowLatency)

	ps, err := newPatterns(cfg)
	if err != nil {
		return nil, err
	}
	p := &pricer{client: client}
	pricing := levee.DefaultPipeline[Quote](ps, nil)

	start := time.Now()
	rep := newReport(cfg, gw.URL())
	sched := newSchedule(gw, cfg.Phases, start)
	defer sched.stop() // for the early returns: no phase timer outlives the run
	gw.OnRequest(func(info payment.RequestInfo) {
		ph := sched.now()
		rep.requests[ph].Add(1)
		if info.Mode == payment.ModeFail {
			rep.answered503[ph].Add(1)
		}
	})
	unsubscribeTL := ps.TimeLimiter.Subscribe(func(e timelimiter.Event) {
		if e.Type == timelimiter.EventTimeout {
			rep.timedOut[sched.now()].Add(1)
		}
	})
	defer unsubscribeTL()
	unsubscribe := ps.CircuitBreaker.Subscribe(func(e circuitbreaker.Event) {
		if e.Type == circuitbreaker.EventStateTransition {
			rep.transition(e.Time.Sub(start), sched.now(), e.From, e.To)
		}
	})
	defer unsubscribe()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the producer and the stream if the loop below ends early
	in, done := replay(ctx, orders, cfg.Limit, cfg.Speedup, sched.enter)
	opts := []stream.Option{stream.Concurrency(cfg.Concurrency), stream.WithFallback(p.lastKnown)}
	if cfg.Pause {
		opts = append(opts, stream.PauseWhileOpen(cfg.MaxPause))
	}
	results, err := stream.Map(ctx, in, pricing, p.live, opts...)
	if err != nil {
		cancel()
		<-done
		return nil, err
	}
	for r := range results {
		rep.add(r, sched.of(r.Index))
	}
	cancel() // the stream has ended; if ctx ended it, the producer must stop too
	prod := <-done
	sched.stop()
	if prod.err != nil && !errors.Is(prod.err, context.Canceled) {
		return nil, fmt.Errorf("reading orders: %w", prod.err)
	}
	rep.in = prod.sent
	rep.elapsed = time.Since(start)
	rep.finish(sched, ps.CircuitBreaker.State())

	// Every call has returned once the stream is closed, but a request the time limiter
	// cancelled is still unwinding in the gateway for a moment: wait for the gateway to be
	// idle before reading its counters, and for the bulkhead to have every permit back.
	rep.permitsBack = waitFor(func() bool {
		m := ps.Bulkhead.Metrics()
		return m.AvailableConcurrentCalls == m.MaxAllowedConcurrentCalls
	})
	idle, cancelIdle := context.WithTimeout(context.Background(), settleTimeout)
	err = gw.WaitIdle(idle)
	cancelIdle()
	if err != nil {
		return nil, fmt.Errorf("gateway still busy after the stream ended: %w", err)
	}
	rep.maxInFlight = gw.MaxInFlight()
	rep.received = gw.Received()
	rep.cancelled = gw.CancelledByClient()
	rep.limit = int64(ps.Bulkhead.Metrics().MaxAllowedConcurrentCalls)

	client.Close()
	if err := gw.Close(); err != nil {
		return nil, err
	}
	rep.goroutinesBefore = goroutinesBefore
	waitFor(func() bool { return runtime.NumGoroutine() <= goroutinesBefore })
	rep.goroutinesAfter = runtime.NumGoroutine()
	return rep, nil
}

// waitFor polls cond until it holds or settleTimeout has passed, and reports whether it held.
// It waits on things that end on their own shortly (connections closing, requests unwinding)
// and have nothing to wait on.
func waitFor(cond func() bool) bool {
	deadline := time.Now().Add(settleTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}
