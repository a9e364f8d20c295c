package localrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/pagecache"
	"github.com/streambench/streambench-operator/internal/testbed"
)

// smallProbe bounds the disk probe of every run these tests make: about
// 14 runs start brokers here, and the default bounds (256 MiB and 2000
// write+fdatasync appends, up to 40 s) are the probe's (internal/testbed)
// and TestProbeLocal's concern, not a run's. A run's tests check that it
// probes the brokers' disk and reports it (checkResults).
var smallProbe = testbed.Options{WriteBytes: 4 << 20, Appends: 50, WriteTime: 5 * time.Minute, AppendTime: 5 * time.Minute}

func TestMain(m *testing.M) {
	probeOptions = smallProbe
	os.Exit(m.Run())
}

// TestProbeLocal runs the real probe on a local Kafka's data directory
// (no JVM is needed for that: the directory is what is measured) with
// small bounds, and shows it in the summary table.
func TestProbeLocal(t *testing.T) {
	// TestMain set smallProbe: time bounds far above the work, so only the
	// size and count are reached.
	b := &brokers{kafka: &localbrokers.Kafka{Dir: t.TempDir(), Version: "4.3.1", Nodes: make([]localbrokers.KafkaNode, 3)}}
	tb := probeLocal(b, func(string, ...any) {})
	if tb.Scope != v1alpha1.TestbedLocalHost || !reflect.DeepEqual(*tb.Topology, v1alpha1.Topology{Brokers: 3, Version: "4.3.1"}) {
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
	if got := *localTopology(pulsar); !reflect.DeepEqual(got, v1alpha1.Topology{Brokers: 1, Bookies: 3, Version: "4.0.7"}) {
		t.Errorf("Pulsar standalone topology %+v, want 1 broker and 3 bookies", got)
	}

	existing := probeLocal(&brokers{}, func(string, ...any) {})
	if !strings.Contains(existing.Note, "the brokers' disks were not measured") || existing.Nodes[0].Volumes[0].Name != "scratch" {
		t.Errorf("existing: note %q, volumes %+v", existing.Note, existing.Nodes[0].Volumes)
	}
}

// Local mode drops the host's page cache only as root; otherwise, and when
// the drop itself fails, the summary says it did not happen and why, and
// the run goes on. The real drop is replaced: it would need root here.
func TestHostDropper(t *testing.T) {
	var said []string
	say := func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }
	drops := 0
	h := &hostDropper{host: "box", say: say, euid: func() int { return 1000 }, drop: func() error { drops++; return nil }, seq: -1}

	d, err := h.DropPageCache(context.Background(), pagecache.ReasonBeforeLoad)
	if err != nil || d.Dropped || drops != 0 || d.Seq != 0 || !strings.Contains(d.Message, "needs root") || !strings.Contains(d.Message, "spec.testbed.dropPageCache") {
		t.Errorf("as uid 1000: %+v, %v, %d drops; want not dropped, saying it needs root", d, err, drops)
	}

	h.euid = func() int { return 0 }
	d, err = h.DropPageCache(context.Background(), pagecache.ReasonBeforeDrain)
	if err != nil || !d.Dropped || drops != 1 || d.Seq != 1 || d.Nodes[0] != "box" || d.At.IsZero() {
		t.Errorf("as root: %+v, %v, %d drops; want dropped on box as request 1", d, err, drops)
	}

	h.drop = func() error { return errors.New("drop the page cache: read-only file system") }
	d, err = h.DropPageCache(context.Background(), pagecache.ReasonBeforeDrain)
	if err != nil || d.Dropped || !strings.Contains(d.Message, "read-only file system") {
		t.Errorf("as root, drop failing: %+v, %v; want not dropped, with the error", d, err)
	}
	if len(said) != 3 || !strings.Contains(said[1], "dropped "+pagecache.ReasonBeforeDrain) || !strings.Contains(said[2], "NOT dropped") {
		t.Errorf("said %q", said)
	}

	var out bytes.Buffer
	printTestbed(&out, &v1alpha1.Testbed{PageCacheDrops: []v1alpha1.PageCacheDrop{
		{Reason: pagecache.ReasonBeforeLoad, Message: "needs root"},
		{Reason: pagecache.ReasonBeforeDrain, Dropped: true, Nodes: []string{"box"}},
	}})
	if !strings.Contains(out.String(), "page cache NOT dropped "+pagecache.ReasonBeforeLoad+": needs root") ||
		!strings.Contains(out.String(), "page cache dropped "+pagecache.ReasonBeforeDrain+" on box") {
		t.Errorf("summary lines:\n%s", out.String())
	}
}
