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
