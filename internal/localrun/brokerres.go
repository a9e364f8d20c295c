package localrun

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/streambench/streambench-operator/internal/brokerres"
	"github.com/streambench/streambench-operator/internal/coordinator"
)

// brokerProcesses are the started broker JVMs to watch (none for an
// existing cluster, whose brokers are not on this machine's /proc).
func (b *brokers) brokerProcesses() (ps []brokerres.Process, notes []string) {
	if b == nil {
		return nil, nil
	}
	if k := b.kafka; k != nil {
		for _, n := range k.Nodes {
			if n.Process == nil {
				continue
			}
			dir := filepath.Dir(n.Process.LogFile)
			ps = append(ps, brokerres.Process{Name: n.Process.Name, Pid: n.Process.Pid, GCLog: n.Process.GCLog, DataDir: dir})
		}
		if k.Controller == nil {
			notes = append(notes, "local Kafka: node 1 is a combined KRaft controller and broker, so its figures include the controller's work")
		} else {
			notes = append(notes, "local Kafka: the KRaft controller ran as a JVM of its own (kafka-controller, for spec.faults) and is not among these figures")
		}
	}
	if p := b.pulsar; p != nil && p.Process != nil {
		ps = append(ps, brokerres.Process{Name: p.Process.Name, Pid: p.Process.Pid, GCLog: p.Process.GCLog, DataDir: p.Dir})
		notes = append(notes, "local Pulsar: one standalone JVM holds the broker, every bookie and the metadata store, so its figures are theirs together and cannot be split per bookie")
	}
	return ps, notes
}

// startBrokerSampler starts watching the started brokers; nil when there
// are none (an existing cluster).
func startBrokerSampler(b *brokers) *brokerres.LocalSampler {
	ps, notes := b.brokerProcesses()
	if len(ps) == 0 {
		return nil
	}
	// The workers and the coordinator run in this process.
	return brokerres.StartLocal(brokerres.LocalOptions{Processes: ps, Notes: notes, ToolPids: []int{os.Getpid()}})
}

// brokerResources stops the sampler and reads the brokers' resources over
// the run's measured phase. A failure is a note in the results, not a
// failed run: the latencies stand without the broker figures.
func brokerResources(s *brokerres.LocalSampler, res *coordinator.Result) (*brokerres.Report, string) {
	if s == nil {
		return nil, "broker resources: not measured; the brokers are an existing cluster, not processes of this machine (spec.monitoring.prometheusURL is read in a cluster only)"
	}
	s.Stop()
	start, end, ok := res.MeasuredWindow()
	if !ok {
		return nil, "broker resources: not measured; the run has no measured phase"
	}
	r, err := s.Window(start, end)
	if err != nil {
		return nil, fmt.Sprintf("broker resources: %v", err)
	}
	return r, ""
}
