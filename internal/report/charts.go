package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/streambench/streambench-operator/internal/results"
)

// Chart sizes in points; the page scales the SVG to its column width (the
// viewBox is kept), so these fix the aspect ratio and the text size.
const (
	wideW, wideH = 880, 330
	halfW, halfH = 440, 270
)

// rgb parses "#rrggbb".
func rgb(hex string) color.RGBA {
	v, _ := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}

// Colors of the series, shared by the charts and the HTML legends.
const (
	colPublish   = "#2563eb"
	colCorrected = "#7c3aed"
	colEndToEnd  = "#ea580c"
	colConsume   = "#16a34a"
	colDrain     = "#0891b2"
	colBacklog   = "#db2777"
)

// runPalette colours the runs of a comparison; it repeats past 8 runs (the
// legend still tells the runs apart by name and dash).
var runPalette = []string{"#2563eb", "#ea580c", "#16a34a", "#9333ea", "#dc2626", "#0891b2", "#ca8a04", "#4b5563"}

// line is one series of a chart.
type line struct {
	Name   string
	Color  string
	Dashed bool
	XY     plotter.XYs
}

// legendItem is what the HTML legend under a chart shows for a line.
type legendItem struct {
	Name   string
	Color  string
	Dashed bool
}

// chart is a rendered chart: inline SVG and its legend.
type chart struct {
	ID     string
	Title  string
	Note   string
	SVG    template.HTML
	Legend []legendItem
}

// band shades a phase of the run behind the time series.
type band struct {
	From, To float64
	Label    string
}

// bandPlotter draws phase bands with their names at the top.
type bandPlotter struct {
	bands []band
	label draw.TextStyle
}

var bandColors = []color.Color{
	color.RGBA{R: 241, G: 245, B: 249, A: 255},
	color.RGBA{R: 226, G: 232, B: 240, A: 255},
}

func (b bandPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for i, bd := range b.bands {
		x0, x1 := trX(math.Max(bd.From, p.X.Min)), trX(math.Min(bd.To, p.X.Max))
		if x1 <= x0 {
			continue
		}
		c.FillPolygon(bandColors[i%2], []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
		if bd.Label != "" && b.label.Width(bd.Label) < x1-x0-4 {
			c.FillText(b.label, vg.Point{X: x0 + 3, Y: c.Max.Y - 3}, bd.Label)
		}
	}
}

// colFault marks the faults on the time charts.
const colFault = "#dc2626"

// faultMark is one fault on a time chart: its injection and, when it came
// within the run, its clearing, in the chart's x unit.
type faultMark struct {
	At      float64
	Cleared *float64
	Label   string
}

// faultPlotter draws each fault as a solid line at its injection, labelled
// F<index>, a dashed line at its clearing and a translucent band between:
// where the series dip and the p99 climbs is read against when the fault
// was on. A fault not cleared within the run has its line only (a band to
// the chart's end would claim it lasted that long).
type faultPlotter struct {
	marks []faultMark
	label draw.TextStyle
}

func (f faultPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	col := rgb(colFault)
	const a = 0x30
	fill := color.RGBA{R: uint8(uint16(col.R) * a / 0xff), G: uint8(uint16(col.G) * a / 0xff), B: uint8(uint16(col.B) * a / 0xff), A: a}
	in := func(x float64) bool { return x >= p.X.Min && x <= p.X.Max }
	for _, m := range f.marks {
		if m.Cleared != nil && *m.Cleared > m.At {
			x0, x1 := trX(math.Max(m.At, p.X.Min)), trX(math.Min(*m.Cleared, p.X.Max))
			if x1 > x0 {
				c.FillPolygon(fill, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
			}
			if in(*m.Cleared) {
				x := trX(*m.Cleared)
				c.StrokeLine2(draw.LineStyle{Color: col, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}, x, c.Min.Y, x, c.Max.Y)
			}
		}
		if !in(m.At) {
			continue
		}
		x := trX(m.At)
		c.StrokeLine2(draw.LineStyle{Color: col, Width: vg.Points(1.2)}, x, c.Min.Y, x, c.Max.Y)
		c.FillText(f.label, vg.Point{X: x + 2, Y: c.Max.Y - 14}, m.Label)
	}
}

// newPlot returns a plot in the report's style: sans-serif text, light grid.
func newPlot(xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	sans := func(size vg.Length) font.Font {
		return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
	}
	grey := rgb("#334155")
	p.Title.TextStyle.Font = sans(12)
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = sans(11)
		ax.Label.TextStyle.Color = grey
		ax.Tick.Label.Font = sans(10)
		ax.Tick.Label.Color = grey
		ax.Color = rgb("#94a3b8")
		ax.Tick.Color = rgb("#94a3b8")
		ax.Padding = 0
	}
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	g := plotter.NewGrid()
	g.Vertical.Color = rgb("#e2e8f0")
	g.Horizontal.Color = rgb("#e2e8f0")
	p.Add(g)
	return p
}

// addLines adds the series; empty series are left out of chart and legend.
func addLines(p *plot.Plot, lines []line) ([]legendItem, error) {
	var legend []legendItem
	for _, l := range lines {
		if len(l.XY) == 0 {
			continue
		}
		pl, err := plotter.NewLine(l.XY)
		if err != nil {
			return nil, fmt.Errorf("series %q: %w", l.Name, err)
		}
		pl.LineStyle.Color = rgb(l.Color)
		pl.LineStyle.Width = vg.Points(1.8)
		if l.Dashed {
			pl.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(pl)
		legend = append(legend, legendItem{Name: l.Name, Color: l.Color, Dashed: l.Dashed})
	}
	return legend, nil
}

// svgOf draws the plot and returns it as an inline <svg> element.
func svgOf(p *plot.Plot, w, h float64, label string) (template.HTML, error) {
	c := vgsvg.New(vg.Points(w), vg.Points(h))
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", err
	}
	s := buf.String()
	// Drop the XML prolog and the generator comment: the SVG sits inside
	// HTML. The page scales it (CSS width:100%), keeping the viewBox.
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	s = strings.Replace(s, "<svg ", `<svg role="img" aria-label="`+template.HTMLEscapeString(label)+`" `, 1)
	return template.HTML(s), nil // #nosec: produced by vgsvg, which escapes every text it draws
}

// nines maps a percentile to the x of the classic HDR percentile plot:
// one unit per "nine" (90 → 1, 99 → 2, 99.9 → 3, …), so the tail gets as
// much room as the median.
func nines(percentile float64) float64 {
	return -math.Log10((100 - percentile) / 100)
}

// ninesTicks labels the nines axis 0, 50, 90, 99, 99.9, ….
type ninesTicks struct{}

func (ninesTicks) Ticks(min, max float64) []plot.Tick {
	ticks := []plot.Tick{{Value: 0, Label: "0"}, {Value: nines(50), Label: "50"}}
	for n := 1; float64(n) <= max+1e-9; n++ {
		p := 100 - 100*math.Pow(10, -float64(n))
		ticks = append(ticks, plot.Tick{Value: float64(n), Label: strconv.FormatFloat(p, 'f', -1, 64)})
	}
	return ticks
}

// logTicks labels a log axis at 1, 2, 5 × 10^k when the range spans few
// decades (gonum's LogTicks labels powers of ten only, which leaves a 2–40 ms
// range with a single label), and at powers of ten otherwise.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if min <= 0 || max <= min {
		return nil
	}
	lo, hi := math.Floor(math.Log10(min)), math.Ceil(math.Log10(max))
	steps := []float64{1, 2, 5}
	if hi-lo > 4 {
		steps = []float64{1}
	}
	var ticks []plot.Tick
	for e := lo; e <= hi; e++ {
		for m := 1.0; m < 10; m++ {
			v := m * math.Pow(10, e)
			if v < min*0.999 || v > max*1.001 {
				continue
			}
			t := plot.Tick{Value: v}
			for _, s := range steps {
				if m == s {
					t.Label = trimFloat(v)
				}
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

func trimFloat(v float64) string {
	if v >= 1000 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// msFloor keeps latencies plottable on a log axis: an end-to-end latency of
// 0 (clock skew, see LatencyDetail.Negative) would be minus infinity.
const msFloor = 0.001

// logRange returns the y range of a log axis that holds every point, widened
// to whole 1-2-5 steps so the curves do not touch the frame.
func logRange(lines []line) (float64, float64, bool) {
	min, max := math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		for _, p := range l.XY {
			min, max = math.Min(min, p.Y), math.Max(max, p.Y)
		}
	}
	if math.IsInf(min, 0) {
		return 0, 0, false
	}
	if max <= min {
		max = min * 10
	}
	return stepDown(min), stepUp(max), true
}

func stepDown(v float64) float64 {
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{5, 2, 1} {
		if m*e <= v {
			return m * e
		}
	}
	return e
}

func stepUp(v float64) float64 {
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*e >= v {
			return m * e
		}
	}
	return 10 * e
}

// spread is the shaded interval around a line: at each x of Low, from
// Low's y to High's (the same x, in the same order).
type spread struct {
	Color     string
	Low, High plotter.XYs
}

// spreadPlotter draws spreads as translucent bands, under the lines.
type spreadPlotter []spread

func (s spreadPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, sp := range s {
		if len(sp.Low) < 2 || len(sp.High) != len(sp.Low) {
			continue
		}
		pts := make([]vg.Point, 0, 2*len(sp.Low))
		for _, q := range sp.Low {
			pts = append(pts, vg.Point{X: trX(q.X), Y: trY(q.Y)})
		}
		for i := len(sp.High) - 1; i >= 0; i-- {
			pts = append(pts, vg.Point{X: trX(sp.High[i].X), Y: trY(sp.High[i].Y)})
		}
		// Translucent, premultiplied as color.RGBA is: a band over another
		// still shows both.
		col := rgb(sp.Color)
		const a = 0x40
		col = color.RGBA{R: uint8(uint16(col.R) * a / 0xff), G: uint8(uint16(col.G) * a / 0xff), B: uint8(uint16(col.B) * a / 0xff), A: a}
		c.FillPolygon(col, c.ClipPolygonXY(pts))
	}
}

// quantileChart is the HDR percentile plot: x in nines, y in ms on a log
// scale; spreads, if any, are shaded under the lines.
func quantileChart(id, title string, lines []line, spreads []spread, w, h float64) (*chart, error) {
	p := newPlot("percentile", "latency (ms, log scale)")
	all := append([]line(nil), lines...)
	for _, sp := range spreads {
		all = append(all, line{XY: sp.Low}, line{XY: sp.High})
	}
	lo, hi, ok := logRange(all)
	if !ok {
		return nil, nil
	}
	if len(spreads) > 0 {
		p.Add(spreadPlotter(spreads))
	}
	legend, err := addLines(p, lines)
	if err != nil {
		return nil, err
	}
	maxX := 0.0
	for _, l := range lines {
		for _, pt := range l.XY {
			maxX = math.Max(maxX, pt.X)
		}
	}
	p.X.Min, p.X.Max = 0, math.Max(2, math.Ceil(maxX-1e-6))
	p.X.Tick.Marker = ninesTicks{}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Y.Min, p.Y.Max = lo, hi
	svg, err := svgOf(p, w, h, title)
	if err != nil {
		return nil, err
	}
	return &chart{ID: id, Title: title, SVG: svg, Legend: legend}, nil
}

// curveXY turns a quantile curve into plot points. Percentile 100 (the
// maximum) has no place on a nines axis; the curve's last nines carry it.
// With samples known (> 0), the curve stops at the nines the samples
// resolve: 120,000 samples say nothing about the 99.99999th percentile (the
// curves go that far), and a flat line out there would only squeeze the
// part of the chart that means something.
func curveXY(pts []results.CurvePoint, samples int64) plotter.XYs {
	maxX := math.Inf(1)
	if samples > 0 {
		maxX = math.Max(2, math.Ceil(math.Log10(float64(samples))))
	}
	var xy plotter.XYs
	for _, p := range pts {
		if p.Percentile >= 100 || p.Percentile < 0 || nines(p.Percentile) > maxX+1e-6 {
			continue
		}
		xy = append(xy, plotter.XY{X: nines(p.Percentile), Y: math.Max(p.Ms, msFloor)})
	}
	return xy
}

// timeChart plots series over the run's time, with the phases shaded.
// Faults, if any, are marked over the bands and under the lines.
func timeChart(id, title, yLabel string, xUnit timeUnit, bands []band, marks []faultMark, lines []line, logY bool, w, h float64) (*chart, error) {
	any := false
	for _, l := range lines {
		any = any || len(l.XY) > 0
	}
	if !any {
		return nil, nil
	}
	p := newPlot("time since start ("+xUnit.name+")", yLabel)
	label := draw.TextStyle{
		Color:   rgb("#64748b"),
		Font:    font.From(p.X.Tick.Label.Font, 9),
		XAlign:  draw.XLeft,
		YAlign:  draw.YTop,
		Handler: p.X.Tick.Label.Handler,
	}
	p.Add(bandPlotter{bands: bands, label: label})
	if len(marks) > 0 {
		fl := label
		fl.Color = rgb(colFault)
		p.Add(faultPlotter{marks: marks, label: fl})
	}
	legend, err := addLines(p, lines)
	if err != nil {
		return nil, err
	}
	if len(marks) > 0 {
		legend = append(legend, legendItem{Name: "fault: injected (solid, F<index>) to cleared (dashed)", Color: colFault})
	}
	if len(bands) > 0 {
		p.X.Min, p.X.Max = bands[0].From, bands[len(bands)-1].To
	}
	if logY {
		lo, hi, _ := logRange(lines)
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
		p.Y.Min, p.Y.Max = lo, hi
	} else {
		p.Y.Min = 0
		if p.Y.Max <= 0 {
			p.Y.Max = 1
		}
		p.Y.Max *= 1.1
	}
	svg, err := svgOf(p, w, h, title)
	if err != nil {
		return nil, err
	}
	return &chart{ID: id, Title: title, SVG: svg, Legend: legend}, nil
}

// timeUnit scales seconds for the time axis.
type timeUnit struct {
	name    string
	seconds float64
}

func unitFor(totalSeconds float64) timeUnit {
	if totalSeconds > 15*60 {
		return timeUnit{"min", 60}
	}
	return timeUnit{"s", 1}
}
