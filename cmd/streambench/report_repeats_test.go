package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/report"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

// repeatInput is one repeat as a coordinator measures it: 1,000 messages,
// publish latency ms more for each later repeat.
func repeatInput(ms int) results.Input {
	start := time.Now().Add(-10 * time.Second)
	rec := stats.NewRecorder("worker-0", stats.PhaseMeasure, start)
	sub := rec.Subscription("sub-0", false)
	for i := 0; i < 1000; i++ {
		sent := start.Add(time.Duration(i) * 10 * time.Millisecond)
		rec.RecordSend(sent, sent, 1024)
		rec.RecordAck(sent, sent, sent.Add(time.Duration(ms+i%5)*time.Millisecond), 1024)
		sub.RecordReceive(sent, sent.Add(4*time.Millisecond), 1024)
	}
	return results.Input{Run: "rep", Namespace: "bench", System: v1alpha1.SystemKafka,
		Workload:  v1alpha1.WorkloadSpec{Topics: 1, PartitionsPerTopic: 1, MessageSize: 1024, ProducerRate: 100},
		Snapshots: []stats.Snapshot{rec.Cut(start.Add(10 * time.Second))}}
}

// A repeated cluster run's ConfigMap becomes local mode's layout: the
// aggregate in the run's directory, each repeat's files and report in
// repeat-<i>/, and the run's report reads them.
func TestWriteConfigMapFilesOfARepeatedRun(t *testing.T) {
	cm, _, err := results.BuildRepeatedConfigMap([]results.Input{repeatInput(2), repeatInput(3), repeatInput(4)})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := writeConfigMapFiles(cm, dir, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"summary.json", "repeat-1/summary.json", "repeat-2/omb-result.json", "repeat-3/histograms.hlog.gz", "repeat-3/" + report.FileName} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "repeat-1.summary.json")); err == nil {
		t.Error("a repeat's key written as a file of the run's directory")
	}
	if _, err := report.RenderDir(dir); err != nil {
		t.Fatalf("the repeated run's report: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, report.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "repeat-2/"+report.FileName) {
		t.Errorf("the run's report does not link repeat 2's")
	}
}
