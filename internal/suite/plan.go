// Package suite plans a BenchmarkSuite: which clusters it needs, which cells
// run against each, in which order, and the BenchmarkRuns those are. It is
// pure (no API calls), so the controller and local mode share it and its
// table tests need no API server.
//
// The rule that shapes the plan (the durability study's (docs/methodology.md) study deployed each
// system once and ran every workload against it): two cells share a cluster
// unless their durability needs different broker settings. Kafka's levels
// differ only in topic and producer configuration (min.insync.replicas,
// flush.messages, flush.ms on the topic; acks on the producer), which a cell
// sets on its own topics, so one Kafka cluster serves every level. Pulsar's
// quorums are namespace policies, also per cell, but its local durability is
// the bookies' journal configuration (journalWriteData, journalSyncData,
// journalPageCacheFlushIntervalMSec), so Pulsar needs a cluster per journal
// configuration.
//
// A security setting (spec.systems[].securities) is the brokers' too: a
// listener's TLS and authentication are broker configuration, and the
// users or tokens are made for one cluster. So a managed system gets a
// cluster per broker setting and per security setting, and each cell runs
// with the credentials of its cluster.
package suite

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/faults"
	"github.com/streambench/streambench-operator/internal/provision"
)

// MaxRunName is the longest BenchmarkRun name the API accepts (its CRD
// refuses longer ones: Jobs, pods and brokers are named after it).
const MaxRunName = 40

// MaxCells is the most cells (child runs) a suite plans: each is an
// entry of status.cells, and the whole object must stay well inside what
// the API server stores (etcd's 1.5 MiB a request). The schema's own
// bounds allow 1,024 cells without repeats.
const MaxCells = 1200

// ClusterName is the name of a cluster of the suite (typed so a cell name
// cannot be passed for it).
type ClusterName string

// CellName is the name of a cell: its child BenchmarkRun's name.
type CellName string

// Cluster is one cluster the plan needs.
type Cluster struct {
	Name    ClusterName
	System  v1alpha1.System
	Managed bool
	// BrokerSettings set this cluster apart from the system's others.
	BrokerSettings map[string]string
	// Host is the durability the cluster is deployed with: its broker
	// settings are the ones every cell on it needs; topic, producer and
	// namespace settings are each cell's own.
	Host v1alpha1.DurabilitySpec
	// Security is the client security the cluster is deployed with; nil
	// for plaintext, anonymous brokers of a system without securities.
	Security *v1alpha1.ManagedSecurity
}

// Cell is one system × durability × workload.
type Cell struct {
	Name           CellName
	System         v1alpha1.System
	Workload       string
	Durability     v1alpha1.DurabilitySpec
	RequestedLevel v1alpha1.Level
	// Security is the label of the cluster's security (SuiteCell.Security).
	Security string
	// FaultSchedule is the spec.faultSchedules[].name the cell runs
	// under; empty in a suite without fault schedules.
	FaultSchedule string
	Cluster       ClusterName
	// Repeat counts from 1 among the repeats of RepeatOf, the cell's name
	// without the repeat; 0 and empty in a suite not repeated.
	Repeat   int
	RepeatOf CellName
}

// Plan is the clusters and cells of a suite, in the order they run: the
// cells of one cluster are consecutive, so each cluster is deployed once.
type Plan struct {
	Clusters []Cluster
	Cells    []Cell
}

// clusterSettings are the broker settings a durability needs of the whole
// cluster (see the package comment), with a short label for names.
func clusterSettings(system v1alpha1.System, d v1alpha1.DurabilitySpec) (settings map[string]string, label string, err error) {
	eff, err := durability.Translate(system, d)
	if err != nil {
		return nil, "", err
	}
	if system != v1alpha1.SystemPulsar {
		return nil, "", nil
	}
	bookie := eff.Pulsar.Bookie
	settings = map[string]string{}
	for _, k := range []string{durability.PulsarBookieJournalWriteData, durability.PulsarBookieJournalSyncData, durability.PulsarBookieJournalPageCacheFlushMSec} {
		if v, ok := bookie[k]; ok {
			settings[k] = v
		}
	}
	switch {
	case bookie[durability.PulsarBookieJournalSyncData] == "true":
		label = "jsync"
	case bookie[durability.PulsarBookieJournalWriteData] == "false":
		label = "jbypass"
	default:
		label = "jasync"
		if f := bookie[durability.PulsarBookieJournalPageCacheFlushMSec]; f != fmt.Sprint(durability.DefaultPulsarJournalFlushIntervalMs) {
			label += f
		}
	}
	return settings, label, nil
}

// DurabilityLabel says a durability in a cell name: l<level> for a level;
// for explicit settings the level they amount to, with -bypass for a
// bypassed journal and -f<ms> for a flush interval, so two explicit
// settings of one level get two names.
func DurabilityLabel(d v1alpha1.DurabilitySpec) (string, v1alpha1.Level, error) {
	r, err := durability.Resolve(d)
	if err != nil {
		return "", 0, err
	}
	label := fmt.Sprintf("l%d", r.Level)
	if d.Level != nil {
		return label, r.Level, nil
	}
	if r.Journal == v1alpha1.JournalBypass {
		label += "-bypass"
	}
	if r.FlushIntervalMs > 0 {
		label += fmt.Sprintf("-f%d", r.FlushIntervalMs)
	}
	if r.Replicas != durability.DefaultReplicas || r.AckReplicas != durability.DefaultAckReplicas {
		label += fmt.Sprintf("-r%d%d", r.Replicas, r.AckReplicas)
	}
	return label, r.Level, nil
}

// runName bounds a name to MaxRunName characters as a DNS label; a name
// that does not fit is cut and given a hash of the whole, so two cells
// never share a name.
func runName(parts ...string) string {
	return provision.DNSLabel(strings.Join(parts, "-"), MaxRunName, 6)
}

// New plans a suite whose workloads are resolved (status.workloads).
// Errors name the spec field and the fix.
func New(s *v1alpha1.BenchmarkSuite, workloads []v1alpha1.ResolvedWorkload) (Plan, error) {
	if err := checkFaultSchedules(s, workloads); err != nil {
		return Plan{}, err
	}
	var p Plan
	names := map[CellName]string{}
	for i, sys := range s.Spec.Systems {
		field := fmt.Sprintf("spec.systems[%d]", i)
		if sys.Cluster.Existing != nil {
			// An existing cluster is used as it is: its broker settings are
			// its own, and each cell's status.durability says what it gave.
			name := ClusterName(runName(s.Name, string(sys.System)))
			p.Clusters = append(p.Clusters, Cluster{Name: name, System: sys.System, Host: sys.Durabilities[0]})
			for j, d := range sys.Durabilities {
				if err := p.addCells(s, names, sys.System, d, fmt.Sprintf("%s.durabilities[%d]", field, j), name, "", "", workloads); err != nil {
					return Plan{}, err
				}
			}
			continue
		}
		secs, err := securities(sys, field)
		if err != nil {
			return Plan{}, err
		}
		for _, sec := range secs {
			if err := p.addManaged(s, names, sys, field, sec, workloads); err != nil {
				return Plan{}, err
			}
		}
	}
	if n := int(s.Spec.Repeats); n > 1 {
		if len(p.Cells)*n > MaxCells {
			return Plan{}, fmt.Errorf("spec.repeats: %d repeats of the suite's %d cells are %d child runs, over the %d a suite's status holds; lower spec.repeats or split the suite", n, len(p.Cells), len(p.Cells)*n, MaxCells)
		}
		cells, err := repeated(p.Cells, n, names)
		if err != nil {
			return Plan{}, err
		}
		p.Cells = cells
	}
	return p, nil
}

// repeated lays out every cell n times, interleaved within its cluster:
// the cluster's cells in plan order in odd rounds and in reverse in even
// ones (A B, B A, A B …), so that a drift of the machine over the suite
// weighs on each of them alike instead of reading as a difference between
// them, and neither always runs first on a fresh cluster. Cells of
// different clusters are not interleaved: a cluster stands only while its
// cells run (they are consecutive in the plan, and stay so).
func repeated(cells []Cell, n int, names map[CellName]string) ([]Cell, error) {
	var out []Cell
	for start := 0; start < len(cells); {
		end := start
		for end < len(cells) && cells[end].Cluster == cells[start].Cluster {
			end++
		}
		group := cells[start:end]
		for r := 1; r <= n; r++ {
			for k := range group {
				c := group[k]
				if r%2 == 0 {
					c = group[len(group)-1-k]
				}
				c.Durability = *c.Durability.DeepCopy()
				c.RepeatOf, c.Repeat = c.Name, r
				c.Name = CellName(runName(string(c.RepeatOf), fmt.Sprintf("r%d", r)))
				if other, dup := names[c.Name]; dup {
					return nil, fmt.Errorf("spec.repeats: repeat %d of cell %s would be named %s, as %s is; shorten spec.workloads[].name or the suite's name", r, c.RepeatOf, c.Name, other)
				}
				names[c.Name] = fmt.Sprintf("repeat %d of %s", r, c.RepeatOf)
				out = append(out, c)
			}
		}
		start = end
	}
	return out, nil
}

// securitySetting is one security setting of a managed system, with the label
// its names carry ("" for a system without securities: its names stay as
// they were before securities existed).
type securitySetting struct {
	setting   *v1alpha1.ManagedSecurity
	nameLabel string
}

// securities are the settings a managed system is measured at, in spec
// order: spec.systems[].securities, or the one of cluster.managed.security
// (nil: plaintext, anonymous). The schema refuses a setting listed twice;
// this says so too, for a suite that did not go through it.
func securities(sys v1alpha1.SuiteSystem, field string) ([]securitySetting, error) {
	if len(sys.Securities) == 0 {
		return []securitySetting{{setting: sys.Cluster.Managed.Security.DeepCopy()}}, nil
	}
	var out []securitySetting
	seen := map[string]int{}
	for k := range sys.Securities {
		sec := sys.Securities[k].DeepCopy()
		label := sec.Label()
		if other, dup := seen[label]; dup {
			return nil, fmt.Errorf("%s.securities[%d] and securities[%d] are the same setting (%s); remove one", field, other, k, label)
		}
		seen[label] = k
		out = append(out, securitySetting{setting: sec, nameLabel: label})
	}
	return out, nil
}

// addManaged plans a managed system's clusters at one security setting:
// one per distinct set of broker settings, in the order the durabilities
// first need them, each with its cells.
func (p *Plan) addManaged(s *v1alpha1.BenchmarkSuite, names map[CellName]string, sys v1alpha1.SuiteSystem, field string, sec securitySetting, workloads []v1alpha1.ResolvedWorkload) error {
	byKey := map[string]int{}
	var order []int
	var members [][]int
	for j, d := range sys.Durabilities {
		settings, label, err := clusterSettings(sys.System, d)
		if err != nil {
			return fmt.Errorf("%s.durabilities[%d]: %w", field, j, err)
		}
		key := canonical(settings)
		c, ok := byKey[key]
		if !ok {
			c = len(p.Clusters)
			byKey[key] = c
			parts := []string{s.Name, string(sys.System)}
			if sec.nameLabel != "" {
				parts = append(parts, sec.nameLabel)
			}
			if label != "" {
				parts = append(parts, label)
			}
			p.Clusters = append(p.Clusters, Cluster{
				Name: ClusterName(runName(parts...)), System: sys.System, Managed: true,
				BrokerSettings: settings, Host: hostDurability(sys.System, d), Security: sec.setting,
			})
			order = append(order, c)
			members = append(members, nil)
		}
		idx := slices.Index(order, c)
		members[idx] = append(members[idx], j)
	}
	cellLabel := sec.nameLabel
	if cellLabel == "" && sec.setting.Secured() {
		// One setting, not in the names, but said in the tables.
		cellLabel = sec.setting.Label()
	}
	for k, c := range order {
		for _, j := range members[k] {
			if err := p.addCells(s, names, sys.System, sys.Durabilities[j], fmt.Sprintf("%s.durabilities[%d]", field, j), p.Clusters[c].Name, sec.nameLabel, cellLabel, workloads); err != nil {
				return err
			}
		}
	}
	return nil
}

// hostDurability is what a managed cluster is deployed with. For Kafka it
// is level 2 whatever the cells ask: the broker-wide flush keys of level 1
// or 3 (log.flush.interval.messages=1) would hold for every topic without
// its own flush.messages, so a level-2 cell on that cluster would silently
// get level 1. Every cell sets its own topic keys.
func hostDurability(system v1alpha1.System, d v1alpha1.DurabilitySpec) v1alpha1.DurabilitySpec {
	if system == v1alpha1.SystemKafka {
		l := v1alpha1.Level2
		return v1alpha1.DurabilitySpec{Level: &l}
	}
	return d
}

// addCells plans the cells of one durability on cluster: nameLabel is the
// security in their names (empty for a system without securities),
// secLabel the label they record.
func (p *Plan) addCells(s *v1alpha1.BenchmarkSuite, names map[CellName]string, system v1alpha1.System, d v1alpha1.DurabilitySpec, field string, cluster ClusterName, nameLabel, secLabel string, workloads []v1alpha1.ResolvedWorkload) error {
	label, level, err := DurabilityLabel(d)
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	// A suite without fault schedules has one, unnamed and empty.
	schedules := []string{""}
	if len(s.Spec.FaultSchedules) > 0 {
		schedules = nil
		for _, fs := range s.Spec.FaultSchedules {
			schedules = append(schedules, fs.Name)
		}
	}
	for _, w := range workloads {
		for _, sched := range schedules {
			parts := []string{s.Name, string(system)}
			if nameLabel != "" {
				parts = append(parts, nameLabel)
			}
			parts = append(parts, label, w.Name)
			if sched != "" {
				parts = append(parts, sched)
			}
			name := CellName(runName(parts...))
			where := field + " with spec.workloads " + w.Name
			if nameLabel != "" {
				where = field + " at security " + nameLabel + " with spec.workloads " + w.Name
			}
			if sched != "" {
				where += " under spec.faultSchedules " + sched
			}
			if other, dup := names[name]; dup {
				return fmt.Errorf("%s and %s are the same cell (%s); remove one of the two durability settings", other, where, name)
			}
			names[name] = where
			p.Cells = append(p.Cells, Cell{
				Name: name, System: system, Workload: w.Name, Durability: *d.DeepCopy(),
				RequestedLevel: level, Security: secLabel, FaultSchedule: sched, Cluster: cluster,
			})
		}
	}
	return nil
}

// checkFaultSchedules checks every fault schedule against every system
// and workload it will run with, as a run's spec.faults is checked when
// it starts (internal/faults.Validate): a fault after a workload's
// measured phase, a target a system's topology lacks, faults on an
// existing cluster without its consent. Here, before any cluster is
// deployed, rather than as failed cells hours into the suite. Each error
// names the schedule's field, the system and the workload.
func checkFaultSchedules(s *v1alpha1.BenchmarkSuite, workloads []v1alpha1.ResolvedWorkload) error {
	seen := map[string]int{}
	var msgs []string
	for k, fs := range s.Spec.FaultSchedules {
		path := field.NewPath("spec", "faultSchedules").Index(k)
		if other, dup := seen[fs.Name]; dup {
			return fmt.Errorf("%s.name: %q is also spec.faultSchedules[%d].name; give each schedule its own name", path, fs.Name, other)
		}
		seen[fs.Name] = k
		if len(fs.Faults) == 0 {
			continue
		}
		for i, sys := range s.Spec.Systems {
			for j, w := range workloads {
				// The cell's run as the checks see it: the system's
				// cluster (managed: its topology; existing: its consent).
				spec := v1alpha1.BenchmarkRunSpec{System: sys.System, Cluster: *sys.Cluster.DeepCopy(), Workload: w.Spec, Faults: fs.Faults}
				// The checks speak of a run's fields; a suite's are these.
				fields := strings.NewReplacer("spec.workload.", fmt.Sprintf("spec.workloads[%d].spec.", j),
					"spec.cluster.", fmt.Sprintf("spec.systems[%d].cluster.", i), "spec.faults", path.Child("faults").String())
				// As a cluster run is: a cell runs as its child
				// BenchmarkRun (local mode refuses faults on the existing
				// cluster its cells run on).
				for _, e := range faults.Validate(&spec, path) {
					e.Detail = fields.Replace(e.Detail)
					msg := fmt.Sprintf("%s (spec.systems[%d], %s, with spec.workloads[%d] %s)", e.Error(), i, sys.System, j, w.Name)
					if !slices.Contains(msgs, msg) {
						msgs = append(msgs, msg)
					}
				}
			}
		}
	}
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "; "))
	}
	return nil
}

func canonical(m map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s=%s;", k, m[k])
	}
	return b.String()
}
