package main

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds of the checks that are not exact.
const (
	// maxPausedFallback bounds the orders the paused run answers from the fallback: those
	// whose every attempt failed while the breaker was still CLOSED. Its window of
	// slidingWindow calls, full of successes when the outage starts, reaches the failure
	// threshold after failureRate% of them have failed, and up to concurrency-1 calls started
	// before that fail after it: at most 25 + 7 failed calls, attempts per order. Once it is
	// OPEN, refused orders are held, and a failed HALF_OPEN probe reopens it at once, so the
	// probe's next attempt is refused and held too.
	maxPausedFallback = (slidingWindow*failureRate/100 + concurrency - 1) / attempts
	// minDrainFallback is the least the draining run answers from the fallback: the orders
	// read from the breaker's opening to the kill, about killAt - outageAt = 3,000 when they
	// drain within the outage, as they do in a fraction of it; 1,000 leaves room for a slow
	// machine.
	minDrainFallback = 1000
)

// minLongest and maxLongest bound the longest hold of the paused run. The consumer holds an
// order from the first refusal after the breaker opens, early in the outage, until the first
// probe after it, at most an open wait after its end: about the outage, which is measured from
// the parent's switches of the gateway's mode. Half the outage leaves the breaker ample time
// to open on a loaded machine; a second above it, for the probe and the clocks of two
// processes.
func minLongest(r *report) time.Duration { return (r.outageTo - r.outageFrom) / 2 }
func maxLongest(r *report) time.Duration { return r.outageTo - r.outageFrom + openWait + time.Second }

// check is one invariant of a run and what was measured for it.
type check struct {
	name     string
	ok       bool
	measured string
}

// checks evaluates the run's invariants.
func (r *report) checks() []check {
	cs := []check{
		{"orders in = 10,000 entries", r.in == 10000, fmt.Sprint(r.in)},
		{"lost: every order has a result", r.lost == 0, fmt.Sprintf("%d lost", r.lost)},
		{"per-customer order: no result before an earlier order's", r.violations == 0,
			fmt.Sprintf("%d violations", r.violations)},
		{"priced live + answered by fallback = orders in", r.live+r.fallback == r.in,
			fmt.Sprintf("%d + %d", r.live, r.fallback)},
		{"every price is the SKU's (live or list price)", r.wrongPrice == 0,
			fmt.Sprintf("%d wrong", r.wrongPrice)},
		{"duplicates = entries pending at the kill with a stored result", r.duplicates == r.inFlightAtKill &&
			r.dupOutsideKill == 0,
			fmt.Sprintf("%d = %d, %d others", r.duplicates, r.inFlightAtKill, r.dupOutsideKill)},
		{"duplicates <= MaxUncommitted", r.duplicates <= maxUncommitted,
			fmt.Sprintf("%d <= %d", r.duplicates, maxUncommitted)},
		{"the restarted consumer claimed every entry left pending", r.claimed == r.pendingAtKill,
			fmt.Sprintf("%d of %d", r.claimed, r.pendingAtKill)},
		{"nothing pending once the stream is consumed", r.pendingAtEnd == 0, fmt.Sprint(r.pendingAtEnd)},
	}
	if r.pause {
		return append(cs,
			check{fmt.Sprintf("paused: answered by fallback ≤ %d", maxPausedFallback), r.fallback <= maxPausedFallback,
				fmt.Sprint(r.fallback)},
			check{"paused: orders were held while the breaker was open", r.held > 0 && r.paused > 0,
				fmt.Sprintf("%d held, %.2fs", r.held, r.paused.Seconds())},
			check{fmt.Sprintf("paused: the longest hold is about the outage: in [%v, %v]",
				minLongest(r).Round(time.Millisecond), maxLongest(r).Round(time.Millisecond)),
				r.longest >= minLongest(r) && r.longest <= maxLongest(r), fmt.Sprintf("%.2fs", r.longest.Seconds())})
	}
	return append(cs,
		check{fmt.Sprintf("drain: answered by fallback ≥ %d", minDrainFallback), r.fallback >= minDrainFallback,
			fmt.Sprint(r.fallback)},
		check{"drain: nothing held", r.held == 0 && r.paused == 0, fmt.Sprintf("%d held", r.held)})
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

// failedChecks counts the checks of the runs that do not hold.
func failedChecks(reps []*report) int {
	n := 0
	for _, r := range reps {
		n += len(failed(r.checks()))
	}
	return n
}

// printChecks writes the run's checks.
func (r *report) printChecks(w io.Writer) {
	for _, c := range r.checks() {
		mark := "✓"
		if !c.ok {
			mark = "✗"
		}
		fmt.Fprintf(w, "  %s %s %s\n", mark, pad(c.name, 62), c.measured)
	}
}

// printSideBySide writes the runs' figures one beside the other, then their checks.
func printSideBySide(w io.Writer, reps []*report) {
	row := func(label string, cell func(r *report) string) {
		fmt.Fprintf(w, "%s", pad(label, 44))
		for _, r := range reps {
			fmt.Fprintf(w, " %12s", cell(r))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\n%s", pad("", 44))
	for _, r := range reps {
		fmt.Fprintf(w, " %12s", r.name)
	}
	fmt.Fprintln(w)
	row("orders in", func(r *report) string { return fmt.Sprint(r.in) })
	row("priced live", func(r *report) string { return fmt.Sprint(r.live) })
	row("answered by fallback (list price)", func(r *report) string { return fmt.Sprint(r.fallback) })
	row("duplicates (stored twice)", func(r *report) string { return fmt.Sprint(r.duplicates) })
	row("  in flight at the kill: pending, stored", func(r *report) string {
		return fmt.Sprintf("%d, %d", r.pendingAtKill, r.inFlightAtKill)
	})
	row("lost", func(r *report) string { return fmt.Sprint(r.lost) })
	row("per-customer order violations", func(r *report) string { return fmt.Sprint(r.violations) })
	row("time paused (summed over held orders)", func(r *report) string { return fmt.Sprintf("%.2fs", r.paused.Seconds()) })
	row("time paused (longest hold)", func(r *report) string { return fmt.Sprintf("%.2fs", r.longest.Seconds()) })
	row("orders held", func(r *report) string { return fmt.Sprint(r.held) })
	row("outage", func(r *report) string {
		return fmt.Sprintf("%.1f–%.1fs", r.outageFrom.Seconds(), r.outageTo.Seconds())
	})
	row("killed at", func(r *report) string { return fmt.Sprintf("%.2fs", r.killedAt.Seconds()) })
	row("total time", func(r *report) string { return fmt.Sprintf("%.2fs", r.elapsed.Seconds()) })
	for _, r := range reps {
		fmt.Fprintf(w, "\nchecks, %s:\n", r.name)
		r.printChecks(w)
	}
}

// pad pads s with spaces to n characters: fmt pads to n bytes, which misaligns "≤".
func pad(s string, n int) string {
	if k := utf8.RuneCountInString(s); k < n {
		return s + strings.Repeat(" ", n-k)
	}
	return s
}
