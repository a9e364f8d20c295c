package localrun

import (
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/internal/brokerres"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

// checkBrokerResources checks the brokers' figures of a local run against
// what is known without them: what the brokers wrote to storage over the
// measured phase is at least every acknowledged byte once per replica
// (minBytesFactor), and at most maxBytesFactor times that (record batch
// headers, indexes, the offsets topic, a journal beside the ledger...).
// The CPU must be positive, and every broker must appear.
func checkBrokerResources(t *testing.T, sum *results.Summary, brokers int, minBytesFactor, maxBytesFactor float64) {
	t.Helper()
	br := sum.BrokerResources
	if br == nil || sum.Results.BrokerResources == nil {
		t.Fatalf("no broker resources in summary.json (notes %q)", sum.Notes)
	}
	if br.Source != brokerres.SourceProc || len(br.Brokers) != brokers || sum.Results.BrokerResources.Brokers != brokers {
		t.Fatalf("broker resources: source %q, %d brokers, want proc and %d", br.Source, len(br.Brokers), brokers)
	}
	var measured *results.PhaseSummary
	for i := range sum.Phases {
		if sum.Phases[i].Phase == stats.PhaseMeasure {
			measured = &sum.Phases[i]
		}
	}
	if measured == nil {
		t.Fatal("no measured phase")
	}
	var written int64
	for _, b := range br.Brokers {
		if b.CPUCores == nil || *b.CPUCores <= 0 || b.DiskWriteBytes == nil || b.GCPauseMs == nil {
			t.Errorf("broker %s: cpu %v, written %v, gc %v: want all measured", b.Name, b.CPUCores, b.DiskWriteBytes, b.GCPauseMs)
			continue
		}
		written += *b.DiskWriteBytes
	}
	size := float64(sum.Workload.MessageSize)
	rf := float64(brokers)
	if sum.Durability != nil && sum.Durability.Kafka != nil {
		rf = float64(sum.Durability.Kafka.ReplicationFactor)
	}
	if p := sum.Durability; p != nil && p.Pulsar != nil {
		rf = float64(p.Pulsar.WriteQuorum)
	}
	want := float64(measured.Acked) * size * rf
	ratio := float64(written) / want
	t.Logf("measured phase: %d acked x %.0f B x %.0f replicas = %.1f MB; brokers wrote %.1f MB (ratio %.2f) in %.1f s; cpu %.2f cores, gc %.1f ms, host %+v",
		measured.Acked, size, rf, want/1e6, float64(written)/1e6, ratio, br.Seconds, *sum.Results.BrokerResources.CPUCores, *sum.Results.BrokerResources.GCPauseMs, br.Host)
	if ratio < minBytesFactor || ratio > maxBytesFactor {
		t.Errorf("brokers wrote %d bytes over the measured phase, %.2f times acknowledged x size x replicas (%.0f); want %.1f..%.1f",
			written, ratio, want, minBytesFactor, maxBytesFactor)
	}
	// Memory: every broker JVM's resident set, more than a bare JVM's and
	// less than the host has.
	for _, b := range br.Brokers {
		if b.MemoryGiB == nil || *b.MemoryGiB < 0.05 || *b.MemoryGiB > 64 {
			t.Errorf("broker %s: memory %v GiB, want its JVM's resident set", b.Name, b.MemoryGiB)
		}
	}
	// Efficiency from the same figures, as the outcome step priced them:
	// the bytes written per byte produced are the ratio above times the
	// copies kept, up to the rates' rounding of the same window; what
	// local mode cannot measure is said, and a projection from one
	// machine is flagged (or refused, the host's CPUs having bounded it).
	c := sum.Cost
	if c == nil {
		t.Fatal("summary.json has no cost")
	}
	if d := c.Efficiency.DiskWritePerByte.Value; d == nil || *d < 0.8*ratio*rf || *d > 1.25*ratio*rf {
		t.Errorf("disk written per byte produced %v (%s), want about %.2f (%.2f x %.0f copies)", d, c.Efficiency.DiskWritePerByte.Formula, ratio*rf, ratio, rf)
	}
	if f := c.Efficiency.NetworkInPerByte; f.Value != nil || !strings.Contains(f.Missing, "not measured by proc") {
		t.Errorf("network in per byte in local mode: %+v", f)
	}
	if p := c.Projection; p != nil && p.Refused == "" && !strings.Contains(strings.Join(p.Flags, " "), "one machine hosted every broker") {
		t.Errorf("a local projection not flagged as one machine's: %+v", p)
	}
	t.Logf("efficiency: %s; cost %+v", c.Efficiency.MBPerSecPerCoreUsed.Formula, c.Costs.TotalPerHour)
	if br.Host == nil || br.Host.LoopbackMBPerSec == nil || *br.Host.LoopbackMBPerSec < measured.PublishMBPerSec {
		t.Errorf("host loopback %+v: want at least the publish rate %.2f MB/s (the workers send every byte over it)", br.Host, measured.PublishMBPerSec)
	}
}
