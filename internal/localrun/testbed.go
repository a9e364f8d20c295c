package localrun

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/testbed"
)

// probeOptions bound the local probe: the same as a cluster probe's.
var probeOptions = testbed.Options{}

// dataDir is where the local brokers keep their data: what the probe
// measures. Empty for an existing cluster.
func (b *brokers) dataDir() string {
	switch {
	case b.kafka != nil:
		return b.kafka.Dir
	case b.pulsar != nil:
		return b.pulsar.Dir
	}
	return ""
}

// localTopology is what local mode starts: Kafka's brokers, or Pulsar
// standalone's one broker and its bookies; the versions it runs, and the
// Java runtime it runs them on.
func localTopology(b *brokers) *v1alpha1.Topology {
	switch {
	case b.kafka != nil:
		return &v1alpha1.Topology{Brokers: int32(len(b.kafka.Nodes)), Version: b.kafka.Version, Java: b.kafka.Setup.Java.DeepCopy()}
	case b.pulsar != nil:
		return &v1alpha1.Topology{Brokers: 1, Bookies: int32(len(b.pulsar.BookiePorts)), Version: b.pulsar.Version, Java: b.pulsar.Setup.Java.DeepCopy(),
			DelayEnsembleChange: durability.DelayEnsembleChange(b.pulsar.Setup.Config)}
	}
	return nil
}

// probeLocal measures the disk under the brokers' data directory before the
// load (the brokers are up but idle), as a cluster run's probe Jobs do on
// each broker node. For an existing cluster it measures the temporary
// directory and says that the brokers' disks were not measured. A probe
// that fails is recorded, not fatal: the run still says what it stood on.
func probeLocal(b *brokers, say func(string, ...any)) *v1alpha1.Testbed {
	host, _ := os.Hostname()
	dir, name := b.dataDir(), "data"
	tb := &v1alpha1.Testbed{Scope: v1alpha1.TestbedLocalHost, Topology: localTopology(b)}
	if dir == "" {
		dir, name = os.TempDir(), "scratch"
		tb.Note = "existing cluster: the brokers' disks were not measured; the figures are of this machine's temporary directory"
	}
	node := testbed.Host(host)
	node.Roles = []string{"broker", "worker"}
	say("probing the disk under %s (bounded: at most 256 MiB and 2000 write+fdatasync appends)", dir)
	v, err := testbed.Probe(dir, name, probeOptions)
	if err != nil {
		node.Error = err.Error()
		tb.Note = fmt.Sprintf("%s not measured: %v", dir, err)
	} else {
		node.Volumes = []v1alpha1.VolumeProbe{v}
		tb.SlowestFsyncP99Ms = &v.FsyncLatencyMs.P99
	}
	tb.Nodes = []v1alpha1.NodeProbe{node}
	return tb
}

// printTestbed is the testbed's part of the summary table.
func printTestbed(w io.Writer, tb *v1alpha1.Testbed) {
	if tb == nil {
		return
	}
	for _, n := range tb.Nodes {
		fmt.Fprintf(w, "testbed     %s: %d CPUs (%s), %.1f GiB, kernel %s\n", n.Node, n.CPUs, n.CPUModel, float64(n.MemoryBytes)/(1<<30), n.Kernel)
		for _, v := range n.Volumes {
			f := v.FsyncLatencyMs
			fmt.Fprintf(w, "            %s: write %.1f MB/s; write+fdatasync %d B p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, max %.3f ms\n",
				v.Name, v.WriteMBPerSec, f.AppendBytes, f.P50, f.P99, f.P999, f.Max)
		}
	}
	for _, d := range tb.PageCacheDrops {
		if d.Dropped {
			fmt.Fprintf(w, "            page cache dropped %s on %s\n", d.Reason, strings.Join(d.Nodes, ", "))
		} else {
			fmt.Fprintf(w, "            page cache NOT dropped %s: %s\n", d.Reason, d.Message)
		}
	}
	if tb.Note != "" {
		fmt.Fprintf(w, "            note: %s\n", tb.Note)
	}
}

// hostDropper drops this machine's page cache for spec.testbed.dropPageCache:
// the local brokers are processes on this host, so its page cache is
// theirs. Writing /proc/sys/vm/drop_caches needs root. Without it the drop
// is recorded as not done, with why, and the run goes on: local mode is for
// trying things out, and the summary says plainly that the catch-up reads
// may have come from memory.
type hostDropper struct {
	host string
	say  func(string, ...any)
	// euid and drop are the process's effective uid and the drop itself
	// (os.Geteuid and testbed.DropPageCache; tests replace them).
	euid func() int
	drop func() error

	mu  sync.Mutex
	seq int32
}

func newHostDropper(say func(string, ...any)) *hostDropper {
	host, _ := os.Hostname()
	return &hostDropper{host: host, say: say, euid: os.Geteuid, drop: testbed.DropPageCache, seq: -1}
}

// DropPageCache drops the page cache now; the first call is request 0 (the
// drop before the load), as in a cluster. It never fails the run.
func (h *hostDropper) DropPageCache(_ context.Context, reason string) (v1alpha1.PageCacheDrop, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	d := v1alpha1.PageCacheDrop{Seq: h.seq, Reason: reason}
	if uid := h.euid(); uid != 0 {
		d.Message = fmt.Sprintf("local mode runs as uid %d, and dropping the page cache (/proc/sys/vm/drop_caches) needs root: run as root, or set spec.testbed.dropPageCache to false; reads may have come from memory", uid)
	} else if err := h.drop(); err != nil {
		d.Message = err.Error()
	} else {
		d.Dropped, d.Nodes = true, []string{h.host}
	}
	d.At = metav1.Now()
	if d.Dropped {
		h.say("page cache of this machine dropped %s", reason)
	} else {
		h.say("page cache NOT dropped %s: %s", reason, d.Message)
	}
	return d, nil
}
