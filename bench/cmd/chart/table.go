package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Table holds the medians of a benchstat CSV report made with -col /impl: for each unit
// (sec/op, B/op, allocs/op, custom units), each row (a benchmark without its impl key) and
// each implementation, the median. Rows and implementations keep the report's order.
type Table struct {
	Units  []string
	Rows   map[string][]string // unit -> rows in order
	Impls  map[string][]string // unit -> implementations in order
	Median map[string]map[string]map[string]float64
}

// Get returns the median of impl in row for unit, and whether the report has it.
func (t *Table) Get(unit, row, impl string) (float64, bool) {
	v, ok := t.Median[unit][row][impl]
	return v, ok
}

// ParseCSV reads benchstat's -format csv output. Each table in it starts with a row naming the
// column groups (an empty cell, then the implementation over the first cell of its group) and
// a row naming the unit of each cell; data rows follow, their first cell the benchmark.
// Configuration lines ("goos: linux") and the geomean row are skipped.
func ParseCSV(r io.Reader) (*Table, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	t := &Table{
		Rows:   map[string][]string{},
		Impls:  map[string][]string{},
		Median: map[string]map[string]map[string]float64{},
	}
	var (
		groups []string // implementation by column, "" where none starts
		unit   string
	)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(rec) < 2 {
			continue // a configuration line
		}
		switch {
		case rec[0] == "" && groups == nil:
			groups = rec
			continue
		case rec[0] == "" && unit == "":
			if len(rec) < 2 || rec[1] == "" {
				return nil, fmt.Errorf("chart: no unit in header %q", rec)
			}
			unit = rec[1]
			if _, seen := t.Median[unit]; !seen {
				t.Units = append(t.Units, unit)
				t.Median[unit] = map[string]map[string]float64{}
			}
			for _, g := range groups[1:] {
				if g != "" && !contains(t.Impls[unit], g) {
					t.Impls[unit] = append(t.Impls[unit], g)
				}
			}
			continue
		case rec[0] == "":
			// The next table's group row.
			groups, unit = rec, ""
			continue
		}
		if groups == nil || unit == "" {
			return nil, fmt.Errorf("chart: data row %q before a header", rec[0])
		}
		row := rec[0]
		if row == "geomean" {
			continue
		}
		for i := 1; i < len(rec) && i < len(groups); i++ {
			if groups[i] == "" || strings.TrimSpace(rec[i]) == "" {
				continue
			}
			v, err := strconv.ParseFloat(rec[i], 64)
			if err != nil {
				return nil, fmt.Errorf("chart: %s, %s: %w", row, groups[i], err)
			}
			if t.Median[unit][row] == nil {
				t.Median[unit][row] = map[string]float64{}
				t.Rows[unit] = append(t.Rows[unit], row)
			}
			t.Median[unit][row][groups[i]] = v
		}
	}
	if len(t.Units) == 0 {
		return nil, fmt.Errorf("chart: no table in the report")
	}
	return t, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
