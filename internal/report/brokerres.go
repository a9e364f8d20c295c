package report

import (
	"fmt"

	"github.com/streambench/streambench-operator/internal/brokerres"
)

// brokerResView is the "Broker resources" section: one row per broker and
// the total, every figure as text ("–" when the source had none).
type brokerResView struct {
	Source, Window string
	Rows           [][]string
	Host           []kv
	Notes          []string

	// Shared says the run's nodes share machines (sharedBrokerNodes).
	Shared string
}

// brokerResColumns head the section's table and compare's.
var brokerResColumns = []string{"CPU cores", "memory GiB", "disk write MB/s", "net in MB/s", "net out MB/s", "GC pause ms", "journal ms"}

func brokerResources(r *brokerres.Report) *brokerResView {
	if r == nil {
		return nil
	}
	v := &brokerResView{
		Source: r.Source, Notes: r.Notes,
		Window: fmt.Sprintf("%s – %s (%.1f s)", r.Start.UTC().Format("15:04:05"), r.End.UTC().Format("15:04:05 MST"), r.Seconds),
	}
	for _, b := range r.Brokers {
		v.Rows = append(v.Rows, append([]string{b.Name}, figures(b.CPUCores, b.MemoryGiB, b.DiskWriteMBPerSec, b.NetworkInMBPerSec, b.NetworkOutMBPerSec, b.GCPauseMs, b.JournalLatencyMs)...))
	}
	t := r.Total
	v.Rows = append(v.Rows, append([]string{"total"}, figures(t.CPUCores, t.MemoryGiB, t.DiskWriteMBPerSec, t.NetworkInMBPerSec, t.NetworkOutMBPerSec, t.GCPauseMs, t.JournalLatencyMs)...))
	if h := r.Host; h != nil {
		if h.DiskWriteMBPerSec != nil {
			v.Host = append(v.Host, kv{Key: fmt.Sprintf("disk write MB/s (devices %v, every process)", h.Devices), Value: opt(h.DiskWriteMBPerSec, "%.2f")})
		}
		if h.LoopbackMBPerSec != nil {
			v.Host = append(v.Host, kv{Key: "loopback MB/s (every local process)", Value: opt(h.LoopbackMBPerSec, "%.2f")})
		}
	}
	return v
}

func figures(cpu, mem, disk, in, out, gc, journal *float64) []string {
	return []string{opt(cpu, "%.2f"), opt(mem, "%.2f"), opt(disk, "%.2f"), opt(in, "%.2f"), opt(out, "%.2f"), opt(gc, "%.1f"), opt(journal, "%.3f")}
}

func opt(v *float64, format string) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf(format, *v)
}

// brokerResRows are compare's broker-resources rows, one per run; none
// when no run has broker figures.
func brokerResRows(runs []Named) [][]string {
	any := false
	for _, n := range runs {
		any = any || n.Summary.Results.BrokerResources != nil
	}
	if !any {
		return nil
	}
	var rows [][]string
	for _, n := range runs {
		t := n.Summary.Results.BrokerResources
		if t == nil {
			rows = append(rows, append([]string{n.Name, "not measured"}, figures(nil, nil, nil, nil, nil, nil, nil)...))
			continue
		}
		rows = append(rows, append([]string{n.Name, t.Source}, figures(t.CPUCores, t.MemoryGiB, t.DiskWriteMBPerSec, t.NetworkInMBPerSec, t.NetworkOutMBPerSec, t.GCPauseMs, t.JournalLatencyMs)...))
	}
	return rows
}
