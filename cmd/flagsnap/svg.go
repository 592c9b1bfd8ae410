package main

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// The chart's geometry, in SVG user units.
const (
	svgWidth   = 800
	svgMargin  = 20
	svgLabelW  = 170 // room for variant names left of the bars
	svgBarArea = 420 // a bar this long is 100%
	svgRowH    = 30
	svgBarH    = 20
	svgCellW   = 90
)

// palette colours the variants, in row order.
var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

// writeSVG draws the distribution as one bar per outcome, with a dashed
// mark at each configured weight, and with --against the transition matrix
// below it, each cell shaded by its share of the users.
func writeSVG(out io.Writer, r *simReport) error {
	w := bufio.NewWriter(out)
	rowsH := svgRowH * len(r.Variants)
	height := svgMargin + 40 + rowsH + svgMargin
	width := svgWidth
	var matrixTop int
	if a := r.Against; a != nil {
		matrixTop = height + 30
		height = matrixTop + 50 + svgRowH*len(r.Variants) + svgMargin
		width = max(width, svgMargin+svgLabelW+svgCellW*len(a.Variants)+svgMargin)
	}
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13">
`, width, height, width, height)
	fmt.Fprintf(w, `<rect width="100%%" height="100%%" fill="#ffffff"/>
<text x="%d" y="%d" font-size="15" font-weight="bold">%s</text>
`, svgMargin, svgMargin+12, xmlEscape(fmt.Sprintf("%s in %s: %s users, fractional %s", r.Flag, r.File, thousands(r.Users), r.Fractional)))

	top := svgMargin + 40
	for i, v := range r.Variants {
		y := top + i*svgRowH
		x := svgMargin + svgLabelW
		fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="end">%s</text>
`, x-8, y+15, xmlEscape(v.Variant))
		fmt.Fprintf(w, `<rect class="bar" data-variant="%s" x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %s users, %.2f%%</title></rect>
`, xmlEscape(v.Variant), x, y, v.Share*svgBarArea, svgBarH, palette[i%len(palette)], xmlEscape(v.Variant), thousands(v.Users), 100*v.Share)
		label := fmt.Sprintf("%.2f%%", 100*v.Share)
		if r.Weighted {
			wx := float64(x) + v.Weight*svgBarArea
			fmt.Fprintf(w, `<line class="weight" x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#333333" stroke-width="2" stroke-dasharray="3,2"/>
`, wx, wx, y-3, y+svgBarH+3)
			label += fmt.Sprintf(" (weight %.2f%%)", 100*v.Weight)
		}
		fmt.Fprintf(w, `<text x="%d" y="%d">%s</text>
`, x+svgBarArea+8, y+15, xmlEscape(label))
	}

	if a := r.Against; a != nil {
		writeSVGMatrix(w, r, matrixTop)
	}
	fmt.Fprintln(w, "</svg>")
	return w.Flush()
}

// writeSVGMatrix draws the transition matrix of an --against run from
// top down: a row per variant in FILE, a column per variant in the file
// compared with.
func writeSVGMatrix(w io.Writer, r *simReport, top int) {
	a := r.Against
	fmt.Fprintf(w, `<text x="%d" y="%d" font-size="15" font-weight="bold">%s</text>
`, svgMargin, top, xmlEscape(fmt.Sprintf("against %s, fractional %s: %.2f%% of users get another variant", a.File, a.Fractional, 100*a.ChangedPct)))
	users := map[[2]string]int{}
	for _, t := range a.Transitions {
		users[[2]string{t.From, t.To}] = t.Users
	}
	left := svgMargin + svgLabelW
	head := top + 30
	for j, to := range a.Variants {
		fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="middle">%s</text>
`, left+j*svgCellW+svgCellW/2, head, xmlEscape(to.Variant))
	}
	for i, from := range r.Variants {
		y := head + 10 + i*svgRowH
		fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="end">%s</text>
`, left-8, y+19, xmlEscape(from.Variant))
		for j, to := range a.Variants {
			n := users[[2]string{from.Variant, to.Variant}]
			share := float64(n) / float64(r.Users)
			x := left + j*svgCellW
			fmt.Fprintf(w, `<rect class="cell" data-from="%s" data-to="%s" x="%d" y="%d" width="%d" height="%d" fill="#4e79a7" fill-opacity="%.3f" stroke="#cccccc"><title>%s → %s: %s users</title></rect>
`, xmlEscape(from.Variant), xmlEscape(to.Variant), x, y, svgCellW, svgRowH, 0.05+0.95*share, xmlEscape(from.Variant), xmlEscape(to.Variant), thousands(n))
			fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="middle">%s</text>
`, x+svgCellW/2, y+19, thousands(n))
		}
	}
}

// xmlEscape escapes text for XML content and attribute values.
func xmlEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
