package main

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
)

// check is one invariant of a run and what was measured for it.
type check struct {
	name     string
	ok       bool
	measured string
}

// checks evaluates the run's invariants: the stream's (nothing lost, order kept), the
// fallback's (honest answers), the patterns' (the breaker follows the gateway, the bulkhead
// bounds what it carries) and the program's (no goroutine left behind).
func (r *report) checks() []check {
	t := r.total()
	cs := []check{
		{"orders in = results out", r.in == r.out && r.in > 0,
			fmt.Sprintf("%d in, %d out", r.in, r.out)},
		{"results in input order", r.outOfOrder == 0,
			fmt.Sprintf("%d out of place", r.outOfOrder)},
		{"every result is live, cached or has no cached price", r.unexpected == 0,
			unexpected(r.unexpected, r.firstUnexpected)},
		{"live answers are the gateway's price", r.wrongLive == 0,
			fmt.Sprintf("%d of %d wrong", r.wrongLive, t.live)},
		{"cached answers are the last known price, marked stale", r.wrongCached == 0,
			fmt.Sprintf("%d of %d wrong", r.wrongCached, t.cached)},
		{"no price only for SKUs not priced live before", r.missedCache == 0,
			fmt.Sprintf("%d of %d missed the cache", r.missedCache, t.noPrice)},
		{"every order not priced live has a known cause", t.causes[causeOther] == 0,
			fmt.Sprintf("%d unexplained", t.causes[causeOther])},
	}
	if len(r.phases) > 0 {
		first := r.phases[0]
		cs = append(cs, check{fmt.Sprintf("healthy phase: no order failed for a 503, bar the %d in flight at the switch", r.cfg.Concurrency),
			first.orders > 0 && r.settledMisses == 0,
			fmt.Sprintf("%d of %d live, %d for a 503", first.live, first.orders, r.settledMisses)})
	}
	// On a loaded machine the breaker may open in a healthy phase, on attempts that a slow
	// scheduler let run past the time limit, and still be open when the outage begins.
	opened, outage, atOutage := 0, -1, circuitbreaker.Closed
	for i, ph := range r.cfg.Phases {
		if ph.mode != payment.ModeOK {
			outage = i
			break
		}
	}
	for _, tr := range r.transitions {
		if tr.to == circuitbreaker.Open && r.cfg.Phases[tr.phase].mode != payment.ModeOK {
			opened++
		}
		if outage >= 0 && tr.phase < outage {
			atOutage = tr.to
		}
	}
	cs = append(cs,
		check{"the breaker opened while the gateway failed, or was open already", opened > 0 || atOutage != circuitbreaker.Closed,
			fmt.Sprintf("opened %d times, %v when the outage began", opened, atOutage)},
		check{"breaker transitions chain from CLOSED to its final state", r.chained(),
			fmt.Sprintf("%d transitions, ends %v", len(r.transitions), r.finalState)})
	cs = append(cs, r.pauseChecks(t)...)
	// A run that drains a backlog may end before a last phase that begins by the clock.
	if n := len(r.phases); n > 0 && r.cfg.Phases[n-1].mode == payment.ModeOK && r.phases[n-1].began >= 0 {
		last := r.phases[n-1]
		// The breaker closes again unless the attempts of the healthy phase time out, which a
		// loaded machine's scheduler, not the gateway, decides, or unless no call of it was let
		// in: a backlog drained without pausing may have only a few orders left when the phase
		// begins, all refused by the breaker before its wait in OPEN is over, so that no trial
		// call could close it.
		timeouts := r.timedOut[n-1].Load()
		allRefused := last.orders > 0 && last.causes[causeOpen] == last.orders
		cs = append(cs, check{"last phase (healthy): the breaker closed again, bar timeouts",
			(r.finalState == circuitbreaker.Closed || timeouts > 0 || allRefused) && (last.live > 0 || allRefused),
			fmt.Sprintf("%v, %d of %d priced live, %d refused by the open breaker, %d attempts timed out",
				r.finalState, last.live, last.orders, last.causes[causeOpen], timeouts)})
	}
	return append(cs,
		// Strict for answered requests: the gateway counts a request out before it answers.
		// A request the time limiter cancelled leaves the gateway a moment after its caller
		// has returned the permit; the bound holds because the gateway notices the closed
		// connection before the next request, on a new one, can reach it.
		check{"max calls in flight at the gateway ≤ bulkhead size = concurrency",
			r.maxInFlight <= r.limit && r.limit == int64(r.cfg.Concurrency),
			fmt.Sprintf("%d ≤ %d", r.maxInFlight, r.limit)},
		check{"every bulkhead permit is back", r.permitsBack, fmt.Sprint(r.permitsBack)},
		// A goroutine that existed before may end during the run (a test's, say): fewer
		// afterwards is no leak.
		check{"no goroutine left behind (after ≤ before, client and gateway closed)",
			r.goroutinesAfter <= r.goroutinesBefore,
			fmt.Sprintf("%d before, %d after", r.goroutinesBefore, r.goroutinesAfter)},
	)
}

// pauseChecks are the checks that tell a paused run from one that drains. Paused, the
// fallback answers only orders whose every attempt failed while the breaker let calls
// through (see minimumCalls), and every other order is priced live once the outage is over;
// draining, the fallback answers every order the open breaker refuses.
func (r *report) pauseChecks(t phaseTally) []check {
	fb := t.cached + t.noPrice
	if !r.cfg.Pause {
		return []check{{"drain: fallback answers ≥ a quarter of the orders", fb > 0 && 4*fb >= r.in,
			fmt.Sprintf("%d of %d", fb, r.in)}}
	}
	// An order of a healthy phase answered by the fallback had every attempt time out, on a
	// machine too loaded to carry a healthy answer within the time limit: each such order
	// stands for at least one attempt timed out in a healthy phase.
	const most = minimumCalls * attempts
	slack := int(r.healthyTimeouts())
	return []check{
		{fmt.Sprintf("paused: fallback answers ≤ minimum calls × attempts = %d, + healthy timeouts", most), fb <= most+slack,
			fmt.Sprintf("%d of %d, %d healthy timeouts", fb, r.in, slack)},
		{fmt.Sprintf("paused: priced live ≥ orders − %d − healthy timeouts", most), r.in > 0 && t.live >= r.in-most-slack,
			fmt.Sprintf("%d of %d, %d healthy timeouts", t.live, r.in, slack)},
		{"paused: orders were held while the breaker refused them", r.held > 0 && r.paused > 0,
			fmt.Sprintf("%d held, %.2fs in all", r.held, r.paused.Seconds())},
	}
}

// healthyTimeouts is the number of attempts the time limiter cut off while the gateway was
// healthy: the machine's doing, not the gateway's.
func (r *report) healthyTimeouts() int64 {
	var n int64
	for i, ph := range r.cfg.Phases {
		if ph.mode == payment.ModeOK && i < len(r.timedOut) {
			n += r.timedOut[i].Load()
		}
	}
	return n
}

func unexpected(n int, first error) string {
	if n == 0 {
		return "0 unexpected"
	}
	return fmt.Sprintf("%d unexpected, first: %v", n, first)
}

// chained reports whether the breaker's transitions form one path starting from CLOSED and
// ending in the state the breaker is in: no event was lost or reordered.
func (r *report) chained() bool {
	state := circuitbreaker.Closed
	for _, tr := range r.transitions {
		if tr.from != state {
			return false
		}
		state = tr.to
	}
	return state == r.finalState
}

// failed returns the checks that do not hold.
func failed(cs []check) []check {
	var f []check
	for _, c := range cs {
		if !c.ok {
			f = append(f, c)
		}
	}
	return f
}

// print writes the summary: the phases table, the breaker's transitions, the gateway's and the
// program's figures, and the checks.
func (r *report) print(w io.Writer, source string) {
	pace := "as a backlog (all due at once)"
	if r.cfg.Speedup > 0 {
		pace = fmt.Sprintf("%g× faster than they were placed", r.cfg.Speedup)
	}
	refused := "answering refused orders from the fallback"
	if r.cfg.Pause {
		refused = fmt.Sprintf("pausing on refused orders (PauseWhileOpen, at most %v each)", r.cfg.MaxPause)
	}
	fmt.Fprintf(w, "orders: %d orders from %s, replayed %s, priced %d at a time, %s\n",
		r.in, source, pace, r.cfg.Concurrency, refused)
	fmt.Fprintf(w, "through Retry(CircuitBreaker(RateLimiter(TimeLimiter %v(Bulkhead %d(price))))) "+
		"with the last known price as fallback,\non the gateway at %s\n\n", r.cfg.TimeLimit, r.cfg.Concurrency, r.url)

	line := "%-15s %6s %10s %6s %7s %9s │ %8s │ %8s %6s %6s\n"
	fmt.Fprintf(w, line, "phase", "orders", "time", "live", "cached", "no price", "breaker", "gateway", "", "timed")
	fmt.Fprintf(w, line, "", "", "", "", "", "", "refused", "requests", "503", "out")
	var requests, answered503, timedOut int64
	for i, p := range r.phases {
		n, f, to := r.requests[i].Load(), r.answered503[i].Load(), r.timedOut[i].Load()
		requests, answered503, timedOut = requests+n, answered503+f, timedOut+to
		r.row(w, line, r.cfg.Phases[i].name, p, span(p.began, p.ended), n, f, to)
	}
	t := r.total()
	r.row(w, line, "total", t, span(0, r.elapsed), requests, answered503, timedOut)
	fmt.Fprintf(w, "why not live, by the pipeline's last error: breaker open %d, 503 %d, timeout %d, "+
		"bulkhead or rate limiter %d, other %d\n", t.causes[causeOpen], t.causes[causeGateway],
		t.causes[causeTimeout], t.causes[causeRefused], t.causes[causeOther])

	fmt.Fprintf(w, "paused: %d orders held after a refusal, the longest %.2fs, %.2fs summed over them\n",
		r.held, r.longest.Seconds(), r.paused.Seconds())

	fmt.Fprintf(w, "\nbreaker transitions (from its events), ending %v:\n", r.finalState)
	for _, tr := range r.transitions {
		fmt.Fprintf(w, "  %6.2fs  %-15s %v → %v\n", tr.at.Seconds(), r.cfg.Phases[tr.phase].name, tr.from, tr.to)
	}
	fmt.Fprintf(w, "\ngateway: %d requests received, %d cancelled by the client, at most %d in flight\n",
		r.received, r.cancelled, r.maxInFlight)
	fmt.Fprintf(w, "goroutines: %d before, %d after closing the client and the gateway\n\n",
		r.goroutinesBefore, r.goroutinesAfter)

	cs := r.checks()
	for _, c := range cs {
		mark := "✓"
		if !c.ok {
			mark = "✗"
		}
		fmt.Fprintf(w, "  %s %s %s\n", mark, pad(c.name, 70), c.measured)
	}
	if f := failed(cs); len(f) > 0 {
		names := make([]string, len(f))
		for i, c := range f {
			names[i] = c.name
		}
		fmt.Fprintf(w, "\n✗ %d of %d checks failed (%.1fs): %s\n", len(f), len(cs), r.elapsed.Seconds(),
			strings.Join(names, "; "))
		return
	}
	fmt.Fprintf(w, "\n✓ all %d checks hold (%.1fs)\n", len(cs), r.elapsed.Seconds())
}

func (r *report) row(w io.Writer, line, name string, p phaseTally, when string, requests, answered503, timedOut int64) {
	fmt.Fprintf(w, line, name, fmt.Sprint(p.orders), when, fmt.Sprint(p.live), fmt.Sprint(p.cached),
		fmt.Sprint(p.noPrice), fmt.Sprint(p.causes[causeOpen]),
		fmt.Sprint(requests), fmt.Sprint(answered503), fmt.Sprint(timedOut))
}

// span formats a phase's time span, or "-" for a phase never reached.
func span(from, to time.Duration) string {
	if from < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f–%.1fs", from.Seconds(), to.Seconds())
}

// pad pads s with spaces to n characters: fmt pads to n bytes, which misaligns "≤".
func pad(s string, n int) string {
	if k := utf8.RuneCountInString(s); k < n {
		return s + strings.Repeat(" ", n-k)
	}
	return s
}

// namedRun is one run of the program, named for the side-by-side table.
type namedRun struct {
	name string
	rep  *report
}

// printSideBySide writes the runs' totals one beside the other: what pausing changes.
func printSideBySide(w io.Writer, runs []namedRun) {
	row := func(label string, cell func(r *report) string) {
		fmt.Fprintf(w, "%-34s", label)
		for _, rn := range runs {
			fmt.Fprintf(w, " %22s", cell(rn.rep))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%-34s", "")
	for _, rn := range runs {
		fmt.Fprintf(w, " %22s", rn.name)
	}
	fmt.Fprintln(w)
	row("orders in", func(r *report) string { return fmt.Sprint(r.in) })
	row("priced live", func(r *report) string { return fmt.Sprint(r.total().live) })
	row("answered by fallback (stale)", func(r *report) string { return fmt.Sprint(r.total().cached) })
	row("no price (unpriced)", func(r *report) string { return fmt.Sprint(r.total().noPrice) })
	row("orders held (PauseWhileOpen)", func(r *report) string { return fmt.Sprint(r.held) })
	row("time paused: longest hold", func(r *report) string { return fmt.Sprintf("%.2fs", r.longest.Seconds()) })
	row("time paused: summed over holds", func(r *report) string { return fmt.Sprintf("%.2fs", r.paused.Seconds()) })
	row("total time", func(r *report) string { return fmt.Sprintf("%.2fs", r.elapsed.Seconds()) })
}
