package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/results"
)

// Suite files: what a suite's results ConfigMap holds, laid out in a
// directory as local mode writes it: suite.json, tables.txt and a
// directory per cell with its summary.json.
const (
	SuiteFile       = "suite.json"
	SuiteReportFile = "report.html"
)

// SuiteGroup is one of the suite's tables: the cells of one workload at one
// achieved durability level.
type SuiteGroup struct {
	Workload      string         `json:"workload"`
	AchievedLevel v1alpha1.Level `json:"achievedLevel"`
	Cells         []string       `json:"cells"`
}

// SuiteIndex is the part of suite.json the report reads. internal/suite
// writes it (SuiteResults) and imports this package for the tables, so the
// shape is repeated here rather than imported.
type SuiteIndex struct {
	Suite       string                  `json:"suite"`
	Clusters    []v1alpha1.SuiteCluster `json:"clusters"`
	Cells       []v1alpha1.SuiteCell    `json:"cells"`
	Comparisons []SuiteGroup            `json:"comparisons"`
	Notes       []string                `json:"notes,omitempty"`
}

type suitePage struct {
	Title, Generated string
	Index            SuiteIndex
	Groups           []suiteGroupView
	// Security is true when a cell records a security setting: the cells
	// table then has its column.
	Security bool
	// Faults is true when a cell runs under a fault schedule: the cells
	// table then has its column.
	Faults bool
}

type suiteGroupView struct {
	Title string
	Page  *comparePage
	// Note says why security flags were left out of this table.
	Note string
}

// SuiteFlags are the flags of one of a suite's tables, given each cell's
// security label (status.cells[].security). A suite that lists
// spec.systems[].securities measures what security costs: its cells of
// different settings differ in security by design, and its tables say
// each cell's setting, so compare's FlagSecurity between two of them is
// the dimension under study, not an unfair pair, and is left out. Between
// cells of one setting, or a cell without a label (an existing cluster's,
// or a system measured at one plaintext setting), it stays: there it is
// a difference nobody asked for.
func SuiteFlags(flags []Flag, security map[string]string) (kept []Flag, left int) {
	for _, f := range flags {
		if f.Kind == FlagSecurity && len(f.Runs) == 2 {
			a, b := security[f.Runs[0]], security[f.Runs[1]]
			if a != "" && b != "" && a != b {
				left++
				continue
			}
		}
		kept = append(kept, f)
	}
	return kept, left
}

// SuiteFaultFlags leaves out compare's FlagFaults between two cells of
// different fault schedules (status.cells[].faultSchedule): a suite with
// spec.faultSchedules measures a cell under each on purpose, and its
// tables name each cell's schedule. A fault flag between cells of one
// schedule (a fault one of them missed) is kept. left counts those left
// out.
func SuiteFaultFlags(flags []Flag, schedule map[string]string) (kept []Flag, left int) {
	for _, f := range flags {
		if f.Kind == FlagFaults && len(f.Runs) == 2 && schedule[f.Runs[0]] != schedule[f.Runs[1]] {
			left++
			continue
		}
		kept = append(kept, f)
	}
	return kept, left
}

// SuiteFaultsNote says that fault flags were left out (SuiteFaultFlags).
func SuiteFaultsNote(left int) string {
	if left == 0 {
		return ""
	}
	return fmt.Sprintf("The fault schedules differ between these cells by design (spec.faultSchedules): %d faults flags between cells of different schedules are left out; the Faults table sets their faults side by side.", left)
}

// SuiteSecurityNote says that security flags were left out (SuiteFlags).
func SuiteSecurityNote(left int) string {
	if left == 0 {
		return ""
	}
	return fmt.Sprintf("Security differs between these cells by design (spec.systems[].securities): %d security flags between cells of different settings are left out; the client security table says what each cell ran with.", left)
}

// RenderSuiteDir writes dir/report.html: the suite's cells and clusters,
// then each table (per workload and achieved level, Kafka beside Pulsar,
// with compare's unfair-comparison flags) with its charts beside it.
func RenderSuiteDir(dir string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, SuiteFile))
	if err != nil {
		return "", fmt.Errorf("%s is not a suite's results directory: %w", dir, err)
	}
	var idx SuiteIndex
	if err := json.Unmarshal(raw, &idx); err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(dir, SuiteFile), err)
	}
	pg := &suitePage{Title: "streambench suite " + idx.Suite, Generated: time.Now().UTC().Format("2006-01-02 15:04 MST"), Index: idx}
	security, schedule := map[string]string{}, map[string]string{}
	for _, c := range idx.Cells {
		security[c.Name] = c.Security
		pg.Security = pg.Security || c.Security != ""
		schedule[c.Name] = c.FaultSchedule
		if c.RepeatOf != "" {
			schedule[c.RepeatOf] = c.FaultSchedule
		}
		pg.Faults = pg.Faults || c.FaultSchedule != ""
	}
	for _, g := range idx.Comparisons {
		var runs []Named
		for _, c := range g.Cells {
			n, err := loadRow(dir, c, idx.Cells)
			if err != nil {
				return "", fmt.Errorf("cell %s: %w", c, err)
			}
			n.Name = c
			runs = append(runs, n)
		}
		cp, err := comparePageOf(runs, DefaultFairness)
		if err != nil {
			return "", err
		}
		var left, leftFaults int
		cp.Flags, left = SuiteFlags(cp.Flags, security)
		cp.Flags, leftFaults = SuiteFaultFlags(cp.Flags, schedule)
		note := strings.TrimSpace(SuiteSecurityNote(left) + " " + SuiteFaultsNote(leftFaults))
		pg.Groups = append(pg.Groups, suiteGroupView{Title: fmt.Sprintf("%s at achieved durability level %d", g.Workload, g.AchievedLevel), Page: cp, Note: note})
	}
	path := filepath.Join(dir, SuiteReportFile)
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := RenderSuite(f, pg); err != nil {
		return "", err
	}
	return path, f.Close()
}

// loadRow is one row of a suite's table: the cell's results, or for a
// cell of a repeated suite (spec.repeats) its repeats' results folded into
// one (results.Aggregate), as suite.Compare folded them for tables.txt.
// Repeats without results (failed) are left out, as there.
func loadRow(dir, row string, cells []v1alpha1.SuiteCell) (Named, error) {
	var sums []*results.Summary
	var names []string
	for _, c := range cells {
		if c.RepeatOf != row {
			continue
		}
		n, err := Load(filepath.Join(dir, c.Name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Named{}, fmt.Errorf("repeat %s: %w", c.Name, err)
		}
		sums, names = append(sums, n.Summary), append(names, c.Name)
	}
	if len(sums) == 0 {
		return Load(filepath.Join(dir, row))
	}
	s, err := results.Fold(sums, names)
	if err != nil {
		return Named{}, err
	}
	return Named{Summary: s}, nil
}

// RenderSuite executes the suite page.
func RenderSuite(w io.Writer, pg *suitePage) error { return suiteTmpl.Execute(w, pg) }

func fmtOpt(v *float64) string {
	if v == nil {
		return "–"
	}
	return ms(*v)
}

var suiteTmpl = template.Must(template.New("suite").Funcs(funcs).Funcs(template.FuncMap{"opt": fmtOpt, "fms": ms, "fmb": mbps}).Parse(chartTmpl + comparisonTmpl + `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>{{.Title}}</title>
<style>` + css + `
/* Tables and charts of one comparison side by side: equal columns however
   wide the tables are (they scroll), so the charts keep half the page. */
.side{grid-template-columns:minmax(0,1fr) minmax(0,1fr)}
.side>div{overflow-x:auto;min-width:0}
/* In half a page the publish and end-to-end tables go one under the other. */
.side .grid2{grid-template-columns:minmax(0,1fr)}
</style></head>
<body>
<header><div class="wrap">
<h1>Suite {{.Index.Suite}}</h1>
<div class="sub">{{len .Index.Cells}} cells on {{len .Index.Clusters}} clusters · one table per workload and achieved durability level</div>
</div></header>
<main><div class="wrap">
<section><h2>Cells</h2>
<table><thead><tr><th>cell</th><th>system</th><th>workload</th><th class="n">level asked</th><th class="n">achieved</th>{{if $.Security}}<th>security</th>{{end}}{{if $.Faults}}<th>fault schedule</th>{{end}}<th>cluster</th><th>phase</th><th class="n">publish MB/s</th><th class="n">publish p99</th><th class="n">e2e p99 (ms)</th></tr></thead><tbody>
{{range .Index.Cells}}<tr><td class="code">{{.Name}}</td><td>{{.System}}</td><td>{{.Workload}}</td><td class="n">{{.RequestedLevel}}</td><td class="n">{{if .AchievedLevel}}{{.AchievedLevel}}{{else}}–{{end}}</td>{{if $.Security}}<td>{{if .Security}}{{.Security}}{{else}}–{{end}}</td>{{end}}{{if $.Faults}}<td>{{if .FaultSchedule}}{{.FaultSchedule}}{{else}}–{{end}}</td>{{end}}<td class="code">{{.Cluster}}</td><td{{if eq (print .Phase) "Failed"}} class="bad"{{end}}>{{.Phase}}{{if .Message}} <small>{{.Message}}</small>{{end}}</td>{{with .Results}}<td class="n">{{fmb .PublishMBPerSec}}</td><td class="n">{{fms .PublishP99Ms}}</td><td class="n">{{opt .EndToEndP99Ms}}</td>{{else}}<td class="n">–</td><td class="n">–</td><td class="n">–</td>{{end}}</tr>
{{end}}</tbody></table>
<p class="sub">Clusters: {{range $i, $c := .Index.Clusters}}{{if $i}}; {{end}}<span class="code">{{$c.Name}}</span> ({{$c.System}}{{if $c.Managed}}, deployed{{else}}, existing{{end}}{{with $c.Security}}, security {{.Label}}{{end}}{{range $k, $v := $c.BrokerSettings}}, {{$k}}={{$v}}{{end}}){{end}}</p>
{{if .Index.Notes}}<ul class="notes">{{range .Index.Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
</section>
{{range .Groups}}<section><h2>{{.Title}}</h2>
{{if .Note}}<p class="sub">{{.Note}}</p>{{end}}
<div class="grid2 side"><div>{{template "comparison" .Page}}</div><div>{{range .Page.Charts}}{{template "chart" .}}{{end}}</div></div>
</section>{{end}}
</div></main>
<footer>streambench · generated {{.Generated}} · lowest value of each column in green</footer>
</body></html>
`))
