package report

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/internal/brokerres"
	"github.com/streambench/streambench-operator/internal/results"
)

func TestToolDelayWhose(t *testing.T) {
	for _, c := range []struct {
		name                 string
		delay, pub           float64
		share, whose, phrase string
	}{
		{"on time", 0.2, 5, "4 %", "the broker's", "Send delay p99 0.20 ms against publish p99 5.00 ms (4 %): the latency is the broker's."},
		{"a visible share", 1, 5, "20 %", "partly the tool's", "(20 %): the latency is partly the tool's."},
		{"behind its schedule", 6, 300, "2 %", "partly the tool's: it fell behind its schedule", "(2 %): the latency is partly the tool's: it fell behind"},
		{"no publish latency", 0.1, 0, "< 1 %", "the broker's", "(< 1 %)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := ToolDelay{SendDelayP99Ms: c.delay, PublishP99Ms: c.pub}
			if got := percent(d.Share()); got != c.share {
				t.Errorf("share %q, want %q", got, c.share)
			}
			if got := d.Whose(DefaultFairness); got != c.whose {
				t.Errorf("whose %q, want %q", got, c.whose)
			}
			if got := d.Sentence(DefaultFairness); !strings.Contains(got, c.phrase) {
				t.Errorf("sentence %q lacks %q", got, c.phrase)
			}
		})
	}
}

// TestCompareStatesSendDelay: compare's text and HTML set each run's send
// delay beside its publish p99; a run without one shows dashes.
func TestCompareStatesSendDelay(t *testing.T) {
	runs := fairTwins()
	runs[1].Summary.Phases[0].SendDelayMs = &results.LatencyDetail{P99: 2}
	runs = append(runs, Named{Name: "old", Summary: summary("old", "kafka", 2, runs[0].Summary.Results.PublishLatencyMs, 4)})
	tb, err := Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	text := tb.Text()
	for _, want := range []string{"Load generator (measured phase)", "send delay p99 ms", "0.20", "4 %", "the broker's", "2.00", "40 %", "partly the tool's"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if got := strings.Join(tb.LoadGenerator[2], " "); got != "old – – – –" {
		t.Errorf("a run without a send delay: %q, want dashes", got)
	}
	var html bytes.Buffer
	if err := RenderCompare(&html, runs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h2>Load generator</h2>", "<td>partly the tool&#39;s</td>", "<td>the broker&#39;s</td>"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

// TestReportStatesSendDelay: one run's report says whose its latency is
// under the latency table, and says nothing without a send delay.
func TestReportStatesSendDelay(t *testing.T) {
	s := fairTwins()[0].Summary
	var buf bytes.Buffer
	if err := Render(&buf, s, nil); err != nil {
		t.Fatal(err)
	}
	if want := "Send delay p99 0.20 ms against publish p99 5.00 ms (4 %): the latency is the broker&#39;s."; !strings.Contains(buf.String(), want) {
		t.Errorf("report lacks %q", want)
	}
	s.Phases[0].SendDelayMs = nil
	buf.Reset()
	if err := Render(&buf, s, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "Send delay p99") {
		t.Error("a run without a send delay states one")
	}
}

// TestHostCPUBoundIsNamed: a run whose host's CPUs were saturated is the
// host's latency in its report (a warning and the sentence under the
// latency table), in compare's load generator table and in a flag; a run
// below the line says the CPU did not set it, with no flag.
func TestHostCPUBoundIsNamed(t *testing.T) {
	runs := fairTwins()
	bound := &brokerres.Host{CPUs: 2}
	bound.CPUBusyCores, bound.ToolCPUCores = ptr.To[float64](1.9), ptr.To[float64](0.4)
	brokers := 1.4
	bound.JudgeCPU(&brokers)
	quiet := &brokerres.Host{CPUs: 2}
	quiet.CPUBusyCores = ptr.To[float64](0.5)
	quiet.JudgeCPU(&brokers)
	runs[0].Summary.BrokerResources = &brokerres.Report{Host: bound}
	runs[1].Summary.BrokerResources = &brokerres.Report{Host: quiet}

	flags := Flags(runs, DefaultFairness)
	if len(flags) != 1 || flags[0].Kind != FlagHostCPU || flags[0].Runs[0] != "kafka" || !strings.Contains(flags[0].Message, "95 % busy") {
		t.Fatalf("flags %v: want one host CPU flag on kafka", flags)
	}
	tb, err := Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	if got := tb.LoadGenerator[0][4]; got != "the host's: its CPUs were saturated" {
		t.Errorf("kafka's load generator row says %q", got)
	}
	if got := tb.LoadGenerator[1][4]; got != "the broker's" {
		t.Errorf("pulsar's load generator row says %q", got)
	}
	var buf bytes.Buffer
	if err := Render(&buf, runs[0].Summary, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Host CPU-bound: the host&#39;s CPUs were 95 % busy", "the latency is the host&#39;s: its CPUs were saturated", "brokers 1.40, streambench 0.40, everything else 0.10"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(buf.String(), "How the brokers ran") {
		t.Error("a run without a broker setup has a section for it")
	}
	buf.Reset()
	runs[1].Summary.Brokers = &results.BrokerSetup{Where: "local JVMs, 3 Kafka nodes", JVM: []string{"-Xmx512m", "-XX:+UseSerialGC"}, Config: map[string]string{"num.io.threads": "4"}}
	if err := Render(&buf, runs[1].Summary, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"How the brokers ran", "local JVMs, 3 Kafka nodes", "-Xmx512m -XX:&#43;UseSerialGC", "num.io.threads"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if s := buf.String(); strings.Contains(s, "Host CPU-bound") || !strings.Contains(s, "so the CPU added little to the latency") {
		t.Error("the quiet run's report must not warn, and must say the CPU added little to the latency")
	}
}
