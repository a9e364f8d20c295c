package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/brokerres"
)

func fp(v float64) *float64 { return &v }

// brokerResReport is two brokers' figures from /proc, network not
// attributable.
func brokerResReport() *brokerres.Report {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := &brokerres.Report{Source: brokerres.SourceProc, Start: start, End: start.Add(15 * time.Second), Seconds: 15,
		Brokers: []brokerres.Broker{
			{Name: "kafka-1", CPUCores: fp(0.5), MemoryGiB: fp(1.25), DiskWriteMBPerSec: fp(3.25), GCPauseMs: fp(12)},
			{Name: "kafka-2", CPUCores: fp(0.25), DiskWriteMBPerSec: fp(3), GCPauseMs: fp(3.5)},
		},
		Host:  &brokerres.Host{Devices: []string{"vda"}, LoopbackMBPerSec: fp(9.5)},
		Notes: []string{"local mode: network in/out per broker is not measured"},
	}
	r.Total = v1alpha1.BrokerResources{Source: r.Source, Seconds: 15, Brokers: 2, CPUCores: fp(0.75), MemoryGiB: fp(1.25), DiskWriteMBPerSec: fp(6.25), GCPauseMs: fp(15.5)}
	return r
}

// The report has a Broker resources section: a row per broker and the
// total, "–" for what the source could not measure, and the host figures.
func TestRenderBrokerResources(t *testing.T) {
	s := studyRuns()[2].Summary
	s.BrokerResources = brokerResReport()
	var buf bytes.Buffer
	if err := Render(&buf, s, nil); err != nil {
		t.Fatal(err)
	}
	p := parsePage(t, buf.Bytes())
	for name, want := range map[string]string{
		"kafka-1": "kafka-1|0.50|1.25|3.25|–|–|12.0|–",
		"kafka-2": "kafka-2|0.25|–|3.00|–|–|3.5|–",
		"total":   "total|0.75|1.25|6.25|–|–|15.5|–",
	} {
		if got := strings.Join(p.row(t, "Broker resources", name), "|"); got != want {
			t.Errorf("broker resources row %q, want %q", got, want)
		}
	}
	for _, want := range []string{"03:04:05 – 03:04:20 UTC (15.0 s)", "loopback MB/s (every local process)", "9.50", "network in/out per broker is not measured"} {
		if !strings.Contains(p.text, want) {
			t.Errorf("broker resources section lacks %q", want)
		}
	}
	// A run without broker figures has no such section.
	buf.Reset()
	if err := Render(&buf, studyRuns()[1].Summary, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "Broker resources") {
		t.Errorf("a run without broker figures shows a Broker resources section")
	}
}

// compare puts each run's broker totals beside the latencies, and says
// which run has none.
func TestCompareBrokerResources(t *testing.T) {
	runs := studyRuns()
	rep := brokerResReport()
	runs[2].Summary.BrokerResources = rep
	t2 := rep.Total
	runs[2].Summary.Results.BrokerResources = &t2
	tb, err := Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.BrokerResources) != 4 {
		t.Fatalf("%d broker resources rows, want one per run", len(tb.BrokerResources))
	}
	if got := strings.Join(tb.BrokerResources[2], "|"); got != "kafka-ack-1|proc|0.75|1.25|6.25|–|–|15.5|–" {
		t.Errorf("kafka-ack-1 row %q", got)
	}
	if got := tb.BrokerResources[0][1]; got != "not measured" {
		t.Errorf("a run without figures says %q, want not measured", got)
	}
	text := tb.Text()
	if !strings.Contains(text, "Broker resources (measured phase, all brokers)") || !strings.Contains(text, "disk write MB/s") {
		t.Errorf("compare text lacks the broker resources grid:\n%s", text)
	}
	var buf bytes.Buffer
	if err := RenderCompare(&buf, runs); err != nil {
		t.Fatal(err)
	}
	p := parsePage(t, buf.Bytes())
	if got := strings.Join(p.row(t, "Broker resources", "kafka-ack-1"), "|"); got != "kafka-ack-1|proc|0.75|1.25|6.25|–|–|15.5|–" {
		t.Errorf("compare page row %q", got)
	}
	// Without any figures, no table.
	tb, _ = Compare(studyRuns())
	if tb.BrokerResources != nil {
		t.Errorf("broker resources rows without any figures: %v", tb.BrokerResources)
	}
}
