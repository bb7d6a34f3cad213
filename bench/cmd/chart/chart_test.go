package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parseFixture(t *testing.T) *Table {
	t.Helper()
	f, err := os.Open("testdata/benchstat.csv")
	require.NoError(t, err)
	defer f.Close()
	tb, err := ParseCSV(f)
	require.NoError(t, err)
	return tb
}

func TestParseCSVReadsTheMedianOfEachImplementation(t *testing.T) {
	tb := parseFixture(t)
	assert.Equal(t, []string{"sec/op"}, tb.Units)
	assert.Equal(t, []string{"levee", "semaphore", "chan", "failsafe", "backoff", "direct", "gobreaker", "xrate-allow", "xrate-wait", "uber"}, tb.Impls["sec/op"])

	v, ok := tb.Get("sec/op", "Bulkhead/mode=serial-2", "semaphore")
	require.True(t, ok)
	assert.InDelta(t, 4.3875e-08, v, 1e-15)
	v, ok = tb.find("sec/op", "Retry/mode=parallel", "direct")
	require.True(t, ok)
	assert.InDelta(t, 1.6755e-09, v, 1e-15)

	_, ok = tb.Get("sec/op", "Retry/mode=serial-2", "semaphore")
	assert.False(t, ok, "an empty cell is no figure")
	_, ok = tb.Get("sec/op", "geomean", "levee")
	assert.False(t, ok, "the geomean row is skipped")
}

func TestParseCSVRefusesAReportWithoutTables(t *testing.T) {
	_, err := ParseCSV(strings.NewReader("goos: linux\n"))
	assert.Error(t, err)
	_, err = ParseCSV(strings.NewReader("Bulkhead,1,2\n"))
	assert.Error(t, err)
}

func TestWriteSVGDrawsOneBarPerFigure(t *testing.T) {
	tb := parseFixture(t)
	var buf bytes.Buffer
	require.NoError(t, WriteSVG(&buf, tb, "sec/op", "title & <more>"))

	bars, figures := 0, 0
	for _, r := range tb.Rows["sec/op"] {
		figures += len(tb.Median["sec/op"][r])
	}
	dec := xml.NewDecoder(&buf)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "the SVG is well-formed XML")
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			for _, a := range se.Attr {
				if a.Name.Local == "height" && a.Value == "11" {
					bars++
				}
			}
		}
	}
	assert.Equal(t, figures, bars)
}

func TestFormatValue(t *testing.T) {
	assert.Equal(t, "26.8 ns", formatValue(26.79, "sec/op"))
	assert.Equal(t, "1.93 µs", formatValue(1931, "sec/op"))
	assert.Equal(t, "10.2 ms", formatValue(10.2e6, "sec/op"))
}

func TestGoalsReportMissingFiguresAsNotMeasured(t *testing.T) {
	gs := Goals(parseFixture(t))
	var buf bytes.Buffer
	WriteGoals(&buf, gs)
	out := buf.String()
	assert.Contains(t, out, "| 0 allocs/op on success (Bulkhead/mode=serial) |")
	assert.Contains(t, out, "not measured", "the fixture has no breaker figures")
	for _, g := range gs {
		if g.name == "Bulkhead vs x/sync/semaphore (Bulkhead/mode=serial)" {
			assert.Equal(t, "0.61x", g.value)
			assert.True(t, g.met)
		}
	}
}

func TestWriteMediansGroupsByBenchmark(t *testing.T) {
	var buf bytes.Buffer
	WriteMedians(&buf, parseFixture(t))
	out := buf.String()
	assert.Contains(t, out, "**Bulkhead**\n\n| case | levee | semaphore | chan | failsafe |\n|---|---|---|---|---|\n")
	assert.Contains(t, out, "| mode=serial | 26.8 ns | 43.9 ns | 64.7 ns | 65.6 ns |\n")
	assert.Contains(t, out, "**Retry**\n\n| case | levee | failsafe | backoff | direct |\n")
}

func TestSpliceReplacesOnlyTheMarkedSections(t *testing.T) {
	path := t.TempDir() + "/README.md"
	require.NoError(t, os.WriteFile(path, []byte("intro\n<!-- begin a -->\nold\n<!-- end a -->\nmiddle\n<!-- begin b -->\n<!-- end b -->\nend\n"), 0o644))
	require.NoError(t, Splice(path, map[string]string{"a": "new a\n", "b": "new b"}))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "intro\n<!-- begin a -->\nnew a\n<!-- end a -->\nmiddle\n<!-- begin b -->\nnew b\n<!-- end b -->\nend\n", string(b))

	assert.Error(t, Splice(path, map[string]string{"c": "x"}), "a missing section is an error")
}
