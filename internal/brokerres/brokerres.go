// Package brokerres measures what the brokers used while a run measured:
// CPU cores, disk write MB/s, network in/out MB/s, GC pause time and (for
// Pulsar) the BookKeeper journal latency, per broker and in total, so that
// every latency in the results has the broker's resources beside it (the
// studies behind streambench, docs/methodology.md, explain every result
// that way: journal disk bandwidth, page-cache thrashing, GC).
//
// Two sources give the same figures: in local mode the broker processes'
// /proc files, their GC logs and /proc/diskstats (LocalSampler); in a
// cluster a Prometheus that scrapes the brokers (Query).
package brokerres

import (
	"fmt"
	"math"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// Sources of the figures (v1alpha1.BrokerResources.Source).
const (
	SourceProc       = "proc"
	SourcePrometheus = "prometheus"
)

// Broker is what one broker (process or pod) used over the window. Nil
// fields were not available from the source.
type Broker struct {
	Name               string   `json:"name"`
	CPUCores           *float64 `json:"cpuCores,omitempty"`
	MemoryGiB          *float64 `json:"memoryGiB,omitempty"`
	DiskWriteMBPerSec  *float64 `json:"diskWriteMBPerSec,omitempty"`
	NetworkInMBPerSec  *float64 `json:"networkInMBPerSec,omitempty"`
	NetworkOutMBPerSec *float64 `json:"networkOutMBPerSec,omitempty"`
	GCPauseMs          *float64 `json:"gcPauseMs,omitempty"`
	GCPauses           *int64   `json:"gcPauses,omitempty"`
	JournalLatencyMs   *float64 `json:"journalLatencyMs,omitempty"`
	// DiskWriteBytes is the bytes behind DiskWriteMBPerSec, kept so the
	// figure can be checked against the messages acknowledged.
	DiskWriteBytes *int64 `json:"diskWriteBytes,omitempty"`
}

// Host is what the whole machine did over the window (local mode): the
// figures the brokers share with everything else on it.
type Host struct {
	// DiskWriteMBPerSec is /proc/diskstats' sectors written of the devices
	// under the brokers' data directories.
	Devices           []string `json:"devices,omitempty"`
	DiskWriteMBPerSec *float64 `json:"diskWriteMBPerSec,omitempty"`
	// LoopbackMBPerSec is /proc/net/dev's bytes over "lo": every byte
	// between the workers and the brokers and between the brokers, but
	// also any other local traffic.
	LoopbackMBPerSec *float64 `json:"loopbackMBPerSec,omitempty"`
	// CPUs is the host's CPU count; CPUBusyCores is how many of them were
	// busy on average over the window (/proc/stat: everything but idle and
	// iowait, by any process); ToolCPUCores is the load generator's share
	// of that (LocalOptions.ToolPids).
	//
	// In a cluster (Node set) these are the busiest of the brokers' nodes,
	// from the kubelets' cAdvisor through Prometheus; ToolCPUCores is then
	// not known (the load generator runs on other nodes).
	Node         string   `json:"node,omitempty"`
	CPUs         int      `json:"cpus,omitempty"`
	CPUBusyCores *float64 `json:"cpuBusyCores,omitempty"`
	ToolCPUCores *float64 `json:"toolCpuCores,omitempty"`
	// CPUBound says the host's CPUs, not the brokers, set the latency:
	// CPUBusyCores was at least CPUBoundShare of CPUs. CPUVerdict says so
	// in a sentence, with whose CPU it was, either way.
	CPUBound   bool   `json:"cpuBound,omitempty"`
	CPUVerdict string `json:"cpuVerdict,omitempty"`
}

// CPUBoundShare is the share of a host's CPUs busy over the measured
// window at and above which its latencies are the host's: threads that
// could run wait for a CPU. By Erlang's C formula, with 2 CPUs at 80 %
// busy a thread that becomes runnable finds both busy 71 % of the time
// and waits on average 1.8 times its own run; with 8 CPUs, 46 % and 0.3
// times. A run on two cores that crosses it measures the scheduler as much
// as the broker.
const CPUBoundShare = 0.8

// cpuWaitNoticeable is the chance of finding every CPU busy from which a
// share below CPUBoundShare is still said to have possibly added to the
// latency: 2 CPUs reach it at 42 % busy (a 0.8-times-in-ten wait is not a
// yes/no matter; the verdict gives the estimate either way).
const cpuWaitNoticeable = 0.25

// erlangC is, for c CPUs a share rho of which is busy (an M/M/c queue),
// the probability that a thread that becomes runnable finds every CPU
// busy, and its mean wait for one in units of its own run. A model, not a
// measurement: it says how much a busy share costs, in the same terms
// for any number of CPUs.
func erlangC(c int, rho float64) (wait, meanWait float64) {
	if c < 1 || rho <= 0 {
		return 0, 0
	}
	if rho >= 1 {
		return 1, math.Inf(1)
	}
	a := float64(c) * rho
	// term is a^k/k!, summed for k < c.
	term, sum := 1.0, 0.0
	for k := 0; k < c; k++ {
		sum += term
		term *= a / float64(k+1)
	}
	top := term / (1 - rho)
	wait = top / (sum + top)
	return wait, wait / (float64(c) * (1 - rho))
}

// JudgeCPU fills CPUBound and CPUVerdict from the CPU figures; brokers is
// the brokers' CPU (cores), nil when not known. The verdict is graded: it
// says how often a runnable thread would find every CPU busy and how long
// it would wait (erlangC), not only which side of CPUBoundShare the share
// fell on — 63 % of 2 cores is "below 80 %", yet a thread then waits for a
// CPU about half the time.
func (h *Host) JudgeCPU(brokers *float64) {
	if h.CPUBusyCores == nil || h.CPUs == 0 {
		return
	}
	busy, n := *h.CPUBusyCores, float64(h.CPUs)
	share := busy / n
	parts := ""
	if brokers != nil {
		other := busy - *brokers
		parts = fmt.Sprintf(": brokers %.2f", *brokers)
		if h.ToolCPUCores != nil {
			parts += fmt.Sprintf(", streambench %.2f", *h.ToolCPUCores)
			other -= *h.ToolCPUCores
		}
		parts += fmt.Sprintf(", everything else %.2f", max(0, other))
	}
	whose := "the host's CPUs"
	if h.Node != "" {
		whose = fmt.Sprintf("the CPUs of node %s (the busiest of the brokers' nodes)", h.Node)
	}
	head := fmt.Sprintf("%s were %.0f %% busy over the measured phase (%.2f of %d cores%s)", whose, share*100, busy, h.CPUs, parts)
	wait, meanWait := erlangC(h.CPUs, share)
	estimate := fmt.Sprintf("a thread that became runnable found every CPU busy %s of the time and waited on average %s its own run (Erlang C)", about(wait*100, " %"), about(meanWait, " times"))
	if share >= 1 {
		estimate = "threads that could run queued for a CPU all the time"
	}
	h.CPUBound = share >= CPUBoundShare
	switch {
	case h.CPUBound:
		h.CPUVerdict = fmt.Sprintf("%s, at or above %.0f %%: %s, so the latencies are the host's as much as the broker's; compare them only with runs on the same host, or give the brokers more cores or less load",
			head, CPUBoundShare*100, estimate)
	case wait >= cpuWaitNoticeable:
		h.CPUVerdict = fmt.Sprintf("%s, below %.0f %% but not idle: %s, so the CPU may have added to the latency; compare with runs on hosts as busy",
			head, CPUBoundShare*100, estimate)
	default:
		h.CPUVerdict = fmt.Sprintf("%s: %s, so the CPU added little to the latency", head, estimate)
	}
}

// about says "about v<unit>" to two figures, or "under 0.01<unit>" (1 % of
// the time, a hundredth of a run: nothing a latency would show).
func about(v float64, unit string) string {
	if unit == " %" {
		if v < 1 {
			return "under 1" + unit
		}
		return fmt.Sprintf("about %.0f%s", v, unit)
	}
	if v < 0.01 {
		return "under 0.01" + unit
	}
	return fmt.Sprintf("about %.2g%s", v, unit)
}

// Report is the brokers' resources over the measured window
// (summary.json's brokerResources).
type Report struct {
	Source  string    `json:"source"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Seconds float64   `json:"seconds"`
	Brokers []Broker  `json:"brokers"`
	// Total sums the brokers (rates and pause times add up; the journal
	// latency is the mean of the brokers that have one).
	Total v1alpha1.BrokerResources `json:"total"`
	Host  *Host                    `json:"host,omitempty"`
	// Notes say what could not be measured and why, and what a figure
	// includes.
	Notes []string `json:"notes,omitempty"`
}

// totals fills r.Total from r.Brokers.
func (r *Report) totals() {
	t := v1alpha1.BrokerResources{Source: r.Source, Seconds: r.Seconds, Brokers: len(r.Brokers)}
	var journal []float64
	for _, b := range r.Brokers {
		t.CPUCores = add(t.CPUCores, b.CPUCores)
		t.MemoryGiB = add(t.MemoryGiB, b.MemoryGiB)
		t.DiskWriteMBPerSec = add(t.DiskWriteMBPerSec, b.DiskWriteMBPerSec)
		t.NetworkInMBPerSec = add(t.NetworkInMBPerSec, b.NetworkInMBPerSec)
		t.NetworkOutMBPerSec = add(t.NetworkOutMBPerSec, b.NetworkOutMBPerSec)
		t.GCPauseMs = add(t.GCPauseMs, b.GCPauseMs)
		if b.JournalLatencyMs != nil {
			journal = append(journal, *b.JournalLatencyMs)
		}
	}
	if len(journal) > 0 {
		var s float64
		for _, j := range journal {
			s += j
		}
		t.JournalLatencyMs = f(s / float64(len(journal)))
	}
	r.Total = t
}

// add sums optional figures: nil stays nil until a figure exists.
func add(sum, v *float64) *float64 {
	if v == nil {
		return sum
	}
	if sum == nil {
		return f(*v)
	}
	return f(*sum + *v)
}

func f(v float64) *float64 { return &v }
