package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// staticNote is what the operator records when the brokers' class has
// static volumes the probe must not take (internal/provision/probe).
const staticNote = "storage not probed: class local-nvme has static volumes (kubernetes.io/no-provisioner), each one a bookie's disk; the probe would take one"

// TestCompareUnmeasuredTestbed: a run whose testbed has no disk figure
// (the probe off, or a static class it must not claim) is not a disk to
// compare: compare raises no testbed flag on it, says "not measured" in
// its Testbed row, and quotes the note as a warning; its topology is
// still compared.
func TestCompareUnmeasuredTestbed(t *testing.T) {
	runs := fairTwins()
	p := runs[1].Summary.Testbed
	p.Nodes, p.SlowestFsyncP99Ms, p.Note = nil, nil, staticNote

	if f := Flags(runs, DefaultFairness); len(f) != 0 {
		t.Errorf("flags %v, want none: an unmeasured disk is no difference", f)
	}
	tbl, err := Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	if got := tbl.Testbed[1]; got[0] != "pulsar" || got[1] != "not measured" || got[4] != "3 brokers, 3 bookies" {
		t.Errorf("pulsar's testbed row %q", got)
	}
	if got := tbl.Testbed[0]; got[1] == "not measured" {
		t.Errorf("kafka's measured testbed row %q says not measured", got)
	}
	want := "pulsar: testbed not measured (" + staticNote + "): its disks are not compared"
	if !slices.Contains(tbl.Warnings, want) {
		t.Errorf("warnings %q lack %q", tbl.Warnings, want)
	}
	var text bytes.Buffer
	if err := tbl.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"not measured", "warning: " + want} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("compare text lacks %q:\n%s", w, text.String())
		}
	}

	// A topology difference is still seen without disk figures.
	p.Topology.Bookies = 2
	if f := Flags(runs, DefaultFairness); len(f) != 1 || f[0].Kind != FlagTopology {
		t.Errorf("flags %v, want the topology's only", f)
	}
}

// TestReportUnmeasuredTestbed: one run's report says its testbed was not
// measured and why (the note), with no empty node table.
func TestReportUnmeasuredTestbed(t *testing.T) {
	s := fairTwins()[1].Summary
	s.Testbed.Nodes, s.Testbed.Note = nil, staticNote
	var buf bytes.Buffer
	if err := Render(&buf, s, nil); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{`<section id="testbed"><h2>Testbed</h2>`, "class local-nvme has static volumes", "Not measured: no node was probed (see the note above).", "Topology: 3 brokers, 3 bookies"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(html, "<th>fsync p50</th>") || strings.Contains(html, `<th class="n">fsync p50</th>`) {
		t.Error("an unmeasured testbed has an empty node table")
	}
	if s.Testbed.Topology.Brokers != 3 || s.Testbed.Scope != v1alpha1.TestbedBrokerNodes {
		t.Fatalf("fixture changed: %+v", s.Testbed)
	}
}
