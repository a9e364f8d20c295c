package report

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	dur "github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/results"
)

// fairTwins are a Kafka run and its Pulsar twin on the same testbed: same
// durability achieved, workload, disks; 3 Kafka brokers against 3 Pulsar
// brokers and 3 bookies.
func fairTwins() []Named {
	lat := v1alpha1.LatencySummary{Avg: 3, P50: 3, P99: 5, P999: 9}
	tb := func(brokers, bookies int32, p99, mbps float64) *v1alpha1.Testbed {
		return &v1alpha1.Testbed{Scope: v1alpha1.TestbedBrokerNodes, Topology: &v1alpha1.Topology{Brokers: brokers, Bookies: bookies},
			Nodes: []v1alpha1.NodeProbe{{Node: "n1", Volumes: []v1alpha1.VolumeProbe{{Name: "data", WriteMBPerSec: mbps, WriteBytes: 1 << 28,
				FsyncLatencyMs: v1alpha1.FsyncLatency{Count: 2000, P50: p99 / 4, P99: p99}}}}}}
	}
	k := summary("kafka", v1alpha1.SystemKafka, 2, lat, 4)
	k.Testbed = tb(3, 0, 4.0, 800)
	p := summary("pulsar", v1alpha1.SystemPulsar, 2, lat, 4)
	p.Testbed = tb(3, 3, 4.4, 760) // 10 % and 5 % apart: within the tolerance
	// The same envelope: per node 8 cores and 48Gi, Kafka's broker against
	// Pulsar's bookie and broker (and ZooKeeper off the data path).
	k.Testbed.Topology.Components = []v1alpha1.ComponentEnvelope{
		{Component: "broker", Replicas: 3, CPURequest: "8", MemoryRequest: "48Gi", MemoryLimit: "48Gi", Heap: "5120Mi"}}
	p.Testbed.Topology.Components = []v1alpha1.ComponentEnvelope{
		{Component: "metadataStore", Replicas: 3, CPURequest: "1", MemoryLimit: "2Gi"},
		{Component: "bookie", Replicas: 3, CPURequest: "5", MemoryRequest: "32Gi", MemoryLimit: "32Gi"},
		{Component: "broker", Replicas: 3, CPURequest: "3", MemoryRequest: "16Gi", MemoryLimit: "16Gi"}}
	for _, s := range []*results.Summary{k, p} {
		s.Phases[0].SendDelayMs = &results.LatencyDetail{P99: 0.2}
	}
	return []Named{{Name: "kafka", Summary: k}, {Name: "pulsar", Summary: p}}
}

func kinds(flags []Flag) []FlagKind {
	var out []FlagKind
	for _, f := range flags {
		out = append(out, f.Kind)
	}
	return out
}

func TestFlagsFairTwins(t *testing.T) {
	if f := Flags(fairTwins(), DefaultFairness); len(f) != 0 {
		t.Errorf("fair twins were flagged: %v", f)
	}
}

func TestFlags(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(k, p *results.Summary)
		kind   FlagKind
		text   string
	}{
		{"slower disk: fsync p50 more than 2x apart", func(_, p *results.Summary) {
			v := &p.Testbed.Nodes[0].Volumes[0].FsyncLatencyMs
			v.P50, v.P99 = 2.1, 5.1
		}, FlagTestbed, "the slowest write+fdatasync p50 is 1.000 ms vs 2.100 ms (p99 4.000 vs 5.100 ms), more than 2.00x apart"},
		{"slower disk: write MB/s more than 25 % apart", func(k, _ *results.Summary) {
			k.Testbed.Nodes[0].Volumes[0].WriteMBPerSec = 600
		}, FlagTestbed, "600.0 MB/s vs 760.0 MB/s"},
		{"one slow node of several is the one that counts", func(_, p *results.Summary) {
			p.Testbed.Nodes = append(p.Testbed.Nodes, v1alpha1.NodeProbe{Node: "n2", Volumes: []v1alpha1.VolumeProbe{{Name: "journal", WriteMBPerSec: 760, WriteBytes: 1,
				FsyncLatencyMs: v1alpha1.FsyncLatency{Count: 10, P50: 3, P99: 12}}}})
		}, FlagTestbed, "p50 is 1.000 ms vs 3.000 ms (p99 4.000 vs 12.000 ms)"},
		{"no testbed", func(k, _ *results.Summary) { k.Testbed = nil }, FlagTestbed, "no testbed was measured for kafka"},
		{"the local Pulsar twin's one broker", func(_, p *results.Summary) { p.Testbed.Topology.Brokers = 1 }, FlagTopology, "3 brokers vs 1"},
		{"fewer bookies than Kafka brokers", func(_, p *results.Summary) { p.Testbed.Topology.Bookies = 2 }, FlagTopology, "3 Kafka brokers store the data vs 2 bookies"},
		{"a bookie without a memory limit", func(_, p *results.Summary) { p.Testbed.Topology.Components[1].MemoryLimit = "" },
			FlagEnvelope, "pulsar's bookie has no memory limit: its page cache is bounded only by its node"},
		{"Kafka's brokers get more memory", func(k, _ *results.Summary) { k.Testbed.Topology.Components[0].MemoryLimit = "64Gi" },
			FlagEnvelope, "the data path's memory limits total 192.0 GiB vs 144.0 GiB"},
		{"Pulsar's data path gets more CPU", func(_, p *results.Summary) { p.Testbed.Topology.Components[2].CPURequest = "4" },
			FlagEnvelope, "the data path's CPU requests total 24.0 vs 27.0 cores"},
		{"durability achieved differs", func(k, _ *results.Summary) { k.Durability.AchievedLevel = 4 }, FlagDurability, "durability level 4 achieved vs level 2"},
		{"the study's \"2 acks\": the same level, not the same wait", func(k, p *results.Summary) {
			k.Durability, p.Durability = translated(t, v1alpha1.SystemKafka, level2), translated(t, v1alpha1.SystemPulsar, level2)
		}, FlagDurability, "level 2 on both, but an acknowledgement waits for every in-sync replica: 3 of 3 while all keep up, down to min.insync.replicas 2 once the leader drops a lagging one from the ISR (replica.lag.time.max.ms) (acks=all) vs 2 of 3 bookies"},
		{"workload differs", func(_, p *results.Summary) { p.Workload.MessageSize = 100 }, FlagWorkload, "different workloads"},
		{"load generator behind", func(_, p *results.Summary) { p.Phases[0].SendDelayMs.P99 = 40 }, FlagLoadGenerator, "pulsar: the load generator fell behind its schedule (send delay p99 40.00 ms > 5.00 ms)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runs := fairTwins()
			tc.mutate(runs[0].Summary, runs[1].Summary)
			flags := Flags(runs, DefaultFairness)
			if len(flags) != 1 || flags[0].Kind != tc.kind || !strings.Contains(flags[0].Message, tc.text) {
				t.Fatalf("flags %v, want one %s flag containing %q", flags, tc.kind, tc.text)
			}
		})
	}
}

var level2 = v1alpha1.DurabilitySpec{Level: ptr.To(v1alpha1.Level2)}

func translated(t *testing.T, sys v1alpha1.System, spec v1alpha1.DurabilitySpec) *v1alpha1.EffectiveDurability {
	t.Helper()
	eff, err := dur.TranslateFor(sys, dur.StallVersions(sys)[0], spec)
	if err != nil {
		t.Fatal(err)
	}
	return &eff
}

// TestFlagsMatchedAckWait: Pulsar with ack quorum = write quorum waits for
// as many replicas as Kafka's acks=all while all keep up: no flag.
func TestFlagsMatchedAckWait(t *testing.T) {
	runs := fairTwins()
	runs[0].Summary.Durability = translated(t, v1alpha1.SystemKafka, level2)
	runs[1].Summary.Durability = translated(t, v1alpha1.SystemPulsar, v1alpha1.DurabilitySpec{
		Replication: &v1alpha1.ReplicationDurability{Mode: v1alpha1.ReplicationSync, Replicas: 3, AckReplicas: 3},
		Local:       &v1alpha1.LocalDurability{Mode: v1alpha1.LocalAsync, Journal: v1alpha1.JournalWrite}})
	if runs[1].Summary.Durability.AchievedLevel != v1alpha1.Level2 {
		t.Fatalf("Pulsar with ack quorum 3: level %d, want 2", runs[1].Summary.Durability.AchievedLevel)
	}
	if f := Flags(runs, DefaultFairness); len(f) != 0 {
		t.Errorf("the matched twin was flagged: %v", f)
	}
}

// TestFlagsSameDiskProbedTwice: one disk's figures move by themselves
// between probes; a flag must need more than that. The figures are real
// probes of one disk of this project's 2-core VM, seconds apart.
func TestFlagsSameDiskProbedTwice(t *testing.T) {
	tests := []struct {
		name     string
		a, b     v1alpha1.VolumeProbe
		wantFlag string
	}{
		{"fsync medians 1.8x apart, tails 1.7x: the same disk",
			v1alpha1.VolumeProbe{WriteMBPerSec: 725.1, WriteBytes: 1, FsyncLatencyMs: v1alpha1.FsyncLatency{Count: 2000, P50: 0.148, P99: 0.218}},
			v1alpha1.VolumeProbe{WriteMBPerSec: 608.6, WriteBytes: 1, FsyncLatencyMs: v1alpha1.FsyncLatency{Count: 2000, P50: 0.264, P99: 0.361}}, ""},
		{"a write 1.4x slower, but its own rounds spread 2.4x: the same disk",
			v1alpha1.VolumeProbe{WriteMBPerSec: 606.2, WriteBytes: 1, WriteRoundsMBPerSec: []float64{342.3, 808.3, 826, 813.7}, FsyncLatencyMs: v1alpha1.FsyncLatency{Count: 2000, P50: 0.151, P99: 0.228}},
			v1alpha1.VolumeProbe{WriteMBPerSec: 830.8, WriteBytes: 1, WriteRoundsMBPerSec: []float64{840.1, 814.6, 826.3, 843}, FsyncLatencyMs: v1alpha1.FsyncLatency{Count: 2000, P50: 0.153, P99: 0.238}}, ""},
		{"the same write 1.4x slower from steady disks: different",
			v1alpha1.VolumeProbe{WriteMBPerSec: 606.2, WriteBytes: 1, WriteRoundsMBPerSec: []float64{600, 610, 605, 609}, FsyncLatencyMs: v1alpha1.FsyncLatency{Count: 2000, P50: 0.151, P99: 0.228}},
			v1alpha1.VolumeProbe{WriteMBPerSec: 830.8, WriteBytes: 1, WriteRoundsMBPerSec: []float64{840.1, 814.6, 826.3, 843}, FsyncLatencyMs: v1alpha1.FsyncLatency{Count: 2000, P50: 0.153, P99: 0.238}}, "606.2 MB/s vs 830.8 MB/s, more than 1.25x apart"},
		{"fsync medians 2.5x apart, but one disk's rounds spread 3x",
			v1alpha1.VolumeProbe{WriteMBPerSec: 700, WriteBytes: 1, FsyncLatencyMs: v1alpha1.FsyncLatency{Count: 2000, P50: 0.2, P99: 0.3, RoundP50s: []float64{0.1, 0.3, 0.2, 0.2}}},
			v1alpha1.VolumeProbe{WriteMBPerSec: 700, WriteBytes: 1, FsyncLatencyMs: v1alpha1.FsyncLatency{Count: 2000, P50: 0.5, P99: 0.9}}, ""},
		{"network storage against NVMe: different",
			v1alpha1.VolumeProbe{WriteMBPerSec: 700, WriteBytes: 1, FsyncLatencyMs: v1alpha1.FsyncLatency{Count: 2000, P50: 0.15, P99: 0.25, RoundP50s: []float64{0.15, 0.16, 0.15, 0.14}}},
			v1alpha1.VolumeProbe{WriteMBPerSec: 700, WriteBytes: 1, FsyncLatencyMs: v1alpha1.FsyncLatency{Count: 2000, P50: 1.1, P99: 2.4}}, "p50 is 0.150 ms vs 1.100 ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := fairTwins()
			runs[0].Summary.Testbed.Nodes[0].Volumes[0] = tt.a
			runs[1].Summary.Testbed.Nodes[0].Volumes[0] = tt.b
			f := Flags(runs, DefaultFairness)
			switch {
			case tt.wantFlag == "" && len(f) != 0:
				t.Errorf("flagged: %v", f)
			case tt.wantFlag != "" && (len(f) != 1 || !strings.Contains(f[0].Message, tt.wantFlag)):
				t.Errorf("flags %v, want one with %q", f, tt.wantFlag)
			}
		})
	}
}

func TestFlagsVersionsWithinOneSystem(t *testing.T) {
	runs := fairTwins()
	runs[1].Summary.System = v1alpha1.SystemKafka
	runs[1].Summary.Testbed.Topology = &v1alpha1.Topology{Brokers: 3, Version: "4.3.1"}
	runs[0].Summary.Testbed.Topology.Version = "4.2.0"
	if k := kinds(Flags(runs, DefaultFairness)); len(k) != 1 || k[0] != FlagTopology {
		t.Errorf("flags %v, want one topology flag for the versions", k)
	}
	// Across systems versions are always different and not a flag.
	runs = fairTwins()
	runs[0].Summary.Testbed.Topology.Version, runs[1].Summary.Testbed.Topology.Version = "4.3.1", "4.0.7"
	if f := Flags(runs, DefaultFairness); len(f) != 0 {
		t.Errorf("Kafka 4.3.1 vs Pulsar 4.0.7 flagged: %v", f)
	}
}

func TestFlagsTolerance(t *testing.T) {
	runs := fairTwins()
	v := &runs[1].Summary.Testbed.Nodes[0].Volumes[0].FsyncLatencyMs
	v.P50, v.P99 = 1.3, 5.1
	if f := Flags(runs, Fairness{TestbedTolerance: 0.5, FsyncTolerance: 0.5, MaxSendDelayP99Ms: 5}); len(f) != 0 {
		t.Errorf("27.5 %% apart flagged with a 50 %% tolerance: %v", f)
	}
}

// TestCompareShowsFlags: a run whose testbed was made slower is flagged in
// the text table and in the HTML.
func TestCompareShowsFlags(t *testing.T) {
	runs := fairTwins()
	runs[1].Summary.Testbed.Nodes[0].Volumes[0].FsyncLatencyMs.P50 = 2.25
	runs[1].Summary.Testbed.Nodes[0].Volumes[0].FsyncLatencyMs.P99 = 9
	tb, err := Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	text := tb.Text()
	for _, want := range []string{"Testbed (slowest probed volume)", "fsync p50 ms", "2.250", "9.000", "3 brokers, 3 bookies", "Unfair comparison: 1 flags", "flag [testbed] kafka vs pulsar"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	var html bytes.Buffer
	if err := RenderCompare(&html, runs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="unfair"`, "Unfair comparison: 1 flags", "<h2>Testbed</h2>", "kafka vs pulsar: the slowest write"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

// TestReportTestbedSection: the report of one run shows its testbed: each
// probed volume's figures, the node that was not measured, the note.
func TestReportTestbedSection(t *testing.T) {
	s := fairTwins()[1].Summary
	s.Testbed.Note = "1 of 2 nodes not measured ([n2]): see nodes[].error"
	s.Testbed.Nodes[0].CPUModel, s.Testbed.Nodes[0].CPUs, s.Testbed.Nodes[0].MemoryBytes = "Xeon 8375C", 8, 64<<30
	s.Testbed.Nodes[0].Volumes[0].StorageClassName = "local-nvme"
	s.Testbed.Nodes = append(s.Testbed.Nodes, v1alpha1.NodeProbe{Node: "n2", Roles: []string{"bookie"}, Error: "probe Job x failed: DeadlineExceeded"})
	var buf bytes.Buffer
	if err := Render(&buf, s, nil); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{`<section id="testbed"><h2>Testbed</h2>`, "Topology: 3 brokers, 3 bookies", "Xeon 8375C", "64.0", "local-nvme",
		"760.0", "4.400", "not measured: probe Job x failed: DeadlineExceeded", "1 of 2 nodes not measured"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	s.Testbed = nil
	buf.Reset()
	if err := Render(&buf, s, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `id="testbed"`) {
		t.Error("a run without a testbed has a Testbed section")
	}
}

// TestFlagsBrokerJVM: runs whose brokers' JVMs had another heap, collector
// or compiler are flagged, naming each difference; the same shape in
// another order, or other options, is not.
func TestFlagsBrokerJVM(t *testing.T) {
	small := []string{"-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true"}
	tests := []struct {
		name string
		b    []string
		want string
	}{
		{"the same JVM", small, ""},
		{"the same shape, other order and other options", []string{"-Djava.net.preferIPv4Stack=true", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx512m", "-Xms128m"}, ""},
		{"Kafka's production flags", []string{"-Xms1g", "-Xmx1g", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20"},
			"collector Serial vs G1, compiler C1 (tier 1) vs C2, initial heap 128m vs 1g, max heap 512m vs 1g"},
		{"tier 4 is C2", []string{"-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=4"}, "compiler C1 (tier 1) vs C2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := fairTwins()
			runs[0].Summary.Brokers = &results.BrokerSetup{Where: "local", JVM: small}
			runs[1].Summary.Brokers = &results.BrokerSetup{Where: "local", JVM: tt.b}
			f := Flags(runs, DefaultFairness)
			switch {
			case tt.want == "" && len(f) != 0:
				t.Errorf("flagged: %v", f)
			case tt.want != "" && (len(f) != 1 || f[0].Kind != FlagBrokerJVM || !strings.Contains(f[0].Message, tt.want)):
				t.Errorf("flags %v, want one broker JVM flag with %q", f, tt.want)
			}
			tb, err := Compare(runs)
			if err != nil {
				t.Fatal(err)
			}
			if text := tb.Text(); !strings.Contains(text, "How the brokers ran") || !strings.Contains(text, strings.Join(tt.b, " ")) {
				t.Errorf("compare's text does not state the JVMs:\n%s", text)
			}
		})
	}
}

// TestFlagsJava: brokers on different major Java versions are flagged,
// naming both runtimes; another build of the same major is not; an
// unknown Java on either side is not flagged but warned of. A managed run
// (no JVM options recorded) is not flagged for its JVM against a local one.
func TestFlagsJava(t *testing.T) {
	j17 := &v1alpha1.JavaRuntime{Version: "17.0.15+6-Debian-1deb12u1", Major: 17, Vendor: "Debian"}
	j17b := &v1alpha1.JavaRuntime{Version: "17.0.13+11-LTS", Major: 17, Vendor: "Red Hat, Inc."}
	j21 := &v1alpha1.JavaRuntime{Version: "21.0.5+11-LTS", Major: 21, Vendor: "Eclipse Adoptium"}
	local := []string{"-Xms128m", "-Xmx512m", "-XX:+UseSerialGC"}
	tests := []struct {
		name     string
		a, b     *results.BrokerSetup
		testbedB *v1alpha1.JavaRuntime // the topology's Java of b, when its brokers section has none
		flag     string
		warning  string
	}{
		{"the same build", &results.BrokerSetup{Java: j17, JVM: local}, &results.BrokerSetup{Java: j17, JVM: local}, nil, "", ""},
		{"another build of the same major", &results.BrokerSetup{Java: j17}, &results.BrokerSetup{Java: j17b}, nil, "", ""},
		{"Java 17 vs 21", &results.BrokerSetup{Java: j17, JVM: local}, &results.BrokerSetup{Java: j21, JVM: local}, nil,
			"Kafka on Java 17 (17.0.15+6-Debian-1deb12u1, Debian) vs Pulsar on Java 21 (21.0.5+11-LTS, Eclipse Adoptium): the brokers' Java major versions differ", ""},
		{"a local run against a managed one: JVM options unknown, Java differs", &results.BrokerSetup{Java: j17, JVM: local},
			&results.BrokerSetup{Where: "Kubernetes pods of the Pulsar chart", Java: j21}, nil, "Kafka on Java 17", ""},
		{"the testbed's Java when the brokers section has none", &results.BrokerSetup{Java: j17}, nil, j21, "vs Pulsar on Java 21", ""},
		{"unknown on one side", &results.BrokerSetup{Java: j17}, &results.BrokerSetup{Where: "local"}, nil, "",
			"pulsar: the brokers' Java version is not known"},
		{"unknown on both sides: nothing to say", nil, nil, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := fairTwins()
			runs[0].Summary.Brokers, runs[1].Summary.Brokers = tt.a, tt.b
			runs[1].Summary.Testbed.Topology.Java = tt.testbedB
			f := Flags(runs, DefaultFairness)
			switch {
			case tt.flag == "" && len(f) != 0:
				t.Errorf("flagged: %v", f)
			case tt.flag != "" && (len(f) != 1 || f[0].Kind != FlagJava || !strings.Contains(f[0].Message, tt.flag) || !strings.Contains(f[0].Message, "GC and JIT differ between majors")):
				t.Errorf("flags %v, want one Java flag with %q", f, tt.flag)
			}
			tb, err := Compare(runs)
			if err != nil {
				t.Fatal(err)
			}
			w := strings.Join(tb.Warnings, "\n")
			if tt.warning != "" && !strings.Contains(w, tt.warning) || tt.warning == "" && strings.Contains(w, "Java") {
				t.Errorf("warnings %q, want %q", w, tt.warning)
			}
			if tt.a != nil && tt.a.Java != nil {
				if text := tb.Text(); !strings.Contains(text, "How the brokers ran") || !strings.Contains(text, "17 (17.0.15+6-Debian-1deb12u1, Debian)") {
					t.Errorf("compare's text does not state the Java versions:\n%s", text)
				}
			}
		})
	}
}

// A run's report states the Java its brokers ran on, or that it is not
// known; a managed run's section has no JVM options row (none recorded).
func TestReportStatesTheBrokersJava(t *testing.T) {
	s := fairTwins()[0].Summary
	for _, tt := range []struct {
		brokers *results.BrokerSetup
		want    []string
		not     string
	}{
		{&results.BrokerSetup{Where: "local JVMs, 3 Kafka nodes", JVM: []string{"-Xmx512m"},
			Java: &v1alpha1.JavaRuntime{Version: "17.0.15+6-Debian-1deb12u1", Major: 17, Vendor: "Debian"}},
			[]string{"<td>Java</td><td>Java 17 (17.0.15&#43;6-Debian-1deb12u1, Debian)</td>", "JVM (heap, collector, compiler)"}, ""},
		{&results.BrokerSetup{Where: "Kubernetes pods of Strimzi: 3 Kafka brokers, image quay.io/strimzi/kafka:0.47.0-kafka-4.0.0",
			Java: &v1alpha1.JavaRuntime{Version: "17.0.13+11-LTS", Major: 17, Vendor: "Red Hat, Inc."}},
			[]string{"image quay.io/strimzi/kafka:0.47.0-kafka-4.0.0", "Java 17 (17.0.13&#43;11-LTS, Red Hat, Inc.)"}, "JVM (heap"},
		{&results.BrokerSetup{Where: "local JVMs, 3 Kafka nodes", JVM: []string{"-Xmx512m"}}, []string{"<td>Java</td><td>unknown (not recorded"}, ""},
	} {
		s.Brokers = tt.brokers
		var buf bytes.Buffer
		if err := Render(&buf, s, nil); err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(buf.String(), w) {
				t.Errorf("%s: the report lacks %q", tt.brokers.Where, w)
			}
		}
		if tt.not != "" && strings.Contains(buf.String(), tt.not) {
			t.Errorf("%s: the report has %q", tt.brokers.Where, tt.not)
		}
	}
}

// The report says what each component got, and marks a missing memory
// limit.
func TestReportShowsTheEnvelope(t *testing.T) {
	runs := fairTwins()
	p := runs[1].Summary
	p.Testbed.Topology.Components[1].MemoryLimit = ""
	var buf bytes.Buffer
	if err := Render(&buf, p, nil); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{`<table id="envelope">`, "<td>bookie</td>", `<td class="n bad">none</td>`, "<td>broker</td>", `<td class="n">16Gi</td>`} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}
