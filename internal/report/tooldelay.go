package report

import (
	"fmt"

	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

// ToolDelay sets a run's send delay (how late the load generator sent
// against its intended-time schedule) beside its publish latency, so a
// reader knows whose latency the figures are: the broker's (and its
// client's), or partly the tool's.
type ToolDelay struct {
	SendDelayP99Ms, PublishP99Ms float64
	// HostCPUBound and HostCPU: the host's CPUs set the latency
	// (brokerres.Host's verdict); a send delay cannot show that, since a
	// starved broker delays the ack, not the send.
	HostCPUBound bool
	HostCPU      string
}

// toolDelayShare: a send delay p99 up to this share of the publish p99 is
// noise the broker's latency dwarfs; above it the tool's lateness is a
// visible part of the tail (the offered load was burstier than asked for).
const toolDelayShare = 0.1

// ToolDelayOf is the measured phase's send delay and publish p99; false
// for a summary without them (produce-less, hand-made or older runs).
func ToolDelayOf(s *results.Summary) (ToolDelay, bool) {
	m := phase(s, stats.PhaseMeasure)
	if m == nil || m.SendDelayMs == nil {
		return ToolDelay{}, false
	}
	// The headline is the measured phase's too; a phase's own detail wins.
	pub := s.Results.PublishLatencyMs.P99
	if m.PublishLatencyMs != nil {
		pub = m.PublishLatencyMs.P99
	}
	d := ToolDelay{SendDelayP99Ms: m.SendDelayMs.P99, PublishP99Ms: pub}
	if h := hostOf(s); h != nil {
		d.HostCPUBound, d.HostCPU = h.CPUBound, h.CPUVerdict
	}
	return d, true
}

// Share is the send delay p99 as a fraction of the publish p99.
func (d ToolDelay) Share() float64 {
	if d.PublishP99Ms <= 0 {
		return 0
	}
	return d.SendDelayP99Ms / d.PublishP99Ms
}

// Whose says whose latency it is, given the fairness tolerances.
func (d ToolDelay) Whose(f Fairness) string {
	switch {
	case d.HostCPUBound:
		return "the host's: its CPUs were saturated"
	case d.SendDelayP99Ms > f.MaxSendDelayP99Ms:
		return "partly the tool's: it fell behind its schedule"
	case d.Share() > toolDelayShare:
		return "partly the tool's"
	default:
		return "the broker's"
	}
}

// Sentence is the statement under a run's latency table.
func (d ToolDelay) Sentence(f Fairness) string {
	s := fmt.Sprintf("Send delay p99 %s ms against publish p99 %s ms (%s): the latency is %s. Send delay is how late the load generator sent against its schedule; it is in the corrected latency, not in the publish latency.",
		ms(d.SendDelayP99Ms), ms(d.PublishP99Ms), percent(d.Share()), d.Whose(f))
	if d.HostCPU != "" {
		s += " It cannot tell a broker's latency from a starved host's, the host's CPU can: " + d.HostCPU + "."
	}
	return s
}

// toolDelayRows are a comparison's rows for its load generator table, in
// runs' order; nil when no run has a send delay.
func toolDelayRows(runs []Named, f Fairness) [][]string {
	var rows [][]string
	any := false
	for _, n := range runs {
		d, ok := ToolDelayOf(n.Summary)
		if !ok {
			rows = append(rows, []string{n.Name, "–", "–", "–", "–"})
			continue
		}
		any = true
		rows = append(rows, []string{n.Name, ms(d.SendDelayP99Ms), ms(d.PublishP99Ms), percent(d.Share()), d.Whose(f)})
	}
	if !any {
		return nil
	}
	return rows
}

func percent(v float64) string {
	if v < 0.01 {
		return "< 1 %"
	}
	return fmt.Sprintf("%.0f %%", v*100)
}

var loadGeneratorColumns = []string{"", "send delay p99 ms", "publish p99 ms", "share", "the latency is"}
