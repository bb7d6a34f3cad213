package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
)

// WriteMedians writes t's medians as Markdown, one table per benchmark (the name before the
// first '/'), a row per case and a column per implementation of that benchmark, each cell the
// median time per operation and, when the report has them, allocations and custom metrics.
func WriteMedians(w io.Writer, t *Table) {
	const timeUnit = "sec/op"
	var groups []string
	rowsOf := map[string][]string{}
	for _, r := range t.Rows[timeUnit] {
		g, _, _ := strings.Cut(r, "/")
		g = gomaxprocsSuffix.ReplaceAllString(g, "")
		if _, seen := rowsOf[g]; !seen {
			groups = append(groups, g)
		}
		rowsOf[g] = append(rowsOf[g], r)
	}
	for _, g := range groups {
		var impls []string
		for _, impl := range t.Impls[timeUnit] {
			for _, r := range rowsOf[g] {
				if _, ok := t.Get(timeUnit, r, impl); ok {
					impls = append(impls, impl)
					break
				}
			}
		}
		fmt.Fprintf(w, "\n**%s**\n\n| case | %s |\n|---%s|\n", g, strings.Join(impls, " | "), strings.Repeat("|---", len(impls)))
		for _, r := range rowsOf[g] {
			name := gomaxprocsSuffix.ReplaceAllString(r, "")
			name = strings.TrimPrefix(strings.TrimPrefix(name, g), "/")
			if name == "" {
				name = "—"
			}
			cells := make([]string, len(impls))
			for i, impl := range impls {
				cells[i] = cell(t, r, impl)
			}
			fmt.Fprintf(w, "| %s | %s |\n", name, strings.Join(cells, " | "))
		}
	}
}

// cell formats one implementation's medians for one row.
func cell(t *Table, row, impl string) string {
	v, ok := t.Get("sec/op", row, impl)
	if !ok {
		return ""
	}
	parts := []string{formatValue(v*1e9, "sec/op")}
	if a, ok := t.Get("allocs/op", row, impl); ok {
		parts = append(parts, fmt.Sprintf("%g allocs", a))
	}
	for _, u := range t.Units {
		switch u {
		case "sec/op", "B/op", "allocs/op":
			continue
		}
		x, ok := t.Get(u, row, impl)
		if !ok {
			continue
		}
		// benchstat turns a custom -ns unit into -sec: show it as a time.
		if name, isTime := strings.CutSuffix(strings.TrimSuffix(u, "/op"), "-sec"); isTime {
			parts = append(parts, name+" "+formatValue(x*1e9, "sec/op"))
		} else {
			parts = append(parts, fmt.Sprintf("%.3g %s", x, u))
		}
	}
	return strings.Join(parts, ", ")
}

// Splice replaces, in the file at path, the text between the lines "<!-- begin NAME -->" and
// "<!-- end NAME -->" with content, for each NAME of sections, and fails if a marker is
// missing, so that the README's figures are always the last run's.
func Splice(path string, sections map[string]string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for name, content := range sections {
		begin, end := "<!-- begin "+name+" -->\n", "<!-- end "+name+" -->"
		i := bytes.Index(b, []byte(begin))
		j := bytes.Index(b, []byte(end))
		if i < 0 || j < i {
			return fmt.Errorf("chart: %s has no %q ... %q section", path, strings.TrimSpace(begin), end)
		}
		var out bytes.Buffer
		out.Write(b[:i+len(begin)])
		out.WriteString(strings.TrimRight(content, "\n") + "\n")
		out.Write(b[j:])
		b = out.Bytes()
	}
	return os.WriteFile(path, b, 0o644)
}
