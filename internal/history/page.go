package history

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"

	"github.com/streambench/streambench-operator/internal/results"
)

// intervalFigure names, for a figure of the history, the headline figure
// (results.Figures) whose interval a repeated run's summary has.
var intervalFigure = map[string]string{
	"publish MB/s":     "publish MB/s",
	"publish p50":      "publish p50 (ms)",
	"publish p99":      "publish p99 (ms)",
	"publish p99.9":    "publish p99.9 (ms)",
	"corrected p99":    "corrected publish p99 (ms)",
	"end-to-end p50":   "end-to-end p50 (ms)",
	"end-to-end p99":   "end-to-end p99 (ms)",
	"end-to-end p99.9": "end-to-end p99.9 (ms)",
}

// Spread is how far a repeated run's figure could be from its median:
// the interval of the median its summary has (results.Summary.Interval),
// else its repeats' lowest and highest. ok is false for a run not
// repeated, whose one value has no spread of its own.
func (f Figure) Spread(s *results.Summary) (low, high float64, ok bool) {
	for _, rf := range results.Figures {
		if rf.Name != intervalFigure[f.Name] {
			continue
		}
		if iv, found := s.Interval(rf); found {
			return iv.Low, iv.High, true
		}
	}
	low, high = math.Inf(1), math.Inf(-1)
	for _, r := range s.Repeats {
		if v, has := f.Get(&results.Summary{Results: r.Results}); has {
			low, high, ok = math.Min(low, v), math.Max(high, v), true
		}
	}
	return low, high, ok
}

// The charts' size in SVG units (the page scales them to its width) and
// margins: the axis labels on the left, the change points' labels on top.
const (
	chartW, chartH                       = 760.0, 230.0
	padLeft, padRight, padTop, padBottom = 60.0, 14.0, 26.0, 30.0
)

type pageView struct {
	Series []seriesView
	Runs   int
}

type seriesView struct {
	Key, Config, Period, ID string
	Charts                  []chartView
}

type chartView struct {
	ID, Title string
	Points    []pointView
	Line      string
	Segments  []segmentView
	Changes   []changeView
	// Band is the newest run's segment's spread (its prediction
	// interval) over the segment's runs, clipped to the plot; nil
	// without one.
	Band   *bandView
	YTicks []tickView
	XTicks []tickView
	// The plot's edges, and where the axes' and change points' labels
	// go.
	W, H, Left, Right, Top, Bottom float64
	TickX, TickY, LabelY           float64
	// Standing is the newest run's standing; Verdict "worse" or
	// "better" when it is outside the spread, to colour it.
	Standing, Verdict string
}

type pointView struct {
	X, Y, Low, High float64
	Bar             bool
	Link, Tip       string
	// Class is "worse" or "better" for the run whose standing is
	// outside the spread.
	Class string
}

type segmentView struct{ X1, X2, Y float64 }

type bandView struct{ X, Y, W, H float64 }

type changeView struct {
	X     float64
	Label string
	Worse bool
}

type tickView struct {
	At    float64
	Label string
}

// Page is the HTML page of streambench history --html: per series its
// configuration and, per figure with values, a chart of the runs in order
// (a repeated run with its Spread as a bar), each segment's mean, the
// change points with their change and p-value, and the newest run's
// standing under it. Every point links to link(run), its run's report.
// Self-contained: inline SVG and style, no script, nothing fetched; the
// page can be attached to a CI job or mailed. standings are matched to
// series by key; a series without one has no standing lines.
func Page(series []Series, standings []Standings, link func(Run) string) ([]byte, error) {
	byKey := map[string]Standings{}
	for _, st := range standings {
		byKey[st.Series] = st
	}
	pv := pageView{}
	for _, s := range series {
		if len(s.Runs) == 0 {
			continue
		}
		pv.Runs += len(s.Runs)
		first, last := s.Runs[0], s.Runs[len(s.Runs)-1]
		sv := seriesView{Key: s.Key, ID: "series-" + s.Key, Config: s.Config.Describe(),
			Period: fmt.Sprintf("%s, %s (%s) to %s (%s)", plural(len(s.Runs), "run"), first.Name, first.Start.UTC().Format("2006-01-02 15:04"), last.Name, last.Start.UTC().Format("2006-01-02 15:04"))}
		st := byKey[s.Key]
		for _, t := range s.Tracks {
			if len(t.Values) == 0 {
				continue
			}
			var standing *Standing
			for i := range st.Figures {
				if st.Figures[i].Figure.Name == t.Figure.Name {
					standing = &st.Figures[i]
				}
			}
			sv.Charts = append(sv.Charts, chartOf(s, t, standing, link))
		}
		pv.Series = append(pv.Series, sv)
	}
	var b bytes.Buffer
	if err := pageTmpl.Execute(&b, pv); err != nil {
		return nil, fmt.Errorf("history page: %w", err)
	}
	return b.Bytes(), nil
}

// chartOf lays out one track: x is the run's place in the series (a run
// without the figure leaves its place empty), y the figure.
func chartOf(s Series, t Track, st *Standing, link func(Run) string) chartView {
	c := chartView{ID: s.Key + "-" + slug(t.Figure.Name), Title: fmt.Sprintf("%s (%s)", t.Figure.Name, t.Figure.Unit),
		W: chartW, H: chartH, Left: padLeft, Right: chartW - padRight, Top: padTop, Bottom: chartH - padBottom,
		TickX: padLeft - 6, TickY: chartH - padBottom + 18, LabelY: padTop - 8}
	lo, hi := math.Inf(1), math.Inf(-1)
	type bar struct {
		low, high float64
		ok        bool
	}
	bars := make([]bar, len(t.Values))
	for p, v := range t.Values {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
		l, h, ok := t.Figure.Spread(s.Runs[t.Runs[p]].Summary)
		if ok {
			bars[p] = bar{l, h, true}
			lo, hi = math.Min(lo, l), math.Max(hi, h)
		}
	}
	pad := (hi - lo) * 0.1
	if pad == 0 {
		pad = math.Max(math.Abs(lo)*0.1, 1)
	}
	lo, hi = lo-pad, hi+pad
	step := (c.Right - c.Left) / float64(len(s.Runs))
	x := func(run int) float64 { return c.Left + (float64(run)+0.5)*step }
	y := func(v float64) float64 { return c.Top + (hi-v)/(hi-lo)*(c.Bottom-c.Top) }

	var line []string
	for p, v := range t.Values {
		run := t.Runs[p]
		r := s.Runs[run]
		pt := pointView{X: x(run), Y: y(v), Link: link(r)}
		pt.Tip = fmt.Sprintf("run %d, %s, %s: %s %s", run+1, r.Name, r.Start.UTC().Format("2006-01-02 15:04"), Number(v), t.Figure.Unit)
		if b := bars[p]; b.ok {
			pt.Bar, pt.Low, pt.High = true, y(b.low), y(b.high)
			pt.Tip += fmt.Sprintf(" (repeats: %s – %s)", Number(b.low), Number(b.high))
		}
		if st != nil && st.Run == run && (st.Verdict == Worse || st.Verdict == Better) {
			pt.Class = string(st.Verdict)
		}
		c.Points = append(c.Points, pt)
		line = append(line, fmt.Sprintf("%.1f,%.1f", pt.X, pt.Y))
	}
	c.Line = strings.Join(line, " ")

	bounds := []int{0}
	for _, ch := range t.Changes {
		bounds = append(bounds, ch.Index)
		c.Changes = append(c.Changes, changeView{X: x(ch.Run) - step/2, Worse: ch.Worse,
			Label: fmt.Sprintf("%+.1f %% (%s)", ch.Relative*100, PValue(ch.PValue))})
	}
	bounds = append(bounds, len(t.Values))
	for i := 1; i < len(bounds); i++ {
		from, to := bounds[i-1], bounds[i]
		mean := 0.0
		for _, v := range t.Values[from:to] {
			mean += v
		}
		mean /= float64(to - from)
		c.Segments = append(c.Segments, segmentView{X1: x(t.Runs[from]) - step/3, X2: x(t.Runs[to-1]) + step/3, Y: y(mean)})
	}

	for _, v := range ticks(lo, hi) {
		c.YTicks = append(c.YTicks, tickView{At: y(v), Label: strconv.FormatFloat(v, 'g', 6, 64)})
	}
	every := (len(s.Runs) + 11) / 12
	for i := 0; i < len(s.Runs); i += every {
		c.XTicks = append(c.XTicks, tickView{At: x(i), Label: strconv.Itoa(i + 1)})
	}
	if st != nil && len(st.Segment) > 1 {
		// A wide interval (few runs) is drawn to the plot's edge, not
		// let stretch the axis and flatten the runs.
		top, bottom := math.Max(y(st.High), c.Top), math.Min(y(st.Low), c.Bottom)
		x1, x2 := x(st.Segment[0])-step/3, x(st.Run)+step/3
		c.Band = &bandView{X: x1, Y: top, W: x2 - x1, H: math.Max(bottom-top, 1)}
	}
	if st != nil {
		c.Standing = fmt.Sprintf("Run %d, %s: %s", st.Run+1, s.Runs[st.Run].Name, st)
		if st.Verdict == Worse || st.Verdict == Better {
			c.Verdict = string(st.Verdict)
		}
	}
	return c
}

// ticks are about five round values between lo and hi.
func ticks(lo, hi float64) []float64 {
	raw := (hi - lo) / 4
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, f := range []float64{1, 2, 5} {
		if raw/mag <= f*1.5 {
			step = f * mag
			break
		}
	}
	var out []float64
	for i := math.Ceil(lo / step); i*step <= hi; i++ {
		// Rounded to 12 digits, so 6 · 0.1 is labelled 0.6, not
		// 0.6000000000000001.
		v, _ := strconv.ParseFloat(strconv.FormatFloat(i*step, 'g', 12, 64), 64)
		out = append(out, v)
	}
	return out
}

func slug(s string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return '-'
	}, s), "-")
}

var pageTmpl = template.Must(template.New("history").Funcs(template.FuncMap{
	"f": func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>streambench history</title>
<style>
body{margin:0;background:#f1f5f9;color:#0f172a;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",Arial,sans-serif}
header{background:linear-gradient(135deg,#0f172a,#1e3a8a);color:#fff;padding:24px 0}
.wrap{max-width:1000px;margin:0 auto;padding:0 24px}
header h1{margin:0 0 4px;font-size:26px}
header p{margin:0;color:#cbd5e1;font-size:14px}
section{background:#fff;border-radius:12px;padding:16px 20px;margin:20px 0;box-shadow:0 1px 2px rgba(15,23,42,.06)}
section h2{margin:0;font-size:17px}
.muted{color:#64748b;font-size:13.5px;margin:2px 0 8px}
figure{margin:14px 0 0}
figure h3{margin:0;font-size:14px;color:#334155}
svg{display:block;width:100%;height:auto}
svg text{font-size:11px;fill:#475569}
.axis{stroke:#cbd5e1}.grid{stroke:#f1f5f9}
.track{fill:none;stroke:#93c5fd;stroke-width:1.5}
.mean{stroke:#64748b;stroke-dasharray:5 4}
.band{fill:#dbeafe;opacity:.6}
.bar{stroke:#2563eb}
circle{fill:#2563eb}
circle.worse{fill:#b91c1c;stroke:#fecaca;stroke-width:3}
circle.better{fill:#15803d;stroke:#bbf7d0;stroke-width:3}
.change{stroke:#15803d;stroke-dasharray:3 3}.change.worse{stroke:#b91c1c}
text.change{fill:#15803d;stroke:none}text.change.worse{fill:#b91c1c}
figcaption{font-size:13px;color:#334155;margin-top:2px}
figcaption.worse{color:#b91c1c;font-weight:600}
footer{color:#64748b;font-size:12.5px;text-align:center;padding:4px 0 24px}
</style></head>
<body>
<header><div class="wrap"><h1>streambench history</h1>
<p>{{len .Series}} series of one configuration, {{.Runs}} runs. Each point is a run (a repeated run's median, its bar the interval of the median or its repeats' range) and links to its report; a dashed line is a segment's mean; a vertical line a change point, with its change and p-value; the shaded band the spread the newest run is judged against (its prediction interval).</p></div></header>
<main class="wrap">
{{range .Series}}<section id="{{.ID}}"><h2>series {{.Key}}</h2>
<p class="muted">{{.Config}} · {{.Period}}</p>
{{range .Charts}}<figure id="{{.ID}}"><h3>{{.Title}}</h3>
<svg viewBox="0 0 {{f .W}} {{f .H}}" role="img" aria-label="{{.Title}} by run">
{{$c := .}}{{range .YTicks}}<line class="grid" x1="{{f $c.Left}}" x2="{{f $c.Right}}" y1="{{f .At}}" y2="{{f .At}}"/><text x="{{f $c.TickX}}" y="{{f .At}}" text-anchor="end" dominant-baseline="middle">{{.Label}}</text>{{end}}
<line class="axis" x1="{{f .Left}}" x2="{{f .Left}}" y1="{{f .Top}}" y2="{{f .Bottom}}"/><line class="axis" x1="{{f .Left}}" x2="{{f .Right}}" y1="{{f .Bottom}}" y2="{{f .Bottom}}"/>
{{range .XTicks}}<text x="{{f .At}}" y="{{f $c.TickY}}" text-anchor="middle">{{.Label}}</text>{{end}}
{{with .Band}}<rect class="band" x="{{f .X}}" y="{{f .Y}}" width="{{f .W}}" height="{{f .H}}"><title>the newest run's segment's spread</title></rect>{{end}}
{{range .Segments}}<line class="mean" x1="{{f .X1}}" x2="{{f .X2}}" y1="{{f .Y}}" y2="{{f .Y}}"/>{{end}}
<polyline class="track" points="{{.Line}}"/>
{{range .Changes}}<line class="change{{if .Worse}} worse{{end}}" x1="{{f .X}}" x2="{{f .X}}" y1="{{f $c.Top}}" y2="{{f $c.Bottom}}"/><text class="change{{if .Worse}} worse{{end}}" x="{{f .X}}" y="{{f $c.LabelY}}" text-anchor="middle">{{.Label}}</text>{{end}}
{{range .Points}}<a href="{{.Link}}">{{if .Bar}}<line class="bar" x1="{{f .X}}" x2="{{f .X}}" y1="{{f .Low}}" y2="{{f .High}}"/>{{end}}<circle class="{{.Class}}" cx="{{f .X}}" cy="{{f .Y}}" r="4"><title>{{.Tip}}</title></circle></a>{{end}}
</svg>
{{if .Standing}}<figcaption class="{{.Verdict}}">{{.Standing}}</figcaption>{{end}}
</figure>{{end}}
</section>{{end}}
</main>
<footer>streambench history · x: the series' runs in the order they ran · docs/history.md says how change points and standings are found</footer>
</body></html>
`))
