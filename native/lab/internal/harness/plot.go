package harness

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
)

// Plot geometry, in SVG user units.
const (
	panelW, panelH = 300, 220
	padL, padR     = 48, 16
	padT, padB     = 36, 44
)

// WriteLearningSVG draws the learning curves as an SVG image, one panel a set: COMP@10 (0 to
// 1) against the runs seen, the update's artifact as a solid line with dots and the full
// rebuild as a dashed line with rings (on top of each other where the two are the same bytes).
// The output depends on the curves alone, so it is deterministic.
func WriteLearningSVG(w io.Writer, curves []*LearnCurve) error {
	return WriteCurvesSVG(w, curves, PlotText{XLabel: "runs seen (sent to /v1/feedback)",
		Solid: "caskg update after each batch", Dashed: "full caskg build with the same runs"})
}

// PlotText says what a plot's x axis and its two series show.
type PlotText struct {
	XLabel string
	Solid  string // the series of LearnPoint.Update
	Dashed string // the series of LearnPoint.Rebuild; a panel whose Rebuild values are all NaN has none
}

// WriteCurvesSVG draws curves as WriteLearningSVG does, with the labels of text.
func WriteCurvesSVG(w io.Writer, curves []*LearnCurve, text PlotText) error {
	width := len(curves)*(panelW+padL+padR) + 8
	height := panelH + padT + padB + 28
	b := &svg{w: w}
	b.f(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	b.f(`<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	for k, c := range curves {
		ox := 4 + k*(panelW+padL+padR) + padL
		oy := padT
		maxX := 1
		for _, p := range c.Points {
			maxX = max(maxX, p.Seen)
		}
		x := func(n int) float64 { return float64(ox) + float64(n)/float64(maxX)*panelW }
		y := func(v float64) float64 { return float64(oy) + (1-clamp01(v))*panelH }
		b.f(`<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>`+"\n", ox, oy-14, html.EscapeString(c.Label))
		// Axes, grid and ticks.
		for _, v := range []float64{0, 0.25, 0.5, 0.75, 1} {
			b.f(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", ox, y(v), ox+panelW, y(v))
			b.f(`<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", ox-6, y(v)+4, strconv.FormatFloat(v, 'f', 2, 64))
		}
		for _, p := range c.Points {
			b.f(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#999"/>`+"\n", x(p.Seen), oy+panelH, x(p.Seen), oy+panelH+4)
			b.f(`<text x="%.1f" y="%d" text-anchor="middle">%d</text>`+"\n", x(p.Seen), oy+panelH+16, p.Seen)
		}
		b.f(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", ox, oy+panelH, ox+panelW, oy+panelH)
		b.f(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", ox, oy, ox, oy+panelH)
		b.f(`<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", ox+panelW/2, oy+panelH+32, html.EscapeString(text.XLabel))
		if k == 0 {
			b.f(`<text transform="translate(%d %d) rotate(-90)" text-anchor="middle">COMP@10</text>`+"\n", ox-36, oy+panelH/2)
		}
		// The rebuild first, dashed, so the update's solid line shows on top of it.
		if !allNaN(c.Points) {
			b.series(c.Points, x, y, func(p LearnPoint) float64 { return p.Rebuild }, `stroke="#d62728" stroke-width="2" stroke-dasharray="6 4" fill="none"`, `r="5" fill="white" stroke="#d62728" stroke-width="2"`)
		}
		b.series(c.Points, x, y, func(p LearnPoint) float64 { return p.Update }, `stroke="#1f77b4" stroke-width="2" fill="none"`, `r="3" fill="#1f77b4"`)
		last := c.Points[len(c.Points)-1]
		b.f(`<text x="%.1f" y="%.1f" text-anchor="end" fill="#1f77b4">%s</text>`+"\n", x(last.Seen)-6, y(last.Update)-8, f3(last.Update))
	}
	// Legend.
	ly := height - 12
	b.f(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#1f77b4" stroke-width="2"/><circle cx="%d" cy="%d" r="3" fill="#1f77b4"/>`+"\n", padL, ly-4, padL+30, ly-4, padL+15, ly-4)
	b.f(`<text x="%d" y="%d">%s</text>`+"\n", padL+36, ly, html.EscapeString(text.Solid))
	b.f(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#d62728" stroke-width="2" stroke-dasharray="6 4"/><circle cx="%d" cy="%d" r="5" fill="white" stroke="#d62728" stroke-width="2"/>`+"\n", padL+230, ly-4, padL+260, ly-4, padL+245, ly-4)
	b.f(`<text x="%d" y="%d">%s</text>`+"\n", padL+266, ly, html.EscapeString(text.Dashed))
	b.f("</svg>\n")
	return b.err
}

// svg writes formatted text and keeps the first error.
type svg struct {
	w   io.Writer
	err error
}

func (b *svg) f(format string, a ...any) {
	if b.err == nil {
		_, b.err = fmt.Fprintf(b.w, format, a...)
	}
}

// series draws one line through the points and a marker on each.
func (b *svg) series(ps []LearnPoint, x func(int) float64, y func(float64) float64, v func(LearnPoint) float64, line, marker string) {
	pts := ""
	for i, p := range ps {
		if i > 0 {
			pts += " "
		}
		pts += fmt.Sprintf("%.1f,%.1f", x(p.Seen), y(v(p)))
	}
	b.f(`<polyline points="%s" %s/>`+"\n", pts, line)
	for _, p := range ps {
		b.f(`<circle cx="%.1f" cy="%.1f" %s/>`+"\n", x(p.Seen), y(v(p)), marker)
	}
}

func allNaN(ps []LearnPoint) bool {
	for _, p := range ps {
		if !math.IsNaN(p.Rebuild) {
			return false
		}
	}
	return true
}

func clamp01(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return math.Max(0, math.Min(1, v))
}
