package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The closing summary: every part adds its headline figures (a value on
// each server and the ratio zredis/redis) to one table, printed at the
// end, written as CSV and drawn as one SVG bar chart of the ratios.
// Where a part measures another reference than redis-server 7.0 (redis
// 7.4, valkey), that reference's figures are rows of their own in
// sections that name it ("..., vs valkey"), with its value in the redis
// column: the table and the CSV keep their columns.

// Which way a figure is better, for the plot's colours and the table's
// lead/trail column.
const (
	neither = 0
	higher  = 1 // throughput
	lower   = -1
)

// figure is one row of the summary.
type figure struct {
	section string // the part and what it measures: "throughput", "memory (RSS)", ...
	name    string
	unit    string
	z, r    float64 // zredis's and redis's value; NaN where there is none (a geomean)
	ratio   float64 // zredis/redis; NaN where there is none
	better  int     // higher, lower or neither; neither is not plotted
}

// leads reports whether zredis leads (+1), trails (-1) or neither (0:
// no ratio, or one that shows as 1.00).
func (f figure) leads() int {
	if math.IsNaN(f.ratio) || math.Abs(f.ratio-1) < 0.005 || f.better == neither {
		return 0
	}
	if (f.ratio > 1) == (f.better == higher) {
		return 1
	}
	return -1
}

type summaryTable struct {
	figs []figure
}

func (t *summaryTable) add(f figure) { t.figs = append(t.figs, f) }

// hasOtherRefs reports whether a section has another reference than
// redis-server 7.0 (", vs X").
func (t *summaryTable) hasOtherRefs() bool {
	return slices.ContainsFunc(t.figs, func(f figure) bool { return strings.Contains(f.section, ", vs ") })
}

// grouped is the figures with each section's together, sections in the
// order they first appear, figures within one in the order added.
func (t *summaryTable) grouped() []figure {
	rank := map[string]int{}
	for _, f := range t.figs {
		if _, ok := rank[f.section]; !ok {
			rank[f.section] = len(rank)
		}
	}
	out := slices.Clone(t.figs)
	slices.SortStableFunc(out, func(a, b figure) int { return rank[a.section] - rank[b.section] })
	return out
}

// ratioOf is a/b, NaN when b is 0.
func ratioOf(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// geomean is the geometric mean of the positive, finite xs (NaN when
// there are none).
func geomean(xs []float64) float64 {
	var sum float64
	n := 0
	for _, x := range xs {
		if x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) {
			sum += math.Log(x)
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return math.Exp(sum / float64(n))
}

// num formats a figure's value for the table: "-" for NaN, integers and
// values from 1000 up without decimals, others with one decimal from 10
// up and three below.
func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) >= 1000 || v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

func (t *summaryTable) print(w io.Writer, self bool) {
	if len(t.figs) == 0 {
		return
	}
	fmt.Fprintln(w, "summary: every figure of this run; ratio = zredis/redis (lead/trail: whether zredis is ahead, by the figure's direction)")
	if t.hasOtherRefs() {
		fmt.Fprintln(w, "a section \"..., vs X\" has X in the redis column and its ratio is zredis/X")
	}
	if self {
		fmt.Fprintln(w, "noise floor run: the \"zredis\" column is a second redis-server")
	}
	// Wide enough for the longest section ("memory (RSS, purged), vs
	// valkey"), so that the columns stay aligned.
	secW := 24
	for _, f := range t.figs {
		secW = max(secW, len(f.section))
	}
	fmt.Fprintf(w, "%-*s %-32s %-7s %12s %12s %7s %s\n", secW, "section", "figure", "unit", "zredis", "redis", "ratio", "")
	for _, f := range t.grouped() {
		mark := ""
		switch f.leads() {
		case 1:
			mark = "lead"
		case -1:
			mark = "trail"
		}
		ratio := "-"
		if !math.IsNaN(f.ratio) {
			ratio = strconv.FormatFloat(f.ratio, 'f', 2, 64)
		}
		fmt.Fprintf(w, "%-*s %-32s %-7s %12s %12s %7s %s\n", secW, f.section, f.name, f.unit, num(f.z), num(f.r), ratio, mark)
	}
	fmt.Fprintln(w)
}

// writeCSV writes the summary with a header row; a missing value is an
// empty field.
func (t *summaryTable) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"section", "figure", "unit", "zredis", "redis", "ratio", "better"})
	field := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	for _, f := range t.grouped() {
		better := ""
		switch f.better {
		case higher:
			better = "higher"
		case lower:
			better = "lower"
		}
		cw.Write([]string{f.section, f.name, f.unit, field(f.z), field(f.r), field(f.ratio), better})
	}
	cw.Flush()
	return cw.Error()
}

// The plot's geometry, in SVG user units (pixels).
const (
	svgWidth   = 960
	svgLabelW  = 330 // the labels' column
	svgRight   = 70  // room for the value beyond the longest bar
	svgRowH    = 16
	svgTop     = 64 // title and axis labels
	svgMaxSpan = 2  // the axis reaches at most 2^2 either side of 1.0: 0.25 to 4
)

// writeSVG draws every plotted figure's ratio as a horizontal bar from
// 1.0 on a log2 axis, grouped by section: green where zredis leads, red
// where it trails, with the line at 1.0 drawn across. Bars beyond the
// axis are cut at its end and marked with their value.
func (t *summaryTable) writeSVG(w io.Writer, title string) error {
	var figs []figure
	span := 1.0 // log2 of the axis's reach either side of 1.0
	for _, f := range t.grouped() {
		if f.better == neither || math.IsNaN(f.ratio) || f.ratio <= 0 {
			continue
		}
		figs = append(figs, f)
		span = max(span, math.Ceil(math.Abs(math.Log2(f.ratio))*2)/2)
	}
	span = min(span, svgMaxSpan)
	sections := 0
	for i, f := range figs {
		if i == 0 || figs[i-1].section != f.section {
			sections++
		}
	}
	height := svgTop + (len(figs)+sections)*svgRowH + 40
	x0, x1 := float64(svgLabelW+40), float64(svgWidth-svgRight) // room for a value left of a bar
	xOf := func(ratio float64) float64 {
		l := max(-span, min(span, math.Log2(ratio)))
		return x0 + (l+span)/(2*span)*(x1-x0)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n",
		svgWidth, height, svgWidth, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="8" y="18" font-size="14" font-weight="bold">%s</text>`+"\n", xmlText(title))
	ref := "redis-server"
	if t.hasOtherRefs() {
		ref = `redis-server (zredis/X in a section "vs X")`
	}
	fmt.Fprintf(&b, `<text x="8" y="34" fill="#444">ratio zredis/%s per figure, log scale; green: zredis leads, red: zredis trails (by the figure's direction)</text>`+"\n", xmlText(ref))
	// Grid lines and their labels at ratios inside the axis.
	bottom := height - 30
	for _, g := range []float64{0.125, 0.25, 0.5, 0.67, 0.8, 1, 1.25, 1.5, 2, 4, 8} {
		if math.Abs(math.Log2(g)) > span+1e-9 {
			continue
		}
		x := xOf(g)
		stroke, width := "#ddd", 1
		if g == 1 {
			stroke, width = "#000", 2
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="%d"/>`+"\n", x, svgTop-8, x, bottom, stroke, width)
		label := strconv.FormatFloat(g, 'g', 3, 64)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#444">%s</text>`+"\n", x, svgTop-12, label)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#444">%s</text>`+"\n", x, bottom+14, label)
	}
	y := svgTop
	for i, f := range figs {
		if i == 0 || figs[i-1].section != f.section {
			dir := "higher is better"
			if f.better == lower {
				dir = "lower is better"
			}
			head := f.section + " (" + dir + ")"
			if unit := sectionUnit(figs[i:]); unit != "" {
				head = f.section + " (" + unit + ", " + dir + ")"
			}
			fmt.Fprintf(&b, `<text x="8" y="%d" font-weight="bold">%s</text>`+"\n", y+svgRowH-4, xmlText(head))
			y += svgRowH
		}
		fill := "#999"
		switch f.leads() {
		case 1:
			fill = "#2a9d3a"
		case -1:
			fill = "#d1495b"
		}
		xa, xb := xOf(1), xOf(f.ratio)
		left, wid := min(xa, xb), math.Abs(xb-xa)
		label := f.name
		if sectionUnit(figs[sectionStart(figs, i):]) == "" {
			label += " (" + f.unit + ")"
		}
		weight := "normal"
		if strings.Contains(f.name, "geomean") {
			weight = "bold"
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" font-weight="%s">%s</text>`+"\n", svgLabelW-8, y+svgRowH-4, weight, xmlText(label))
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %.3f</title></rect>`+"\n",
			left, y+2, max(wid, 1), svgRowH-4, fill, xmlText(f.section+" "+f.name), f.ratio)
		tx, anchor := xb+4, "start"
		if f.ratio < 1 {
			tx, anchor = xb-4, "end"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="%s" fill="#222">%.2f</text>`+"\n", tx, y+svgRowH-4, anchor, f.ratio)
		y += svgRowH
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// sectionUnit is the unit of every figure of the section figs starts
// with, "" when they differ.
func sectionUnit(figs []figure) string {
	for _, f := range figs[1:] {
		if f.section != figs[0].section {
			break
		}
		if f.unit != figs[0].unit {
			return ""
		}
	}
	return figs[0].unit
}

// sectionStart is the index of the first figure of figs[i]'s section.
func sectionStart(figs []figure, i int) int {
	for i > 0 && figs[i-1].section == figs[i].section {
		i--
	}
	return i
}

// xmlText escapes s for SVG text and attribute values.
func xmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
