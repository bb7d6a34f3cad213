package main

import (
	"fmt"
	"io"
	"strings"
)

// find returns the median of impl in the row named row (without its -N suffix) for unit.
func (t *Table) find(unit, row, impl string) (float64, bool) {
	for _, r := range t.Rows[unit] {
		if gomaxprocsSuffix.ReplaceAllString(r, "") == row {
			return t.Get(unit, r, impl)
		}
	}
	return 0, false
}

// goal is one line of the goals table.
type goal struct {
	name     string
	measured string // the figures the verdict rests on
	value    string // the ratio or figure compared with the target
	target   string
	met      bool
	missing  bool // a figure the goal needs is not in the report
}

// Goals checks the goals against t and returns one line per goal and measurement.
func Goals(t *Table) []goal {
	var gs []goal
	ns := func(row, impl string) (float64, bool) {
		v, ok := t.find("sec/op", row, impl)
		return v * 1e9, ok
	}
	ratio := func(name, row, a, b string, max float64) {
		va, oka := ns(row, a)
		vb, okb := ns(row, b)
		if !oka || !okb {
			gs = append(gs, goal{name: name + " (" + row + ")", missing: true, target: fmt.Sprintf("≤ %.2gx", max)})
			return
		}
		r := va / vb
		gs = append(gs, goal{
			name:     name + " (" + row + ")",
			measured: fmt.Sprintf("%s %s, %s %s", a, nsString(va), b, nsString(vb)),
			value:    fmt.Sprintf("%.2fx", r),
			target:   fmt.Sprintf("≤ %.2gx", max),
			met:      r <= max,
		})
	}
	// info reports a ratio the issue measures without setting a goal for it.
	info := func(name, row, a, b string) {
		va, oka := ns(row, a)
		vb, okb := ns(row, b)
		g := goal{name: name, target: "(no goal)", missing: !oka || !okb}
		if !g.missing {
			g.measured = fmt.Sprintf("%s %s, %s %s", a, nsString(va), b, nsString(vb))
			g.value = fmt.Sprintf("%.2fx", va/vb)
		}
		gs = append(gs, g)
	}
	// noAllocs checks that levee allocates nothing in row; what says which path the row measures.
	noAllocs := func(what, row string) {
		v, ok := t.find("allocs/op", row, "levee")
		g := goal{name: "0 allocs/op " + what + " (" + row + ")", target: "0", missing: !ok}
		if ok {
			g.measured = fmt.Sprintf("levee %g allocs/op", v)
			g.value = fmt.Sprintf("%g", v)
			g.met = v == 0
		}
		gs = append(gs, g)
	}
	modes := []string{"serial", "parallel"}

	for _, row := range []string{
		"Breaker/window=count100/load=success", "Breaker/window=time60s/load=success",
		"Limiter/load=available", "Bulkhead", "Retry", "Pipeline",
	} {
		for _, m := range modes {
			noAllocs("on success", row+"/mode="+m)
		}
	}
	for _, m := range modes {
		row := "Breaker/window=count100/load=success/mode=" + m
		ratio("Breaker successful call vs gobreaker Execute", row, "levee", "gobreaker", 0.5)
		ratio("Breaker successful call vs failsafe-go executor", row, "levee", "failsafe", 0.1)
	}
	for _, m := range modes {
		row := "Breaker/window=count100/load=rejected/mode=" + m
		ratio("Breaker rejection vs gobreaker's rejection", row, "levee", "gobreaker", 0.5)
		noAllocs("on rejection", row)
	}
	for _, m := range modes {
		ratio("Limiter acquire vs x/time/rate Allow", "Limiter/load=available/mode="+m, "levee", "xrate-allow", 0.5)
	}
	for _, m := range modes {
		ratio("Bulkhead vs x/sync/semaphore", "Bulkhead/mode="+m, "levee", "semaphore", 1.2)
	}
	for _, m := range modes {
		ratio("Default pipeline vs failsafe-go composition", "Pipeline/mode="+m, "levee", "failsafe", 0.1)
	}

	// Per emission, with each library's default channels (buffer=0) and with buffers of 128.
	for _, buf := range []string{"buffer=0", "buffer=128"} {
		row := "StreamMap/" + buf
		ratio("Stream Map, no pattern, vs a plain channel stage", row, "levee", "chan", 1.2)
		chanNs, ok1 := ns(row, "chan")
		pipeNs, ok2 := ns(row, "levee-pipeline")
		callNs, ok3 := ns("Pipeline/mode=serial", "levee")
		g := goal{name: "Stream Map, default pipeline, vs 1.2 x plain stage + the pipeline's per-call cost (" + row + ")", missing: !(ok1 && ok2 && ok3)}
		if !g.missing {
			bound := 1.2*chanNs + callNs
			g.measured = fmt.Sprintf("levee-pipeline %s; 1.2 x chan %s + Pipeline/mode=serial levee %s", nsString(pipeNs), nsString(chanNs), nsString(callNs))
			g.value = nsString(pipeNs)
			g.target = "≤ " + nsString(bound)
			g.met = pipeNs <= bound
		}
		gs = append(gs, g)
		ratio("Stream Map, no pattern, vs rxgo Map", row, "levee", "rxgo", 0.5)
		ratio("Stream Map, default pipeline, vs rxgo Map", row, "levee-pipeline", "rxgo", 0.5)
		for _, impl := range []string{"levee", "levee-pipeline"} {
			v, ok := t.find("allocs/elem", row, impl)
			g := goal{name: "0 allocs per element (" + row + ", " + impl + ")", target: "0 (< 0.001: set-up amortised)", missing: !ok}
			if ok {
				g.measured = fmt.Sprintf("%s %.2g allocs/elem", impl, v)
				g.value = fmt.Sprintf("%.2g", v)
				g.met = v < 0.001
			}
			gs = append(gs, g)
		}
		info("levee operators.Map vs rxgo Map (OperatorsMap/"+buf+")", "OperatorsMap/"+buf, "levee", "rxgo")
	}

	// Time limiter latency.
	for _, impl := range []string{"levee", "failsafe", "ctxtimeout"} {
		// benchstat's names for late-ns/op and max-late-ns.
		mean, ok1 := t.find("late-sec/op", "TimeoutLatency", impl)
		worst, ok2 := t.find("max-late-sec", "TimeoutLatency", impl)
		ok := ok1 && ok2
		g := goal{name: "Answer within 1 ms of the deadline, call ignoring its context (TimeoutLatency, " + impl + ")", missing: !ok}
		if ok {
			g.measured = fmt.Sprintf("%s late by %.3g ms on average, %.3g ms at worst (median of the samples' worst)", impl, mean*1e3, worst*1e3)
			g.value = fmt.Sprintf("%.3g ms", worst*1e3)
		}
		v := worst * 1e9
		if impl == "levee" {
			g.target = "≤ 1 ms"
			g.met = ok && v <= 1e6
		} else {
			g.target = "(peer: returns with the call)"
			g.met = true
		}
		gs = append(gs, g)
	}
	return gs
}

func nsString(v float64) string { return formatValue(v, "sec/op") }

// WriteGoals writes gs as a Markdown table.
func WriteGoals(w io.Writer, gs []goal) {
	fmt.Fprintln(w, "| goal | measured (medians) | value | target | verdict |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- |")
	for _, g := range gs {
		verdict := "missed"
		switch {
		case g.missing:
			verdict = "not measured"
		case strings.HasPrefix(g.target, "("):
			verdict = "—"
		case g.met:
			verdict = "met"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", g.name, g.measured, g.value, g.target, verdict)
	}
}
