package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/brokerres"
	dur "github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/javaruntime"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
	"github.com/streambench/streambench-operator/internal/testbed"
)

// FlagKind is what makes two runs unlike.
type FlagKind string

const (
	FlagDurability FlagKind = "durability"
	FlagTopology   FlagKind = "topology"
	FlagTestbed    FlagKind = "testbed"
	FlagWorkload   FlagKind = "workload"
	// FlagLoadGenerator: the load generator fell behind its schedule, so
	// the latency measured is partly the tool's, not the broker's.
	FlagLoadGenerator FlagKind = "load generator"
	// FlagHostCPU: the host's CPUs were busy enough that the latency
	// measured is the host's as much as the broker's.
	FlagHostCPU FlagKind = "host CPU"
	// FlagBrokerJVM: the brokers' JVMs ran with a different heap,
	// collector or compiler.
	FlagBrokerJVM FlagKind = "broker JVM"
	// FlagJava: the brokers ran on different major Java versions.
	FlagJava FlagKind = "Java"
	// FlagEnvelope: the managed data paths got different CPU or memory,
	// or one has no memory limit (its page cache is unbounded).
	FlagEnvelope FlagKind = "envelope"
	// FlagSecurity: the clients' TLS or authentication differ (or one
	// run's is not recorded).
	FlagSecurity FlagKind = "security"
	// FlagMachines: one run's nodes share machines and the other's do not
	// (or share them differently): per-node figures and the brokers'
	// competition for CPUs, disk and page cache differ.
	FlagMachines FlagKind = "machines"
	// FlagCost: the two runs' costs were priced by different models, or
	// their resources measured by different sources (proc, Prometheus).
	FlagCost FlagKind = "cost"
	// FlagTolerance: runs with faults whose deployments ride out a
	// different number of lost brokers or bookies (durability.ToleranceOf):
	// the same fault is not the same failure to them.
	FlagTolerance FlagKind = "tolerance"
)

// Flag marks a pair of runs (or one run, for the load generator) whose
// comparison is not fair, and says why.
type Flag struct {
	Kind FlagKind
	// Runs are the two runs of the pair, or the one run.
	Runs    []string
	Message string
}

func (f Flag) String() string { return fmt.Sprintf("[%s] %s", f.Kind, f.Message) }

// Fairness are the tolerances of the flags.
type Fairness struct {
	// TestbedTolerance is how far apart (relative to the lower value) the
	// slowest write MB/s of two runs may be: 0.25 = 25 %; a disk whose
	// rate varied more over its own probe's rounds raises the bar to its
	// spread.
	TestbedTolerance float64
	// FsyncTolerance is the same for the slowest fsync p50 (1 = 2x). A
	// disk's fsync latency drifts more than its write rate, and over tens
	// of seconds, so a probe's rounds do not show all of it: 22 probes of
	// one disk here, seconds apart, had medians from 0.148 to 0.264 ms
	// (1.8x) and p99s from 0.218 to 0.361 ms, while a different kind of
	// disk (network block storage against local NVMe) is several times
	// slower.
	FsyncTolerance float64
	// MaxSendDelayP99Ms is the send delay p99 (send - intended send) of the
	// measured phase above which the load generator fell behind.
	MaxSendDelayP99Ms float64
}

// DefaultFairness: disks more than 25 % apart (the study saw instances of
// one type differ by more), and a load generator more than 5 ms behind
// its schedule at p99 (a publish p99 of a few ms would then be the tool's).
var DefaultFairness = Fairness{TestbedTolerance: 0.25, FsyncTolerance: 1, MaxSendDelayP99Ms: 5}

// Flags compares every pair of runs: achieved durability, topology
// (broker and bookie counts, versions), testbed figures, workload, the
// clients' security (TLS and authentication); and each run's load
// generator.
func Flags(runs []Named, f Fairness) []Flag {
	var out []Flag
	for i := range runs {
		for j := i + 1; j < len(runs); j++ {
			out = append(out, pairFlags(runs[i], runs[j], f)...)
		}
	}
	for _, n := range runs {
		m := phase(n.Summary, stats.PhaseMeasure)
		if m == nil || m.SendDelayMs == nil {
			continue
		}
		if d := m.SendDelayMs.P99; d > f.MaxSendDelayP99Ms {
			out = append(out, Flag{Kind: FlagLoadGenerator, Runs: []string{n.Name}, Message: fmt.Sprintf(
				"%s: the load generator fell behind its schedule (send delay p99 %.2f ms > %.2f ms): its latency is partly the tool's; add workers or lower the rate",
				n.Name, d, f.MaxSendDelayP99Ms)})
		}
	}
	for _, n := range runs {
		if h := hostOf(n.Summary); h != nil && h.CPUBound {
			out = append(out, Flag{Kind: FlagHostCPU, Runs: []string{n.Name}, Message: n.Name + ": " + h.CPUVerdict})
		}
	}
	return out
}

// javaOf is the Java runtime a run's brokers ran on: its brokers section,
// else its testbed's topology (the same probe); nil when not known.
func javaOf(s *results.Summary) *v1alpha1.JavaRuntime {
	if b := s.Brokers; b != nil && b.Java != nil {
		return b.Java
	}
	if tb := s.Testbed; tb != nil && tb.Topology != nil {
		return tb.Topology.Java
	}
	return nil
}

// javaUnknownWhy says why a run's Java is not known, as far as its
// summary tells.
func javaUnknownWhy(s *results.Summary) string {
	if tb := s.Testbed; tb != nil && tb.Topology == nil {
		return "an existing cluster"
	}
	return "not recorded, or its probe failed: see the run's notes and testbed note"
}

// hostOf is the host a run's brokers ran on, with its CPU verdict; nil
// when it was not measured (a cluster, an existing cluster, an older run).
func hostOf(s *results.Summary) *brokerres.Host {
	if s.BrokerResources == nil {
		return nil
	}
	return s.BrokerResources.Host
}

func pairFlags(a, b Named, f Fairness) []Flag {
	var out []Flag
	add := func(kind FlagKind, format string, args ...any) {
		out = append(out, Flag{Kind: kind, Runs: []string{a.Name, b.Name}, Message: fmt.Sprintf("%s vs %s: ", a.Name, b.Name) + fmt.Sprintf(format, args...)})
	}
	sa, sb := a.Summary, b.Summary

	if da, db := sa.Durability, sb.Durability; da != nil && db != nil && da.AchievedLevel != db.AchievedLevel {
		add(FlagDurability, "durability level %d achieved vs level %d", da.AchievedLevel, db.AchievedLevel)
	} else if (da == nil) != (db == nil) {
		add(FlagDurability, "the achieved durability of %s is not known", nameOfNil(a, b, da == nil))
	} else if da != nil {
		// The same level is not the same wait: the durability study calls
		// Kafka's acks=all with min.insync.replicas 2 and Pulsar's ack
		// quorum 2 of 3 both "2 acks", but the replica-stall experiment
		// shows Kafka's waiting for every in-sync replica (3 of 3 while
		// they keep up), so its tail is its slowest follower's.
		wa, oka := dur.AckWaitOf(*da)
		wb, okb := dur.AckWaitOf(*db)
		if oka && okb && wa.Healthy != wb.Healthy {
			add(FlagDurability, "level %d on both, but an acknowledgement waits for %s vs %s (docs/methodology.md, the replica-stall experiment): the latencies differ by whom they wait for; compare with a twin whose wait matches (e.g. Pulsar with ack quorum = write quorum)",
				da.AchievedLevel, wa.Description, wb.Description)
		}
	}

	if ca, cb := sa.Cost, sb.Cost; ca != nil && cb != nil {
		switch {
		case ca.Model.Name != cb.Model.Name || ca.Model.Currency != cb.Model.Currency:
			add(FlagCost, "priced by different models (%s in %s vs %s in %s): their costs do not compare; price them alike (spec.cost, --price-model)",
				ca.Model.Name, ca.Model.Currency, cb.Model.Name, cb.Model.Currency)
		case resourcesSource(sa) != resourcesSource(sb):
			add(FlagCost, "resources measured differently (%s vs %s): proc and Prometheus count CPU, memory and disk differently (brokerResources.notes), so their efficiency and cost compare with care",
				resourcesSource(sa), resourcesSource(sb))
		}
	}
	if workloadKey(sa.Workload) != workloadKey(sb.Workload) {
		add(FlagWorkload, "different workloads (%s vs %s)", describeWorkload(sa.Workload), describeWorkload(sb.Workload))
	}

	faultsFlag(a, b, add)
	toleranceFlag(a, b, add)

	if d := securityDiff(sa.Security, sb.Security, sa.System == sb.System); d != "" {
		add(FlagSecurity, "the clients' security differs (%s): TLS costs CPU on clients and brokers for every byte and changes batching, so the numbers differ by it as much as by the broker", d)
	} else if (sa.Security == nil) != (sb.Security == nil) {
		add(FlagSecurity, "the clients' security of %s is not recorded (results written before streambench recorded it)", nameOfNil(a, b, sa.Security == nil))
	}

	// A managed run's brokers section has no JVM options (the operator
	// does not read them): unknown, not the JVM's defaults.
	if ja, jb := sa.Brokers, sb.Brokers; ja != nil && jb != nil && len(ja.JVM) > 0 && len(jb.JVM) > 0 {
		if d := jvmDiff(ja.JVM, jb.JVM); d != "" {
			add(FlagBrokerJVM, "the brokers' JVMs differ (%s): a heap, collector or compiler changes latency and CPU as much as the broker does", d)
		}
	}
	// Unknown on either side is not flagged: compare's warnings say it.
	if ja, jb := javaOf(sa), javaOf(sb); ja != nil && jb != nil && ja.Major != jb.Major {
		add(FlagJava, "%s on %s vs %s on %s: the brokers' Java major versions differ (GC and JIT differ between majors: the default collector, its ergonomics, the compilers)",
			dur.SystemName(sa.System), javaruntime.String(ja), dur.SystemName(sb.System), javaruntime.String(jb))
	}

	ta, tb := sa.Testbed, sb.Testbed
	if ta == nil || tb == nil {
		missing := nameOfNil(a, b, ta == nil)
		if ta == nil && tb == nil {
			missing = "either run"
		}
		add(FlagTestbed, "no testbed was measured for %s: the disks and the topology under it are unknown", missing)
		return out
	}
	out = append(out, topologyFlags(a, b, add)...)
	machinesFlag(a, b, add)
	if ta.Scope != tb.Scope {
		add(FlagTestbed, "the probes measured different things (%s vs %s)", ta.Scope, tb.Scope)
	}
	// One disk's figures move by themselves from one probe to the next:
	// its fsync p99 most (two probes of one disk a minute apart measured
	// 0.687 and 0.244 ms), its median and write rate less, but on this
	// project's VMs still 1.8x and 1.6x. So the median, not the tail, is
	// compared, and two disks differ only when their figures are further
	// apart than the tolerance and than either disk's own spread over its
	// probe's rounds.
	fa, _, oka := testbed.SlowestFsync(ta.Nodes)
	fb, _, okb := testbed.SlowestFsync(tb.Nodes)
	if oka && okb {
		if bar, ok := beyond(fa.P50, fb.P50, f.FsyncTolerance, testbed.Spread(fa.RoundP50s), testbed.Spread(fb.RoundP50s)); ok {
			add(FlagTestbed, "the slowest write+fdatasync p50 is %.3f ms vs %.3f ms (p99 %.3f vs %.3f ms), more than %.2fx apart (the tolerance, or a disk's own spread over its probe's rounds if larger): the disks differ", fa.P50, fb.P50, fa.P99, fb.P99, bar)
		}
	}
	wa, oka := testbed.SlowestWrite(ta.Nodes)
	wb, okb := testbed.SlowestWrite(tb.Nodes)
	if oka && okb {
		if bar, ok := beyond(wa.WriteMBPerSec, wb.WriteMBPerSec, f.TestbedTolerance, testbed.Spread(wa.WriteRoundsMBPerSec), testbed.Spread(wb.WriteRoundsMBPerSec)); ok {
			add(FlagTestbed, "the slowest sequential write is %.1f MB/s vs %.1f MB/s, more than %.2fx apart (the tolerance, or a disk's own spread over its probe's rounds if larger): the disks differ", wa.WriteMBPerSec, wb.WriteMBPerSec, bar)
		}
	}
	return out
}

// topologyFlags compares the shapes. Across systems, Kafka's brokers are
// set against Pulsar's brokers (they serve clients) and against its
// bookies (they store the data); versions are compared within a system.
func topologyFlags(a, b Named, add func(FlagKind, string, ...any)) []Flag {
	xa, xb := a.Summary.Testbed.Topology, b.Summary.Testbed.Topology
	if xa == nil || xb == nil {
		if xa != xb {
			add(FlagTopology, "the topology of %s is not known (an existing cluster)", nameOfNil(a, b, xa == nil))
		}
		return nil
	}
	if xa.Brokers != xb.Brokers {
		add(FlagTopology, "%d brokers vs %d", xa.Brokers, xb.Brokers)
	}
	sysA, sysB := a.Summary.System, b.Summary.System
	switch {
	case sysA == sysB && xa.Bookies != xb.Bookies:
		add(FlagTopology, "%d bookies vs %d", xa.Bookies, xb.Bookies)
	case sysA == v1alpha1.SystemKafka && sysB == v1alpha1.SystemPulsar && xa.Brokers != xb.Bookies:
		add(FlagTopology, "%d Kafka brokers store the data vs %d bookies", xa.Brokers, xb.Bookies)
	case sysA == v1alpha1.SystemPulsar && sysB == v1alpha1.SystemKafka && xa.Bookies != xb.Brokers:
		add(FlagTopology, "%d bookies store the data vs %d Kafka brokers", xa.Bookies, xb.Brokers)
	}
	if sysA == sysB && xa.Version != xb.Version {
		add(FlagTopology, "%s version %q vs %q", sysA, xa.Version, xb.Version)
	}
	envelopeFlags(a, b, xa, xb, add)
	return nil
}

// envelopeTolerance is how far apart (as a ratio) the data paths' CPU or
// memory may be before a pair is flagged: quantities written by hand for
// twins (48Gi vs 16Gi+32Gi) match exactly; 10 % leaves room for rounding.
const envelopeTolerance = 0.10

// envelopeFlags compares what the data paths got in all: the brokers (and
// Pulsar's bookies, which store its data) times their CPU request and
// memory limit. ZooKeeper is off the data path. A component without a
// memory limit is flagged by itself: the page cache it fills is bounded
// only by its node.
func envelopeFlags(a, b Named, xa, xb *v1alpha1.Topology, add func(FlagKind, string, ...any)) {
	if len(xa.Components) == 0 || len(xb.Components) == 0 {
		return
	}
	type total struct {
		cpu, mem  float64
		unlimited []string
	}
	sum := func(n Named, t *v1alpha1.Topology) total {
		var out total
		for _, c := range t.Components {
			if c.Component == "metadataStore" {
				continue
			}
			if q, err := resource.ParseQuantity(c.CPURequest); err == nil {
				out.cpu += float64(c.Replicas) * q.AsApproximateFloat64()
			}
			q, err := resource.ParseQuantity(c.MemoryLimit)
			if err != nil || c.MemoryLimit == "" {
				out.unlimited = append(out.unlimited, n.Name+"'s "+c.Component)
				continue
			}
			out.mem += float64(c.Replicas) * q.AsApproximateFloat64()
		}
		return out
	}
	ta, tb := sum(a, xa), sum(b, xb)
	for _, u := range append(ta.unlimited, tb.unlimited...) {
		add(FlagEnvelope, "%s has no memory limit: its page cache is bounded only by its node", u)
	}
	if len(ta.unlimited)+len(tb.unlimited) > 0 {
		return // the totals of an unbounded side say nothing
	}
	if bar, ok := beyond(ta.mem, tb.mem, envelopeTolerance, 1, 1); ok && ta.mem > 0 && tb.mem > 0 {
		add(FlagEnvelope, "the data path's memory limits total %.1f GiB vs %.1f GiB, more than %.2fx apart", ta.mem/(1<<30), tb.mem/(1<<30), bar)
	}
	if bar, ok := beyond(ta.cpu, tb.cpu, envelopeTolerance, 1, 1); ok && ta.cpu > 0 && tb.cpu > 0 {
		add(FlagEnvelope, "the data path's CPU requests total %.1f vs %.1f cores, more than %.2fx apart", ta.cpu, tb.cpu, bar)
	}
}

// beyond reports whether x and y are further apart (as a ratio) than the
// bar: 1 + tol, or the largest of the spreads (ratios) if larger.
func beyond(x, y, tol float64, spreads ...float64) (bar float64, ok bool) {
	bar = 1 + tol
	for _, s := range spreads {
		bar = max(bar, s)
	}
	lo, hi := math.Min(x, y), math.Max(x, y)
	if lo <= 0 {
		return bar, hi > 0
	}
	return bar, hi/lo > bar
}

func nameOfNil(a, b Named, aIsNil bool) string {
	if aIsNil {
		return a.Name
	}
	return b.Name
}

type workloadKnobs struct {
	Topics, Partitions, Size, Producers, Subs, Consumers, Rate int64
}

func workloadKey(w v1alpha1.WorkloadSpec) workloadKnobs {
	k := workloadKnobs{Topics: int64(w.Topics), Partitions: int64(w.PartitionsPerTopic), Size: int64(w.MessageSize),
		Producers: int64(w.ProducersPerTopic), Consumers: int64(w.ConsumerPerSubscription), Rate: w.ProducerRate}
	if w.SubscriptionsPerTopic != nil {
		k.Subs = int64(*w.SubscriptionsPerTopic)
	}
	return k
}

func describeWorkload(w v1alpha1.WorkloadSpec) string {
	k := workloadKey(w)
	return describe(k.Topics, k.Partitions, k.Size, k.Rate, k.Producers, k.Subs, k.Consumers)
}

// testbedCells are a run's row of the Testbed table: its slowest disk
// figures and its topology. The fsync median is the one the testbed flag
// compares (tails of one disk drift several-fold between probes), with
// its spread over the probe's rounds (highest / lowest); the p99 is shown beside it.
func testbedCells(s *results.Summary) (fsync50, fsync99, write, topo string) {
	fsync50, fsync99, write, topo = "–", "–", "–", "–"
	tb := s.Testbed
	if tb == nil {
		return
	}
	if !disksMeasured(tb) {
		fsync50 = "not measured" // why: the compare warnings quote the note
	}
	if l, _, ok := testbed.SlowestFsync(tb.Nodes); ok {
		fsync50 = fmt.Sprintf("%.3f", l.P50)
		if sp := testbed.Spread(l.RoundP50s); sp > 1 {
			fsync50 += fmt.Sprintf(" (rounds ×%.2f)", sp)
		}
	}
	if v, _, ok := testbed.SlowestFsyncP99(tb.Nodes); ok {
		fsync99 = fmt.Sprintf("%.3f", v)
	}
	if v, ok := testbed.SlowestWriteMBPerSec(tb.Nodes); ok {
		write = fmt.Sprintf("%.1f", v)
	}
	topo = topologyText(s.System, tb.Topology)
	return
}

// disksMeasured says whether any volume of the testbed has a figure. A
// testbed without one (the probe off, a static class it must not claim,
// every probe failed) is not a disk to compare: no testbed flag is raised
// on it, and compare says why it was not measured instead.
func disksMeasured(tb *v1alpha1.Testbed) bool {
	_, _, fsync := testbed.SlowestFsync(tb.Nodes)
	_, write := testbed.SlowestWrite(tb.Nodes)
	return fsync || write
}

func topologyText(sys v1alpha1.System, t *v1alpha1.Topology) string {
	if t == nil {
		return "unknown"
	}
	s := fmt.Sprintf("%d brokers", t.Brokers)
	if sys == v1alpha1.SystemPulsar {
		s += fmt.Sprintf(", %d bookies", t.Bookies)
	}
	if t.Version != "" {
		s += ", " + t.Version
	}
	return s
}

// jvmShape is what of a JVM's options shapes a broker's performance: heap,
// direct memory, collector and compiler ("C2" unless the tiers stop
// earlier).
func jvmShape(opts []string) map[string]string {
	m := map[string]string{"collector": "default", "compiler": "C2"}
	for _, o := range opts {
		switch {
		case strings.HasPrefix(o, "-Xmx"):
			m["max heap"] = strings.TrimPrefix(o, "-Xmx")
		case strings.HasPrefix(o, "-Xms"):
			m["initial heap"] = strings.TrimPrefix(o, "-Xms")
		case strings.HasPrefix(o, "-XX:MaxDirectMemorySize="):
			m["direct memory"] = strings.TrimPrefix(o, "-XX:MaxDirectMemorySize=")
		case strings.HasPrefix(o, "-XX:+Use") && strings.HasSuffix(o, "GC"):
			m["collector"] = strings.TrimSuffix(strings.TrimPrefix(o, "-XX:+Use"), "GC")
		case strings.HasPrefix(o, "-XX:TieredStopAtLevel="):
			if lvl := strings.TrimPrefix(o, "-XX:TieredStopAtLevel="); lvl != "4" {
				m["compiler"] = "C1 (tier " + lvl + ")"
			}
		}
	}
	return m
}

// jvmDiff says how two JVMs' shapes differ ("max heap 512m vs 1g, ..."),
// empty when they do not.
func jvmDiff(a, b []string) string {
	sa, sb := jvmShape(a), jvmShape(b)
	keys := map[string]bool{}
	for k := range sa {
		keys[k] = true
	}
	for k := range sb {
		keys[k] = true
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		va, vb := sa[k], sb[k]
		if va == "" {
			va = "unset"
		}
		if vb == "" {
			vb = "unset"
		}
		if va != vb {
			out = append(out, fmt.Sprintf("%s %s vs %s", k, va, vb))
		}
	}
	return strings.Join(out, ", ")
}

// resourcesSource is where a run's broker resources came from, or "not
// measured".
func resourcesSource(s *results.Summary) string {
	if s.BrokerResources == nil {
		return "not measured"
	}
	return s.BrokerResources.Source
}
