package main

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"
)

// Chart layout, in SVG user units (pixels).
const (
	labelWidth = 360 // benchmark names
	plotWidth  = 560 // the bars, on a log scale
	valueWidth = 90  // the figure after each bar
	barHeight  = 11
	barGap     = 2
	rowGap     = 12
	topMargin  = 70 // title, one line of legend, the axis labels
	legendLine = 18
	axisHeight = 30
)

// levee's implementations are drawn in teal, strongest first; the peers take the palette's
// colours in order of first appearance.
var (
	leveeColours = []string{"#0b6e69", "#4fb3aa", "#9ad5cf"}
	palette      = []string{"#c0504d", "#8064a2", "#f79646", "#4f81bd", "#9bbb59", "#7f7f7f", "#d4a017", "#d19a66", "#a5a5a5", "#e377c2", "#17becf", "#8c564b", "#2ca02c", "#1f3a93"}
)

// colours assigns each implementation its colour.
func colours(impls []string) map[string]string {
	m := make(map[string]string, len(impls))
	nl, np := 0, 0
	for _, impl := range impls {
		if strings.HasPrefix(impl, "levee") {
			m[impl] = leveeColours[nl%len(leveeColours)]
			nl++
		} else {
			m[impl] = palette[np%len(palette)]
			np++
		}
	}
	return m
}

// gomaxprocsSuffix is the -N that go test appends to benchmark names.
var gomaxprocsSuffix = regexp.MustCompile(`-\d+$`)

// WriteSVG draws one horizontal bar per implementation and benchmark row of t's unit (sec/op
// in practice), on a shared logarithmic axis in nanoseconds so that 2 ns and 20 ms fit on one
// chart, with the median written after each bar.
func WriteSVG(w io.Writer, t *Table, unit, title string) error {
	rows := t.Rows[unit]
	impls := t.Impls[unit]
	if len(rows) == 0 {
		return fmt.Errorf("chart: no rows for unit %q", unit)
	}
	scale := 1.0
	if unit == "sec/op" {
		scale = 1e9 // seconds to nanoseconds
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		for _, v := range t.Median[unit][r] {
			if v*scale > 0 {
				lo, hi = math.Min(lo, v*scale), math.Max(hi, v*scale)
			}
		}
	}
	if math.IsInf(lo, 1) {
		return fmt.Errorf("chart: no positive value for unit %q", unit)
	}
	dlo, dhi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if dhi == dlo {
		dhi++
	}
	x := func(v float64) float64 {
		return labelWidth + plotWidth*(math.Log10(v)-dlo)/(dhi-dlo)
	}

	width := labelWidth + plotWidth + valueWidth
	legendWidth := 0.0
	for _, impl := range impls {
		legendWidth += 24 + 7*float64(len(impl))
	}
	top := topMargin + legendLine*int(legendWidth/float64(width-20))
	height := top + axisHeight
	for _, r := range rows {
		height += len(t.Median[unit][r])*(barHeight+barGap) + rowGap
	}

	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	p(`<text x="10" y="20" font-size="15" font-weight="bold">%s</text>`+"\n", esc(title))

	// Legend, wrapped to the width.
	col := colours(impls)
	lx, ly := 10.0, 32
	for _, impl := range impls {
		wItem := 24 + 7*float64(len(impl))
		if lx+wItem > float64(width) {
			lx, ly = 10, ly+legendLine
		}
		p(`<rect x="%.0f" y="%d" width="12" height="12" fill="%s"/>`, lx, ly, col[impl])
		p(`<text x="%.0f" y="%d">%s</text>`+"\n", lx+16, ly+10, esc(impl))
		lx += wItem
	}

	// Decades of the axis, as grid lines labelled top and bottom.
	for d := dlo; d <= dhi; d++ {
		gx := x(math.Pow(10, d))
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`, gx, top-8, gx, height-axisHeight+4)
		lbl := esc(formatValue(math.Pow(10, d), unit))
		p(`<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>`, gx, top-12, lbl)
		p(`<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>`+"\n", gx, height-axisHeight+18, lbl)
	}

	y := top
	for _, r := range rows {
		vals := t.Median[unit][r]
		n := len(vals)
		block := n*(barHeight+barGap) - barGap
		p(`<text x="%d" y="%d" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n",
			labelWidth-8, y+block/2, esc(gomaxprocsSuffix.ReplaceAllString(r, "")))
		for _, impl := range impls {
			v, ok := vals[impl]
			if !ok || v <= 0 {
				continue
			}
			v *= scale
			bx := x(math.Pow(10, dlo))
			p(`<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %s</title></rect>`,
				bx, y, math.Max(x(v)-bx, 1), barHeight, col[impl], esc(impl), esc(formatValue(v, unit)))
			p(`<text x="%.1f" y="%d" font-size="10" fill="#333">%s %s</text>`+"\n",
				x(v)+4, y+barHeight-2, esc(impl), esc(formatValue(v, unit)))
			y += barHeight + barGap
		}
		y += rowGap - barGap
		p(`<line x1="10" y1="%d" x2="%d" y2="%d" stroke="#eee"/>`+"\n", y-rowGap/2, width-10, y-rowGap/2)
	}
	p("</svg>\n")
	return nil
}

// formatValue writes v, in nanoseconds for sec/op, with a unit a reader expects.
func formatValue(v float64, unit string) string {
	if unit != "sec/op" {
		return fmt.Sprintf("%.3g %s", v, unit)
	}
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.3g ms", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3g µs", v/1e3)
	default:
		return fmt.Sprintf("%.3g ns", v)
	}
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
