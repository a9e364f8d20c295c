package report

import (
	"fmt"
	"html/template"
	"math"
	"strconv"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/javaruntime"
)

var funcs = template.FuncMap{
	"gib":   func(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<30)) },
	"ms":    ms,
	"mbps":  mbps,
	"count": count,
	"rate":  func(v float64) string { return count(int64(math.Round(v))) },
	"secs":  func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"signed": func(v float64) string {
		return fmt.Sprintf("%+.3f", v)
	},
	"swatch": func(color string, dashed bool) template.CSS {
		style := "solid"
		if dashed {
			style = "dashed"
		}
		return template.CSS(fmt.Sprintf("border-top:3px %s %s", style, color))
	},
	"dot": func(color string) template.CSS { return template.CSS("background:" + color) },
	"mb":  func(b int64) float64 { return float64(b) / 1e6 },
	"javaText": func(rt *v1alpha1.JavaRuntime) string {
		if rt == nil {
			return "unknown (not recorded, or not readable: see the notes)"
		}
		return javaruntime.String(rt)
	},
	"pct": func(f float64) float64 { return 100 * f },
	// num is a figure of a verdict: three significant digits.
	"num": func(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) },
}

// css is shared by the report and the comparison. The charts' text is drawn
// by gonum/plot with Liberation Sans metrics; Arial and Helvetica have the
// same metrics, so the labels keep their places when Liberation is missing.
const css = `
:root{--ink:#0f172a;--muted:#64748b;--line:#e2e8f0;--panel:#fff;--bg:#f1f5f9;--accent:#2563eb;--bad:#b91c1c}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",Arial,sans-serif}
header{background:linear-gradient(135deg,#0f172a,#1e3a8a);color:#fff;padding:28px 0 30px}
.wrap{max-width:1180px;margin:0 auto;padding:0 24px}
header h1{margin:0 0 6px;font-size:28px;font-weight:650;letter-spacing:-.01em}
header .sub{color:#cbd5e1;font-size:14px}
.badges{margin-top:12px;display:flex;gap:8px;flex-wrap:wrap}
.badge{display:inline-block;padding:3px 10px;border-radius:999px;font-size:12.5px;font-weight:600;background:rgba(255,255,255,.14);color:#fff;border:1px solid rgba(255,255,255,.25)}
.badge.kafka{background:#e2e8f0;color:#0f172a}
.badge.pulsar{background:#bfdbfe;color:#1e3a8a}
.badge.lvl1{background:#bbf7d0;color:#14532d}.badge.lvl2{background:#d9f99d;color:#365314}
.badge.lvl3{background:#fde68a;color:#78350f}.badge.lvl4{background:#fecaca;color:#7f1d1d}
main{padding:24px 0 48px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(170px,1fr));gap:14px;margin-bottom:22px}
.card{background:var(--panel);border-radius:12px;padding:14px 16px;box-shadow:0 1px 2px rgba(15,23,42,.06),0 1px 8px rgba(15,23,42,.04);border-top:3px solid var(--accent)}
.card.bad{border-top-color:var(--bad)}
.card .label{font-size:11.5px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);font-weight:600}
.card .value{font-size:27px;font-weight:680;font-variant-numeric:tabular-nums;line-height:1.25;margin-top:4px}
.card .unit{font-size:13px;color:var(--muted);font-weight:500;margin-left:4px}
.card .subv{font-size:12.5px;color:var(--muted);font-variant-numeric:tabular-nums}
.card.bad .value{color:var(--bad)}
section{background:var(--panel);border-radius:12px;padding:18px 20px 20px;margin-bottom:20px;box-shadow:0 1px 2px rgba(15,23,42,.06),0 1px 8px rgba(15,23,42,.04)}
section h2{margin:0 0 12px;font-size:17px;font-weight:650}
section h3{margin:16px 0 6px;font-size:14px;color:#334155}
.grid2{display:grid;grid-template-columns:1fr 1fr;gap:18px}
@media (max-width:900px){.grid2{grid-template-columns:1fr}}
figure{margin:0}
figure.chart+figure.chart,.grid2+figure.chart,figure.chart+.grid2{margin-top:22px}
figure h3{margin:0 0 4px}
.chart svg{display:block;width:100%;height:auto}
.chart svg text{font-family:"Liberation Sans",Arial,Helvetica,sans-serif!important}
figcaption{font-size:12.5px;color:var(--muted);margin-top:4px}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:13px;color:#334155;margin-top:6px}
.legend span.sw{display:inline-block;width:22px;vertical-align:middle;margin-right:6px}
table{border-collapse:collapse;width:100%;font-size:13.5px}
th,td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{font-size:11.5px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);font-weight:600;background:#f8fafc}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
td.n,td.nw{white-space:nowrap}
tr.notes td{border-top:0;padding-top:0;white-space:normal}
section{overflow-x:auto}
table.facts td:first-child{width:210px;color:#334155}
tbody tr:nth-child(even) td{background:#fafbfc}
td.bad{color:var(--bad);font-weight:650}
td.best{font-weight:700;color:#15803d}
td small{color:var(--muted)}
code,td.code{font-family:ui-monospace,"SFMono-Regular","DejaVu Sans Mono",Menlo,monospace;font-size:12.5px}
.warn{background:#fffbeb;border:1px solid #fcd34d;color:#78350f;border-radius:10px;padding:10px 14px;margin-bottom:16px;font-size:14px}
.warn p{margin:2px 0}
.kv{display:grid;grid-template-columns:repeat(auto-fit,minmax(330px,1fr));gap:0 28px}
.muted{color:var(--muted)}
.dot{display:inline-block;width:10px;height:10px;border-radius:50%;margin-right:8px;vertical-align:baseline}
ul.notes{margin:0;padding-left:20px}ul.notes li{margin:3px 0}
footer{color:var(--muted);font-size:12.5px;text-align:center;padding:8px 0 28px}
`

const chartTmpl = `{{define "chart"}}<figure class="chart" id="{{.ID}}">
<h3>{{.Title}}</h3>
{{.SVG}}
<div class="legend">{{range .Legend}}<span><span class="sw" style="{{swatch .Color .Dashed}}"></span>{{.Name}}</span>{{end}}</div>
{{if .Note}}<figcaption>{{.Note}}</figcaption>{{end}}
</figure>{{end}}`

// pageHead opens every page the report package writes: the document, its
// title and style, and the header band.
const pageHead = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>{{.Title}}</title>
<style>` + css + `</style></head>
<body>
<header><div class="wrap">
`

var reportTmpl = template.Must(template.New("report").Funcs(funcs).Parse(chartTmpl + pageHead + `<h1>{{.Run}}</h1>
<div class="sub">{{if .Workload}}workload <b>{{.Workload}}</b>{{end}}{{if .Period}} · {{.Period}}{{end}}</div>
<div class="badges">
{{if .System}}<span class="badge {{.System}}">{{.System}}</span>{{end}}
{{with .Level}}<span class="badge lvl{{.Achieved}}">durability level {{.Achieved}}{{if .Lowered}} (requested {{.Requested}}){{end}}, {{.Evidence}}</span>{{end}}
{{if .Workers}}<span class="badge">{{len .Workers}} workers</span>{{end}}
{{with .Security}}<span class="badge" id="security-badge">{{.Label}}</span>{{end}}
</div>
</div></header>
<main><div class="wrap">
{{if .Warnings}}<div class="warn">{{range .Warnings}}<p>⚠ {{.}}</p>{{end}}</div>{{end}}
{{with .Repeats}}<section id="repeats"><h2>Over {{.N}} repeats</h2>
<table><thead><tr><th>figure</th><th class="n">median</th><th class="n">interval of the median</th>{{range $i, $c := .Columns}}<th class="n"><a href="{{index $.Repeats.Links $i}}">{{$c}}</a></th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr><td>{{.Figure}}</td><td class="n">{{.Median}}</td><td class="n">{{.Interval}}</td>{{range .Values}}<td class="n">{{.}}</td>{{end}}</tr>
{{end}}</tbody></table><p class="sub">The headline is each figure's median over the repeats (the same brokers, fresh topics each); its interval holds the median of the machine's repeat-to-repeat spread with {{printf "%.1f" (pct .Confidence)}} % confidence whatever the figures' distribution (docs/methodology.md, "Repeats and differences"). The percentile chart draws each curve's median over the repeats, shaded by its interval; each repeat's own report has its own curves and time series.</p></section>{{end}}
<div class="cards">{{range .Cards}}<div class="card{{if .Bad}} bad{{end}}"><div class="label">{{.Label}}</div><div class="value">{{.Value}}{{if .Unit}}<span class="unit">{{.Unit}}</span>{{end}}</div><div class="subv">{{.Sub}}</div></div>{{end}}</div>
{{with .Against}}<section id="against"><h2>Against its series</h2>
<p>Series <code>{{.Series}}</code>: {{.Config}}. {{if .First}}The first run of its configuration: no other run to stand against yet.{{else}}Run {{.Run}} of {{.Runs}}.{{end}}</p>
{{if not .First}}<table><tbody>{{range .Lines}}<tr><td{{if .Bad}} class="bad"{{end}}>{{.Value}}</td></tr>{{end}}</tbody></table>
<p class="muted" style="font-size:13px">Each figure against the series' last segment: the runs before this one since the figure's last change point. Outside its spread is beyond the prediction interval for one new run, mean ± t(n−1, 1 − p/2) · s · √(1 + 1/n), at p {{.Alpha}} (docs/history.md).</p>{{end}}
</section>{{end}}

{{if .Latency}}<section><h2>Latency</h2>{{range .Latency}}{{template "chart" .}}{{end}}</section>{{end}}

<section><h2>Latency distribution, measured phase (ms)</h2>
<table><thead><tr><th></th><th class="n">count</th><th class="n">avg</th><th class="n">p50</th><th class="n">p75</th><th class="n">p95</th><th class="n">p99</th><th class="n">p99.9</th><th class="n">p99.99</th><th class="n">max</th></tr></thead><tbody>
{{range .LatencyRows}}<tr><td>{{.Name}}<br><small>{{.Note}}</small></td><td class="n">{{if lt .D.Count 0}}–{{else}}{{count .D.Count}}{{end}}</td><td class="n">{{ms .D.Avg}}</td><td class="n">{{ms .D.P50}}</td><td class="n">{{ms .D.P75}}</td><td class="n">{{ms .D.P95}}</td><td class="n">{{ms .D.P99}}</td><td class="n">{{ms .D.P999}}</td><td class="n">{{ms .D.P9999}}</td><td class="n">{{ms .D.Max}}</td></tr>
{{end}}</tbody></table>
{{with .ToolDelay}}<p class="sub">{{.}}</p>{{end}}
</section>

{{if .Timeline}}<section><h2>Over time</h2>
<div class="grid2">{{range .Timeline}}{{if eq .ID "p99"}}</div>{{template "chart" .}}<div class="grid2">{{else}}{{template "chart" .}}{{end}}{{end}}</div>
</section>{{end}}

{{with .Faults}}<section id="faults"><h2>Faults</h2>
<table><thead><tr><th>fault</th><th>action</th><th>target</th><th>resolved</th><th>injected</th><th>cleared</th><th class="n">dip: lowest publish rate</th><th>time to recover</th><th class="n">failed / lost / duplicates</th><th class="n">p99 before (ms)</th><th class="n">worst p99 (ms)</th></tr></thead><tbody>
{{range .Rows}}<tr><td class="nw">{{.Fault}}</td><td>{{.Action}}</td><td class="code">{{.Target}}</td><td class="code">{{.Resolved}}</td><td{{if .NotInjected}} class="bad"{{end}}>{{.Injected}}</td><td>{{.Cleared}}</td><td class="n{{if .Bad}} bad{{end}}">{{.Dip}}</td><td>{{.Recovery}}</td><td class="n">{{.Errors}}</td><td class="n">{{.PreP99}}</td><td class="n">{{.WorstP99}}</td></tr>
{{if or .Stall .Notes}}{{$stall := .Stall}}<tr class="notes"><td></td><td colspan="10">{{with .Stall}}<small><strong>stall</strong>: {{.}}</small>{{end}}{{range $i, $n := .Notes}}{{if or $i $stall}}<br>{{end}}<small>{{$n}}</small>{{end}}</td></tr>{{end}}
{{end}}</tbody></table>
<p class="sub">Times are seconds after the start of the measured phase, good to about one interval; the charts above mark each fault from its injection to its clearing. The dip is the lowest interval's publish rate (acknowledged messages) against the target rate; the time to recover runs from the fault to the first 3 intervals in a row at ≥ 95 % of the target rate with the p99 at most twice its pre-fault value, and says how often the load fell below that again. {{if .Series}}The p99 columns are the {{.Series}} latency.{{end}}{{if .Computed}} Figures the run's record did not carry were computed by this report from the series, with the same definitions.{{end}} docs/results.md, "Faults", defines every figure.</p>
<h3>The run's delivery record, whole run</h3>
<table class="facts"><tbody>{{range .Delivery}}<tr><td>{{.Key}}</td><td class="n{{if .Bad}} bad{{end}}">{{.Value}}</td></tr>{{end}}</tbody></table>
<p class="sub">A fault's failed sends, losses and duplicates in the table are those of its intervals, from the fault to its recovery: a loss is placed in the interval its message was sent in (by the producers' sequence numbers at each interval's end), a duplicate in the one it was received in. The whole run's are above; duplicates found only across workers, at the end, are in them alone.</p>
{{with .Tolerance}}<p><strong>Failure tolerance:</strong> {{.}}. A comparison of faults is fair between deployments that ride out the same losses (compare flags [tolerance] otherwise).</p>{{end}}
{{with .Settings}}<h3>What the stalls were weighed against: the brokers' settings, as read</h3>
<table class="facts"><tbody>{{range .}}<tr><td class="code">{{.Name}}</td><td>{{.Value}} — {{.Bounds}}</td></tr>{{end}}</tbody></table>
<p class="sub">A stall is the longest any send waited (the intervals' maximum latency); a setting of T seconds explains it when the stall lies within T − max(2.5 s, T/4) and T + max(3 s, T/4): docs/methodology.md, "Why a stall lasted what it lasted".</p>{{end}}
</section>{{end}}

{{if .Drain}}<section><h2>Backlog</h2>{{range .Drain}}{{template "chart" .}}{{end}}</section>{{end}}

<div class="grid2">
<section><h2>Messages</h2>
<table><tbody>{{range .Counts}}<tr><td>{{.Key}}</td><td class="n{{if .Bad}} bad{{end}}">{{.Value}}</td></tr>{{end}}</tbody></table>
</section>
<section><h2>Workload</h2>
<table><tbody>{{range .WorkloadKV}}<tr><td>{{.Key}}</td><td class="n">{{.Value}}</td></tr>{{end}}</tbody></table>
</section>
</div>

{{if .Phases}}<section><h2>Phases</h2>
<table><thead><tr><th>phase</th><th class="n">seconds</th><th class="n">sent</th><th class="n">acked</th><th class="n">errors</th><th class="n">received</th><th class="n">publish msg/s</th><th class="n">publish MB/s</th><th class="n">consume MB/s</th><th class="n">publish p99 (ms)</th><th class="n">e2e p99 (ms)</th></tr></thead><tbody>
{{range .Phases}}<tr><td class="nw">{{.Phase}}</td><td class="n">{{secs .Seconds}}</td><td class="n">{{count .Sent}}</td><td class="n">{{count .Acked}}</td><td class="n{{if gt .PublishErrors 0}} bad{{end}}">{{count .PublishErrors}}</td><td class="n">{{count .Received}}</td><td class="n">{{rate .PublishRateMsgPerSec}}</td><td class="n">{{mbps .PublishMBPerSec}}</td><td class="n">{{mbps .ConsumeMBPerSec}}</td><td class="n">{{.PubP99}}</td><td class="n">{{.E2EP99}}</td></tr>
{{end}}</tbody></table>
</section>{{end}}

{{with .Durability}}<section><h2>Durability in effect</h2>
<table class="facts"><tbody>
<tr><td>requested level</td><td>{{.RequestedLevel}}</td></tr>
<tr><td>achieved level</td><td{{if ne .AchievedLevel .RequestedLevel}} class="bad"{{end}}>{{.AchievedLevel}}</td></tr>
<tr><td>replication</td><td>{{.Replication}}</td></tr>
<tr><td>local (disk)</td><td>{{.Local}}</td></tr>
{{if .Journal}}<tr><td>journal</td><td>{{.Journal}}</td></tr>{{end}}
<tr><td>established</td><td>{{.Evidence}}</td></tr>
{{if .Explanation}}<tr><td>explanation</td><td>{{.Explanation}}</td></tr>{{end}}
</tbody></table>
<div class="kv">{{range .Components}}<div><h3>{{.Name}}</h3>
{{if .Settings}}<table><tbody>{{range .Settings}}<tr><td class="code">{{.Key}}</td><td class="code n">{{.Value}}</td></tr>{{end}}</tbody></table>{{else}}<p class="muted">no settings applied</p>{{end}}</div>{{end}}</div>
</section>{{end}}

{{with .Security}}<section id="security"><h2>Client security</h2>
{{if .Recorded}}<p><b>{{.Label}}</b></p>
<table class="facts"><tbody>{{range .Rows}}<tr><td>{{.Key}}</td><td{{if .Bad}} class="bad"{{end}}>{{.Value}}</td></tr>{{end}}</tbody></table>
<p class="muted" style="font-size:13px">As the workers' clients negotiated it. TLS and authentication change the numbers: compare runs of the same security.</p>
{{else}}<p class="muted">Not recorded: these results were written before streambench recorded the clients' security, so it is unknown (not necessarily plaintext).</p>{{end}}
</section>{{end}}

{{with .Brokers}}<section id="brokers"><h2>How the brokers ran</h2>
<table class="facts"><tbody>
<tr><td>where</td><td>{{.Where}}</td></tr>
<tr><td>Java</td><td>{{javaText .Java}}</td></tr>
{{if .JVM}}<tr><td>JVM (heap, collector, compiler)</td><td class="code">{{range .JVM}}{{.}} {{end}}</td></tr>{{end}}
</tbody></table>
{{if .Config}}<table><thead><tr><th>broker setting (beyond the broker's defaults)</th><th class="n">value</th></tr></thead><tbody>{{range $k, $v := .Config}}<tr><td class="code">{{$k}}</td><td class="code n">{{$v}}</td></tr>{{end}}</tbody></table>{{end}}
</section>{{end}}

{{with .Testbed}}<section id="testbed"><h2>Testbed</h2>
<p class="muted" style="margin-top:0;font-size:13px">Measured before the load: sequential writes of 1 MiB blocks ended by an fdatasync, and small appends each followed by an fdatasync, as a journal writes ({{.Scope}}).</p>
{{if .Note}}<div class="warn"><p>⚠ {{.Note}}</p></div>{{end}}
{{with .Topology}}<p>Topology: {{.Brokers}} brokers{{if gt .Bookies 0}}, {{.Bookies}} bookies{{end}}{{if .Version}}, version {{.Version}}{{end}}.</p>
{{if .Components}}<table id="envelope"><thead><tr><th>component</th><th class="n">pods</th><th class="n">CPU request</th><th class="n">CPU limit</th><th class="n">memory request</th><th class="n">memory limit</th><th class="n">JVM heap</th><th class="n">direct memory</th></tr></thead><tbody>
{{range .Components}}<tr><td>{{.Component}}</td><td class="n">{{.Replicas}}</td><td class="n">{{or .CPURequest "–"}}</td><td class="n">{{or .CPULimit "–"}}</td><td class="n">{{or .MemoryRequest "–"}}</td><td class="n{{if not .MemoryLimit}} bad{{end}}">{{or .MemoryLimit "none"}}</td><td class="n">{{or .Heap "image default"}}</td><td class="n">{{or .DirectMemory "–"}}</td></tr>
{{end}}</tbody></table>{{end}}{{end}}
{{if .PageCacheDrops}}<p>Page cache (spec.testbed.dropPageCache):</p><ul>{{range .PageCacheDrops}}{{if .Dropped}}<li>dropped {{.Reason}} on {{range $i, $n := .Nodes}}{{if $i}}, {{end}}<span class="code">{{$n}}</span>{{end}} at {{.At}}</li>{{else}}<li class="bad">NOT dropped {{.Reason}}: {{.Message}}</li>{{end}}{{end}}</ul>
{{else if .PageCacheDropped}}<p>Page cache dropped on the broker nodes at {{.PageCacheDropped}}.</p>{{end}}
{{with $.Machines}}{{if .Shared}}<div class="warn" id="machines"><p>⚠ Nodes on one machine: {{.Note}}.</p></div>{{else}}<p class="muted" id="machines">Machines: {{.Note}}.</p>{{end}}{{end}}
{{if not .Nodes}}<p>Not measured: no node was probed{{if .Note}} (see the note above){{end}}.</p>{{else}}<table><thead><tr><th>node</th><th>roles</th><th>CPU</th><th class="n">CPUs</th><th class="n">memory GiB</th><th>kernel</th><th>volume</th><th>class</th><th class="n">write MB/s</th><th class="n">fsync p50</th><th class="n">p99</th><th class="n">p99.9</th><th class="n">max (ms)</th></tr></thead><tbody>
{{range .Nodes}}{{$n := .}}{{if .Error}}<tr><td class="code">{{.Node}}{{with index $.NodeMachine .Node}} <small class="muted">{{.}}</small>{{end}}</td><td>{{range .Roles}}{{.}} {{end}}</td><td colspan="11" class="bad">not measured: {{.Error}}</td></tr>{{end}}{{range .Volumes}}<tr><td class="code">{{$n.Node}}{{with index $.NodeMachine $n.Node}} <small class="muted">{{.}}</small>{{end}}</td><td>{{range $n.Roles}}{{.}} {{end}}</td><td>{{$n.CPUModel}}</td><td class="n">{{$n.CPUs}}</td><td class="n">{{gib $n.MemoryBytes}}</td><td class="code">{{$n.Kernel}}</td><td>{{.Name}}</td><td class="code">{{.StorageClassName}}</td><td class="n">{{printf "%.1f" .WriteMBPerSec}}</td><td class="n">{{printf "%.3f" .FsyncLatencyMs.P50}}</td><td class="n">{{printf "%.3f" .FsyncLatencyMs.P99}}</td><td class="n">{{printf "%.3f" .FsyncLatencyMs.P999}}</td><td class="n">{{printf "%.3f" .FsyncLatencyMs.Max}}</td></tr>
{{end}}{{end}}</tbody></table>{{end}}
</section>{{end}}

{{with .BrokerRes}}<section id="broker-resources"><h2>Broker resources</h2>
{{if .Shared}}<div class="warn"><p>⚠ {{.Shared}}</p></div>{{end}}
<p class="muted" style="margin-top:0;font-size:13px">What the brokers used over the measured phase, {{.Window}}, read from {{if eq .Source "proc"}}the broker processes' /proc files and GC logs{{else}}{{.Source}}{{end}}. Rates are averages over the window; GC pause is the total of the JVMs' pauses within it (stop-the-world time only: not ZGC's or G1's concurrent work).</p>
<table><thead><tr><th>broker</th><th class="n">CPU cores</th><th class="n">memory GiB</th><th class="n">disk write MB/s</th><th class="n">net in MB/s</th><th class="n">net out MB/s</th><th class="n">GC pause ms</th><th class="n">journal ms</th></tr></thead><tbody>
{{range .Rows}}<tr>{{range $i, $c := .}}{{if $i}}<td class="n">{{$c}}</td>{{else}}<td class="code">{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</tbody></table>
{{if .Host}}<h3>Host</h3><table class="facts"><tbody>{{range .Host}}<tr><td>{{.Key}}</td><td class="n">{{.Value}}</td></tr>{{end}}</tbody></table>{{end}}
{{if .Notes}}<ul class="muted" style="font-size:12.5px">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
</section>{{end}}

{{with .Cost}}<section id="cost"><h2>Efficiency and cost</h2>
<p class="muted" style="margin-top:0;font-size:13px">From what the brokers used over the measured phase (above), priced by {{if .Default}}the default list prices{{else}}the run's price model{{end}}: {{.Model}}. Each figure has its formula beside it; – is a figure whose input was not measured, with why.</p>
<h3>Efficiency</h3><table><thead><tr><th>figure</th><th class="n">value</th><th>unit</th><th>formula</th><th>from</th></tr></thead><tbody>
{{range .Efficiency}}<tr><td>{{.Name}}</td><td class="n">{{if .Value}}{{.Value}}{{else}}–{{end}}</td><td>{{.Unit}}</td><td class="code">{{if .Missing}}<span class="muted">{{.Missing}}</span>{{else}}{{.Formula}}{{end}}</td><td>{{.From}}</td></tr>
{{end}}</tbody></table>
<h3>Cost at the measured rate</h3><table><thead><tr><th>part</th><th class="n">value</th><th>unit</th><th>formula</th><th>from</th></tr></thead><tbody>
{{range .Costs}}<tr><td>{{.Name}}</td><td class="n">{{if .Value}}{{.Value}}{{else}}–{{end}}</td><td>{{.Unit}}</td><td class="code">{{if .Missing}}<span class="muted">{{.Missing}}</span>{{else}}{{.Formula}}{{end}}</td><td>{{.From}}</td></tr>
{{end}}</tbody></table>
{{with .Projection}}<h3>Projection to {{.Target}} (a projection, not a measurement)</h3>
{{if .Refused}}<p class="bad">Refused: {{.Refused}}.</p>{{else}}<table><tbody>{{range .Rows}}<tr><td>{{.Name}}</td><td class="n">{{if .Value}}{{.Value}}{{else}}–{{end}}</td><td>{{.Unit}}</td><td class="code">{{if .Missing}}<span class="muted">{{.Missing}}</span>{{else}}{{.Formula}}{{end}}</td></tr>{{end}}</tbody></table>{{end}}
<p class="muted" style="font-size:12.5px">Assumed: {{.Assumption}}.</p>
{{if .Flags}}<div class="warn">{{range .Flags}}<p>⚠ {{.}}</p>{{end}}</div>{{end}}{{end}}
{{if .Notes}}<ul class="muted" style="font-size:12.5px">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
</section>{{end}}

{{with .RateSearch}}<section><h2>Maximum-rate search</h2>
<p>Measured at <b>{{rate .RateMsgPerSec}} msg/s</b>{{if not .Converged}} <span class="bad">(search did not converge)</span>{{end}}; highest rate held {{rate .LowMsgPerSec}} msg/s{{if gt .HighMsgPerSec 0.0}}, lowest that fell behind {{rate .HighMsgPerSec}} msg/s{{end}}.{{if gt .HoldSeconds 0.0}} A rate counted as sustainable once it held for {{printf "%.0f" .HoldSeconds}} s as one window{{if gt .MaxP99LatencyMs 0.0}} with its corrected p99 within {{ms .MaxP99LatencyMs}} ms{{end}}.{{end}}</p>
{{with .Measured}}<p>{{if .Held}}The rate held through the measured phase: published {{rate .PublishMsgPerSec}} msg/s, corrected p99 {{ms .CorrectedP99Ms}} ms.{{else}}<span class="bad">The rate did not hold through the measured phase: {{.Reason}}.</span> Its latencies are those of a system past its maximum.{{end}}</p>{{end}}
{{if .Steps}}<table><thead><tr><th class="n">#</th><th class="n">target msg/s</th><th class="n">publish msg/s</th><th class="n">consume msg/s</th><th class="n">backlog</th><th class="n">pending</th><th class="n">errors</th><th>verdict</th></tr></thead><tbody>
{{range $i, $s := .Steps}}<tr><td class="n">{{$i}}</td><td class="n">{{rate $s.TargetMsgPerSec}}</td><td class="n">{{rate $s.PublishMsgPerSec}}</td><td class="n">{{rate $s.ConsumeMsgPerSec}}</td><td class="n">{{count $s.Backlog}}</td><td class="n">{{count $s.Pending}}</td><td class="n">{{count $s.PublishErrors}}</td><td>{{$s.Verdict}}</td></tr>
{{end}}</tbody></table>{{end}}
{{if .Holds}}<p>Hold windows: each rate the search settled on, held and judged as a whole.</p><table><thead><tr><th class="n">target msg/s</th><th class="n">seconds</th><th class="n">publish msg/s</th><th class="n">consume msg/s</th><th class="n">pending growth</th><th class="n">backlog growth</th><th class="n">corrected p99 (ms)</th><th>verdict</th></tr></thead><tbody>
{{range $h := .Holds}}<tr><td class="n">{{rate $h.TargetMsgPerSec}}</td><td class="n">{{printf "%.0f" $h.Seconds}}</td><td class="n">{{rate $h.PublishMsgPerSec}}</td><td class="n">{{rate $h.ConsumeMsgPerSec}}</td><td class="n">{{count $h.PendingGrowth}}</td><td class="n">{{count $h.BacklogGrowth}}</td><td class="n">{{ms $h.CorrectedP99Ms}}</td><td>{{$h.Verdict}}{{with $h.Reason}}: {{.}}{{end}}</td></tr>
{{end}}</tbody></table>{{end}}
</section>{{end}}

<div class="grid2">
{{if .Clocks}}<section><h2>Clock offsets</h2>
<p class="muted" style="margin-top:0;font-size:13px">Worker clock − coordinator clock. End-to-end latency between two workers is off by the difference of their offsets.</p>
<table><thead><tr><th>worker</th><th class="n">offset (ms)</th><th class="n">± (ms)</th></tr></thead><tbody>
{{range .Clocks}}<tr><td class="code">{{.Worker}}</td><td class="n">{{signed .OffsetMs}}</td><td class="n">{{printf "%.3f" .UncertaintyMs}}</td></tr>{{end}}
</tbody></table></section>{{end}}
{{with .Subs}}<section><h2>Subscriptions</h2>
<p class="muted" style="margin-top:0;font-size:13px">{{.Count}} subscriptions; received between {{count .MinReceived}} and {{count .MaxReceived}} messages each.</p>
<table><thead><tr><th>subscription</th><th class="n">received</th><th class="n">MB</th><th class="n">duplicates</th><th class="n">lost</th></tr></thead><tbody>
{{range .Items}}<tr><td class="code">{{.Name}}{{if .CatchUp}} <small>(catch-up)</small>{{end}}</td><td class="n">{{count .Received}}</td><td class="n">{{mbps (mb .ReceivedBytes)}}</td><td class="n{{if gt .Duplicates 0}} bad{{end}}">{{count .Duplicates}}</td><td class="n{{if gt .Lost 0}} bad{{end}}">{{count .Lost}}</td></tr>{{end}}
</tbody></table></section>{{end}}
</div>

{{if .Notes}}<section><h2>Notes</h2><ul class="notes">{{range .Notes}}<li>{{.}}</li>{{end}}</ul></section>{{end}}
{{with .Truncation}}<section><h2>Truncation</h2>
<p>The results were thinned to fit the results ConfigMap: each time-series point merges {{.SeriesStride}} intervals; interval histograms {{if eq .IntervalHistogramStride 0}}were left out{{else}}merge {{.IntervalHistogramStride}} intervals{{end}}; {{.SubscriptionsListed}} subscriptions are listed.</p>
</section>{{end}}
</div></main>
<footer>streambench · generated {{.Generated}} · units: MB = 10<sup>6</sup> bytes, latencies in ms</footer>
</body></html>
`))

var compareTmpl = template.Must(template.New("compare").Funcs(funcs).Parse(chartTmpl + comparisonTmpl + pageHead + `<h1>Comparison</h1>
<div class="sub">{{len .Rows}} runs · measured phase · latencies in ms</div>
<div class="badges">{{range .Rows}}<span class="badge"><span class="dot" style="{{dot .Color}}"></span>{{.Name}}</span>{{end}}</div>
</div></header>
<main><div class="wrap">
{{template "comparison" .}}
{{range .Charts}}<section>{{template "chart" .}}</section>{{end}}
</div></main>
<footer>streambench · generated {{.Generated}} · lowest value of each column in green</footer>
</body></html>
`))

// comparisonTmpl is the tables of one comparison (flags, latency, throughput
// and durability, testbed): the compare page and each table of a suite's
// page show the same thing.
const comparisonTmpl = `{{define "comparison"}}{{if .Flags}}<div class="warn" id="unfair"><p><strong>Unfair comparison: {{len .Flags}} flags</strong></p>{{range .Flags}}<p>⚑ <strong>{{.Kind}}</strong> {{.Message}}</p>{{end}}</div>{{end}}
{{if .Warnings}}<div class="warn">{{range .Warnings}}<p>⚠ {{.}}</p>{{end}}</div>{{end}}
{{range .Differences}}<section class="differences"><h2>{{.B}} against {{.A}}</h2>{{if .CannotTell}}<p class="sub">Cannot tell: {{.CannotTell}}</p>{{end}}
{{if .Verdicts}}<table><thead><tr><th>figure</th><th class="n">median A</th><th class="n">median B</th><th class="n">B / A</th><th class="n">95 % interval</th><th>verdict</th></tr></thead><tbody>
{{range .Verdicts}}<tr><td>{{.Figure}}</td><td class="n">{{num .MedianA}}</td><td class="n">{{num .MedianB}}</td><td class="n">{{if .Ratio}}{{printf "%.3f" .Ratio}}{{else}}–{{end}}</td><td class="n">{{if .High}}{{printf "%.3f" .Low}} – {{printf "%.3f" .High}}{{else}}–{{end}}</td><td>{{.String}}</td></tr>
{{end}}</tbody></table><p class="sub">From the runs' repeats: the Mann-Whitney test and the Hodges-Lehmann ratio (docs/methodology.md, "Repeats and differences"); "no difference" means the runs' own spread covers what separates them.</p>{{end}}</section>{{end}}
<div class="grid2">
{{range .Sections}}<section><h2>{{.Title}}</h2>
<table><thead><tr><th></th><th class="n">Average</th><th class="n">P50</th><th class="n">P90</th><th class="n">P99</th><th class="n">P999</th></tr></thead><tbody>
{{range .Rows}}<tr><td><span class="dot" style="{{dot .Color}}"></span>{{.Name}}</td>{{range .Cells}}<td class="n{{if .Best}} best{{end}}">{{.Text}}</td>{{end}}</tr>
{{end}}</tbody></table></section>{{end}}
</div>
{{if .LoadGen}}<section><h2>Load generator</h2>
<table><thead><tr><th></th><th class="n">send delay p99 (ms)</th><th class="n">publish p99 (ms)</th><th class="n">share</th><th>the latency is</th></tr></thead><tbody>
{{range .LoadGen}}<tr><td>{{index . 0}}</td><td class="n">{{index . 1}}</td><td class="n">{{index . 2}}</td><td class="n">{{index . 3}}</td><td>{{index . 4}}</td></tr>
{{end}}</tbody></table><p class="sub">Send delay is how late the load generator sent against its intended-time schedule (measured phase); where it is a visible share of the publish p99, part of the tail is the tool's.</p></section>{{end}}
{{if .Security}}<section id="security"><h2>Client security</h2>
<table><thead><tr><th></th><th>security</th><th>brokers' certificates</th></tr></thead><tbody>
{{range .Security}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td><td>{{index . 2}}</td></tr>
{{end}}</tbody></table><p class="sub">As each run's clients negotiated it (protocol, authentication, TLS version); TLS and authentication change the numbers.</p></section>{{end}}
{{if .BrokerJVM}}<section><h2>How the brokers ran</h2>
<table><thead><tr><th></th><th>where</th><th>Java</th><th>JVM</th></tr></thead><tbody>
{{range .BrokerJVM}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td><td>{{index . 2}}</td><td class="code">{{index . 3}}</td></tr>
{{end}}</tbody></table></section>{{end}}
{{if .BrokerRes}}<section><h2>Broker resources</h2>
<table><thead><tr><th></th><th>source</th><th class="n">CPU cores</th><th class="n">memory GiB</th><th class="n">disk write MB/s</th><th class="n">net in MB/s</th><th class="n">net out MB/s</th><th class="n">GC pause ms</th><th class="n">journal ms</th></tr></thead><tbody>
{{range .BrokerRes}}<tr>{{range $i, $c := .}}{{if lt $i 2}}<td>{{$c}}</td>{{else}}<td class="n">{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</tbody></table><p class="sub">All brokers together over each run's measured phase; – where the source has no such figure.</p></section>{{end}}
{{if .Cost}}<section id="cost"><h2>Efficiency and cost</h2>
<table><thead><tr><th></th><th>price model</th><th>resources from</th><th class="n">MB/s per core used</th><th class="n">per hour</th><th class="n">per TB produced</th><th class="n">projected per hour</th></tr></thead><tbody>
{{range .Cost}}<tr>{{range $i, $c := .}}{{if lt $i 3}}<td>{{$c}}</td>{{else}}<td class="n">{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</tbody></table><p class="sub">Each run's summary.json has every figure with its formula and its inputs' source; a projection scales the measured efficiency, and says what it assumes.</p></section>{{end}}
<section><h2>Throughput and durability</h2>
<table><thead><tr><th></th><th>system</th><th>durability level</th><th>durability</th><th class="n">publish msg/s</th><th class="n">publish MB/s</th><th class="n">consume MB/s</th><th class="n">lost</th><th class="n">not consumed</th><th class="n">duplicates</th></tr></thead><tbody>
{{range .Rows}}<tr><td><span class="dot" style="{{dot .Color}}"></span>{{.Name}}</td><td>{{.System}}</td><td>{{.Level}}</td><td>{{.Evidence}}</td><td class="n">{{.MsgPerSec}}</td><td class="n">{{.PubMB}}</td><td class="n">{{.ConsumeMB}}</td><td class="n{{if gt .Row.Lost 0}} bad{{end}}">{{.LostText}}</td><td class="n">{{.NotConsText}}</td><td class="n{{if gt .Row.Duplicates 0}} bad{{end}}">{{.DupsText}}</td></tr>
{{end}}</tbody></table></section>
{{if .Faults}}<section id="faults"><h2>Faults</h2>
<table><thead><tr><th>fault</th><th>run</th><th>action, target</th><th class="n">injected</th><th class="n">dip (of the target rate)</th><th>time to recover</th><th class="n">worst p99 (ms)</th><th class="n">lost</th></tr></thead><tbody>
{{range .Faults}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td><td>{{index . 2}}</td><td class="n">{{index . 3}}</td><td class="n">{{index . 4}}</td><td>{{index . 5}}</td><td class="n">{{index . 6}}</td><td class="n">{{index . 7}}</td></tr>
{{end}}</tbody></table><p class="sub">Each fault of each run side by side: injected is seconds after the start of the measured phase; the dip is the lowest interval's publish rate against the target; the worst p99 names its series (corrected: ack − intended send; publish: ack − send). Lost is the fault's own: the acknowledged messages sent in its intervals that a subscription never received (the run's total, marked "whole run", where the losses were not placed in time). Each run's report has every figure (docs/results.md, "Faults").</p></section>{{end}}
{{if .Testbed}}<section><h2>Testbed</h2>
<table><thead><tr><th></th><th class="n">write+fdatasync p50 (ms)</th><th class="n">p99 (ms)</th><th class="n">write MB/s</th><th>topology</th><th>machines</th></tr></thead><tbody>
{{range .Testbed}}<tr><td>{{index . 0}}</td><td class="n">{{index . 1}}</td><td class="n">{{index . 2}}</td><td class="n">{{index . 3}}</td><td>{{index . 4}}</td><td>{{index . 5}}</td></tr>
{{end}}</tbody></table><p class="sub">The slowest probed volume of each run, measured before the load. The median is what the testbed flag compares, beyond its spread over the probe's rounds (highest / lowest round median); one disk's p99 varies several-fold between probes. Machines: how many machines the run's nodes were (nodes that share a boot or machine id are one); per-node figures of nodes on one machine are that machine's.</p></section>{{end}}
{{end}}`
