package main

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// figure is one thing the program measured — a count, a state, an answer, a duration — next to
// the value the article reports for it.
type figure struct {
	section string // the configuration or step the figure belongs to; "" for none
	name    string
	want    string
	got     string
	ok      bool
}

// table holds the figures of one scenario. Its trace lines are printed as they happen, so a
// scenario that waits shows its progress; the figures are printed together at the end.
type table struct {
	title   string
	mu      sync.Mutex // logf is also called by event consumers, on the goroutines of the calls
	section string
	figures []figure
}

// newTable prints the scenario's title and its configuration in one line, and returns the
// table its figures go into.
func newTable(title, config string) *table {
	fmt.Printf("\n== %s ==\n   config: %s\n", title, config)
	return &table{title: title}
}

// logf prints one informative line of the scenario's trace. Trace lines are not checked.
func (t *table) logf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Printf("   "+format+"\n", args...)
}

// step starts a group of figures (one configuration, one step of a scenario) and announces it
// in the trace.
func (t *table) step(name string) {
	t.mu.Lock()
	t.section = name
	t.mu.Unlock()
	t.logf("-- %s", name)
}

func (t *table) add(name, want, got string, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.figures = append(t.figures, figure{section: t.section, name: name, want: want, got: got, ok: ok})
}

// check records a figure that must equal the article's value exactly.
func check[T comparable](t *table, name string, want, got T) {
	t.add(name, fmt.Sprint(want), fmt.Sprint(got), want == got)
}

// within records a duration that must lie in [lo, hi): real time is never exact, so timings
// are checked against a tolerance rather than a value. A negative got means the duration could
// not be measured (the event it spans did not happen).
func within(t *table, name string, got, lo, hi time.Duration) {
	want := fmt.Sprintf("[%d, %d) ms", lo.Milliseconds(), hi.Milliseconds())
	if got < 0 {
		t.add(name, want, "missing", false)
		return
	}
	t.add(name, want, ms(got), got >= lo && got < hi)
}

// atMost records a count that must not exceed limit: an invariant, where the article warns that
// the exact value depends on how concurrent requests happen to arrive.
func atMost(t *table, name string, got, limit int64) {
	t.add(name, fmt.Sprintf("≤ %d", limit), fmt.Sprint(got), got <= limit)
}

// print writes the figures as an aligned table, a ✓ or ✗ in front of each and a heading line
// before each step's group.
func (t *table) print() {
	wName, wWant := len("figure"), len("expected")
	for _, f := range t.figures {
		wName = max(wName, utf8.RuneCountInString(f.name))
		wWant = max(wWant, utf8.RuneCountInString(f.want))
	}
	pad := func(s string, w int) string { return s + strings.Repeat(" ", w-utf8.RuneCountInString(s)) }
	fmt.Printf("     %s  %s  %s\n", pad("figure", wName), pad("expected", wWant), "measured")
	section := ""
	for _, f := range t.figures {
		if f.section != section {
			section = f.section
			fmt.Printf("   ▸ %s\n", section)
		}
		mark := "✓"
		if !f.ok {
			mark = "✗"
		}
		fmt.Printf(" %s   %s  %s  %s\n", mark, pad(f.name, wName), pad(f.want, wWant), f.got)
	}
}

// summarize prints the closing line — every figure matched, or the list of those that did not —
// and returns the exit status: 0 only when every figure matched.
func summarize(tables []*table, took time.Duration) int {
	total := 0
	var wrong []string
	for _, t := range tables {
		for _, f := range t.figures {
			total++
			if !f.ok {
				where, _, _ := strings.Cut(t.title, " ") // the scenario's number, "3."
				if f.section != "" {
					where += " " + f.section + " /"
				}
				wrong = append(wrong, fmt.Sprintf("  ✗ %s %s: expected %s, measured %s", where, f.name, f.want, f.got))
			}
		}
	}
	fmt.Println()
	if len(wrong) == 0 {
		fmt.Printf("all %d figures match the articles' (%.1f s)\n", total, took.Seconds())
		return 0
	}
	fmt.Printf("%d of %d figures differ from the articles' (%.1f s):\n%s\n",
		len(wrong), total, took.Seconds(), strings.Join(wrong, "\n"))
	return 1
}

// ms formats a duration in milliseconds with one decimal.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}

// runs abbreviates a sequence by its runs of equal values: "CLOSED ×4, OPEN ×4".
func runs(seq []string) string {
	var parts []string
	for i := 0; i < len(seq); {
		j := i
		for j < len(seq) && seq[j] == seq[i] {
			j++
		}
		parts = append(parts, fmt.Sprintf("%s ×%d", seq[i], j-i))
		i = j
	}
	return strings.Join(parts, ", ")
}
