package suite

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/outcome"
	"github.com/streambench/streambench-operator/internal/provision/probe"
	"github.com/streambench/streambench-operator/internal/report"
	"github.com/streambench/streambench-operator/internal/results"
)

// Keys of the suite's results ConfigMap.
const (
	// KeySuite is the suite's status as the results saw it (SuiteResults,
	// JSON): clusters, cells and their headline figures.
	KeySuite = "suite.json"
	// KeyTables is the comparison tables as text, laid out as the
	// durability study's (docs/methodology.md) Tables 2-2 to 2-4.
	KeyTables = "tables.txt"
	// CellKeyPrefix + cell + ".json" is a cell's summary.json.
	CellKeyPrefix = "cell."
)

// ConfigMapName is the suite's results ConfigMap.
func ConfigMapName(suite string) string { return suite + "-results" }

// CellKey is the key of a cell's summary in the results ConfigMap.
func CellKey(cell string) string { return CellKeyPrefix + cell + ".json" }

// SuiteResults is suite.json.
type SuiteResults struct {
	Suite    string                  `json:"suite"`
	Clusters []v1alpha1.SuiteCluster `json:"clusters"`
	Cells    []v1alpha1.SuiteCell    `json:"cells"`
	// Comparisons are the tables, one per workload and achieved level.
	Comparisons []Comparison `json:"comparisons"`
	// Notes say what the ConfigMap leaves out (summaries over its size
	// budget).
	Notes []string `json:"notes,omitempty"`
}

// Comparison is one of the study's tables: the cells of one workload that
// achieved one durability level, Kafka beside Pulsar.
type Comparison struct {
	Workload      string         `json:"workload"`
	AchievedLevel v1alpha1.Level `json:"achievedLevel"`
	Cells         []string       `json:"cells"`
	// Securities are the cells' security labels (status.cells[].security),
	// in Cells' order; absent when no cell has one.
	Securities []string `json:"securities,omitempty"`
	// FaultSchedules are the cells' fault schedules
	// (status.cells[].faultSchedule), in Cells' order; absent in a suite
	// without spec.faultSchedules.
	FaultSchedules []string `json:"faultSchedules,omitempty"`
	// Flags are compare's unfair-comparison flags among these cells,
	// without the security flags between cells of different security
	// settings (report.SuiteFlags): those are what the suite measures.
	Flags []report.Flag `json:"flags,omitempty"`
	Text  string        `json:"text"`
}

// Compare groups the cells that have a summary by workload and achieved
// level (the level the cell really got, not the one asked: a table that
// sets a Kafka level 2 beside a Pulsar level 1 is the unfair comparison
// the source studies warn of) and tabulates each group with report.Compare, Kafka
// first. Workloads keep spec order; levels go from strongest to weakest.
//
// Cells of different security settings (spec.systems[].securities) share
// a table, each its own row, in plan order (plain, then the secured
// settings as listed): the same workload and level at each setting is
// what shows the cost of security. The table then says each cell's
// security beside its durability, and leaves compare's security flags
// between different settings out (report.SuiteFlags).
//
// A repeated cell (spec.repeats) is one row: its median over the repeats
// that have results, in their intervals (results.Aggregate), so the table
// gives, between two repeated cells, compare's verdict on each figure.
func Compare(workloads []string, cells []v1alpha1.SuiteCell, summaries map[string]*results.Summary) ([]Comparison, error) {
	cellOf := map[string]v1alpha1.SuiteCell{}
	security, schedule := map[string]string{}, map[string]string{}
	// The repeats with results of each row, in the order they ran.
	reps := map[string][]*results.Summary{}
	repNames := map[string][]string{}
	var rows []string
	for _, c := range cells {
		name := rowName(c)
		if _, ok := cellOf[name]; !ok {
			cellOf[name], security[name], schedule[name] = c, c.Security, c.FaultSchedule
		}
		s := summaries[c.Name]
		if s == nil {
			continue
		}
		if _, ok := reps[name]; !ok {
			rows = append(rows, name)
		}
		reps[name] = append(reps[name], s)
		repNames[name] = append(repNames[name], c.Name)
	}
	type key struct {
		w string
		l v1alpha1.Level
	}
	groups := map[key][]report.Named{}
	var keys []key
	for _, name := range rows {
		c := cellOf[name]
		s, err := results.Fold(reps[name], repNames[name])
		if err != nil {
			return nil, fmt.Errorf("cell %s: %w", name, err)
		}
		if len(reps[name]) > 1 {
			// Priced as a repeated run's aggregate is, so each cell
			// has its cost in the tables.
			outcome.CostOfRepeats(s, reps[name])
		}
		level := c.AchievedLevel
		if s.Durability != nil {
			level = s.Durability.AchievedLevel
		}
		k := key{c.Workload, level}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], report.Named{Name: name, Summary: s})
	}
	slices.SortStableFunc(keys, func(a, b key) int {
		if d := slices.Index(workloads, a.w) - slices.Index(workloads, b.w); d != 0 {
			return d
		}
		return int(a.l - b.l)
	})
	var out []Comparison
	for _, k := range keys {
		runs := groups[k]
		slices.SortStableFunc(runs, func(a, b report.Named) int {
			return strings.Compare(string(a.Summary.System), string(b.Summary.System))
		})
		t, err := report.Compare(runs)
		if err != nil {
			return nil, err
		}
		var left, leftFaults int
		t.Flags, left = report.SuiteFlags(t.Flags, security)
		t.Flags, leftFaults = report.SuiteFaultFlags(t.Flags, schedule)
		c := Comparison{Workload: k.w, AchievedLevel: k.l, Flags: t.Flags}
		for _, r := range runs {
			c.Cells = append(c.Cells, r.Name)
			c.Securities = append(c.Securities, security[r.Name])
			c.FaultSchedules = append(c.FaultSchedules, schedule[r.Name])
		}
		if !slices.ContainsFunc(c.FaultSchedules, func(s string) bool { return s != "" }) {
			c.FaultSchedules = nil
		}
		head := cellsGrid(runs, cellOf)
		if !slices.ContainsFunc(c.Securities, func(s string) bool { return s != "" }) {
			c.Securities = nil
		}
		for _, note := range []string{report.SuiteSecurityNote(left), report.SuiteFaultsNote(leftFaults)} {
			if note != "" {
				head += note + "\n"
			}
		}
		if head != "" {
			head += "\n"
		}
		c.Text = fmt.Sprintf("== workload %s, achieved durability level %d ==\n%s%s", k.w, k.l, head, t.Text())
		out = append(out, c)
	}
	return out, nil
}

// rowName is the name of a cell's row in the tables: the cell's, without
// the repeat of a repeated suite.
func rowName(c v1alpha1.SuiteCell) string {
	if c.RepeatOf != "" {
		return c.RepeatOf
	}
	return c.Name
}

// cellsGrid says each row's durability, security setting and fault
// schedule as planned, when a cell of the table has a security label or
// a fault schedule (the columns of the others are left out); ""
// otherwise, so the tables of a suite without either are as they were.
func cellsGrid(runs []report.Named, cellOf map[string]v1alpha1.SuiteCell) string {
	sec := slices.ContainsFunc(runs, func(n report.Named) bool { return cellOf[n.Name].Security != "" })
	sched := slices.ContainsFunc(runs, func(n report.Named) bool { return cellOf[n.Name].FaultSchedule != "" })
	if !sec && !sched {
		return ""
	}
	var b strings.Builder
	b.WriteString("Cells (as planned)\n")
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	head := "\tsystem\tdurability"
	if sec {
		head += "\tsecurity"
	}
	if sched {
		head += "\tfault schedule"
	}
	fmt.Fprintln(w, head)
	for _, n := range runs {
		c := cellOf[n.Name]
		dur, _, err := DurabilityLabel(c.Durability)
		if err != nil {
			dur = fmt.Sprintf("l%d", c.RequestedLevel)
		}
		line := fmt.Sprintf("%s\t%s\t%s", n.Name, c.System, dur)
		if sec {
			line += "\t" + orDash(c.Security)
		}
		if sched {
			line += "\t" + orDash(c.FaultSchedule)
		}
		fmt.Fprintln(w, line)
	}
	_ = w.Flush()
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// BuildConfigMap lays out the suite's results: suite.json, tables.txt and
// each measured cell's summary. Summaries that would take the ConfigMap
// over results.MaxConfigMapBytes are left out (a note says so; each cell's
// own <cell>-results ConfigMap has it) rather than fail the suite.
func BuildConfigMap(s *v1alpha1.BenchmarkSuite, summaries map[string]*results.Summary) (*corev1.ConfigMap, error) {
	var workloads []string
	for _, w := range s.Spec.Workloads {
		workloads = append(workloads, w.Name)
	}
	summaries = WithDeployedTopologies(s, summaries)
	comparisons, err := Compare(workloads, s.Status.Cells, summaries)
	if err != nil {
		return nil, err
	}
	sr := SuiteResults{Suite: s.Name, Clusters: s.Status.Clusters, Cells: s.Status.Cells, Comparisons: comparisons}
	var tables strings.Builder
	for _, c := range comparisons {
		tables.WriteString(c.Text + "\n")
	}
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: ConfigMapName(s.Name), Namespace: s.Namespace,
			Labels: map[string]string{LabelSuite: s.Name},
		},
		Data: map[string]string{KeyTables: tables.String()},
	}
	size := len(tables.String())
	for _, c := range s.Status.Cells {
		sum := summaries[c.Name]
		if sum == nil {
			continue
		}
		raw, err := json.Marshal(sum)
		if err != nil {
			return nil, err
		}
		if size+len(raw) > results.MaxConfigMapBytes-64*1024 {
			sr.Notes = append(sr.Notes, fmt.Sprintf("the summary of cell %s is not here (over the ConfigMap's size budget); read ConfigMap %s", c.Name, results.ConfigMapName(c.Name)))
			continue
		}
		size += len(raw)
		cm.Data[CellKey(c.Name)] = string(raw)
	}
	raw, err := json.MarshalIndent(sr, "", "  ")
	if err != nil {
		return nil, err
	}
	cm.Data[KeySuite] = string(raw)
	return cm, nil
}

// WithDeployedTopologies gives the summary of each cell on a cluster the
// suite deployed the topology it was deployed with (probe.TopologyOf its
// HostRun), which the cell's run cannot tell: it reaches the cluster in
// existing mode, so its testbed has none. Without it the tables could not
// say a Pulsar of 3 bookies at ensemble 3 tolerates no bookie's loss
// where the Kafka beside it tolerates a broker's ([tolerance]). A
// summary with a topology of its own, or on an existing cluster of the
// spec, is kept as it is. The summaries are copies; the map given is not
// changed.
func WithDeployedTopologies(s *v1alpha1.BenchmarkSuite, summaries map[string]*results.Summary) map[string]*results.Summary {
	out := make(map[string]*results.Summary, len(summaries))
	for k, v := range summaries {
		out[k] = v
	}
	for _, c := range s.Status.Cells {
		sum := out[c.Name]
		if sum == nil || (sum.Testbed != nil && sum.Testbed.Topology != nil) {
			continue
		}
		i := slices.IndexFunc(s.Status.Clusters, func(sc v1alpha1.SuiteCluster) bool { return sc.Name == c.Cluster })
		if i < 0 || !s.Status.Clusters[i].Managed {
			continue
		}
		host, err := HostRun(s, s.Status.Clusters[i])
		if err != nil {
			continue
		}
		cp := *sum
		tb := v1alpha1.Testbed{}
		if sum.Testbed != nil {
			tb = *sum.Testbed.DeepCopy()
		}
		tb.Topology = probe.TopologyOf(host)
		cp.Testbed = &tb
		out[c.Name] = &cp
	}
	return out
}

// WriteFiles lays a suite's results ConfigMap out in dir as local mode
// writes a suite: suite.json, tables.txt and <cell>/summary.json, so
// `streambench report` renders both the same way.
func WriteFiles(cm *corev1.ConfigMap, dir string) error {
	if _, ok := cm.Data[KeySuite]; !ok {
		return fmt.Errorf("ConfigMap %s/%s has no key %s; it is not a suite's results ConfigMap", cm.Namespace, cm.Name, KeySuite)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for k, v := range cm.Data {
		path := filepath.Join(dir, k)
		if cell, ok := strings.CutPrefix(k, CellKeyPrefix); ok {
			cell = strings.TrimSuffix(cell, ".json")
			if cell != filepath.Base(cell) || cell == "." || cell == ".." {
				return fmt.Errorf("ConfigMap %s key %s: not a cell name", cm.Name, k)
			}
			if err := os.MkdirAll(filepath.Join(dir, cell), 0o755); err != nil {
				return err
			}
			path = filepath.Join(dir, cell, results.KeySummary)
		} else if k != filepath.Base(k) {
			return fmt.Errorf("ConfigMap %s key %s is not a plain file name", cm.Name, k)
		}
		if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
			return err
		}
	}
	return nil
}
