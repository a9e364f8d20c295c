package localrun

import (
	"bytes"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/testbed"
)

// TestProbeLocal runs the real probe on a local Kafka's data directory
// (no JVM is needed for that: the directory is what is measured) with
// small bounds, and shows it in the summary table.
func TestProbeLocal(t *testing.T) {
	saved := probeOptions
	probeOptions = testbed.Options{WriteBytes: 4 << 20, Appends: 50}
	defer func() { probeOptions = saved }()

	b := &brokers{kafka: &localbrokers.Kafka{Dir: t.TempDir(), Version: "4.3.1", Nodes: make([]localbrokers.KafkaNode, 3)}}
	tb := probeLocal(b, func(string, ...any) {})
	if tb.Scope != v1alpha1.TestbedLocalHost || *tb.Topology != (v1alpha1.Topology{Brokers: 3, Version: "4.3.1"}) {
		t.Errorf("scope %s topology %+v", tb.Scope, tb.Topology)
	}
	if len(tb.Nodes) != 1 || len(tb.Nodes[0].Volumes) != 1 {
		t.Fatalf("nodes %+v", tb.Nodes)
	}
	v := tb.Nodes[0].Volumes[0]
	if v.Name != "data" || v.WriteBytes != 4<<20 || v.FsyncLatencyMs.Count != 50 || tb.SlowestFsyncP99Ms == nil || *tb.SlowestFsyncP99Ms != v.FsyncLatencyMs.P99 {
		t.Errorf("volume %+v, slowest %v", v, tb.SlowestFsyncP99Ms)
	}
	if tb.Nodes[0].CPUs <= 0 {
		t.Errorf("CPUs %d, want this machine's", tb.Nodes[0].CPUs)
	}

	var out bytes.Buffer
	printTestbed(&out, tb)
	if !strings.Contains(out.String(), "testbed     ") || !strings.Contains(out.String(), "data: write ") || !strings.Contains(out.String(), "write+fdatasync 4096 B p50") {
		t.Errorf("summary lines:\n%s", out.String())
	}

	pulsar := &brokers{pulsar: &localbrokers.Pulsar{Dir: t.TempDir(), Version: "4.0.7", BookiePorts: []int{1, 2, 3}}}
	if got := *localTopology(pulsar); got != (v1alpha1.Topology{Brokers: 1, Bookies: 3, Version: "4.0.7"}) {
		t.Errorf("Pulsar standalone topology %+v, want 1 broker and 3 bookies", got)
	}

	existing := probeLocal(&brokers{}, func(string, ...any) {})
	if !strings.Contains(existing.Note, "the brokers' disks were not measured") || existing.Nodes[0].Volumes[0].Name != "scratch" {
		t.Errorf("existing: note %q, volumes %+v", existing.Note, existing.Nodes[0].Volumes)
	}
}
