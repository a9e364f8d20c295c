package experiment

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/localbrokers"
)

// TestSyncOnTheAckPath is the sync-delay experiment of docs/methodology.md on
// real brokers (3 Kafka KRaft nodes; Pulsar standalone with 3 bookies, once
// per bookie journal configuration), through the project's coordinator and
// worker: every level that promises a local sync before the ack must answer
// no faster than the delay injected into the brokers' syncs, every other
// level far faster. It also keeps the evidence table of internal/durability
// honest: the versions it ran must be the ones reported as verified.
// About 3 minutes on 2 cores.
func TestSyncOnTheAckPath(t *testing.T) {
	const delay = 30 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	start := time.Now()
	rs, err := Run(ctx, Options{Delay: delay, Dir: t.TempDir(), Log: t.Logf})
	t.Logf("%d cells in %s; load %s\n%s", len(rs), time.Since(start).Round(time.Second), uptime(), Table(rs, delay))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != len(Cells()) {
		t.Fatalf("%d results for %d cells", len(rs), len(Cells()))
	}
	for _, r := range rs {
		t.Run(r.Cell.Name(), func(t *testing.T) {
			if err := r.Check(delay); err != nil {
				t.Error(err)
			}
			if r.Acked < 400 {
				t.Errorf("only %d messages acknowledged in the measured phase; the p50 of so few says little", r.Acked)
			}
		})
	}
	for sys, version := range map[v1alpha1.System]string{
		v1alpha1.SystemKafka:  localbrokers.DefaultKafkaVersion,
		v1alpha1.SystemPulsar: localbrokers.DefaultPulsarVersion,
	} {
		for _, r := range rs {
			if r.Cell.System == sys && r.Version != version {
				t.Errorf("%s ran on %s %s, want the local default %s", r.Cell.Name(), sys, r.Version, version)
			}
		}
		if !durability.Verified(sys, version) {
			t.Errorf("the experiment passed on %s %s, but internal/durability does not list it (%v); add it to experimentVersions so runs on it are reported as verified",
				sys, version, durability.ExperimentVersions(sys))
		}
	}
}

// The cells and their grouping into broker starts are pure; this checks the
// matrix covers every level of both systems and the journal bypass, and that
// Pulsar needs one start per bookie configuration only.
func TestCellsAndGroups(t *testing.T) {
	var names []string
	for _, c := range Cells() {
		names = append(names, c.Name())
	}
	want := []string{"kafka-L1", "kafka-L2", "kafka-L3", "kafka-L4", "pulsar-L1", "pulsar-L2", "pulsar-L3", "pulsar-L4", "pulsar-L2-bypass", "pulsar-L4-bypass"}
	if !slices.Equal(names, want) {
		t.Errorf("cells %v, want %v", names, want)
	}
	gs, err := groups(Cells())
	if err != nil {
		t.Fatal(err)
	}
	var starts []string
	for _, g := range gs {
		var cs []string
		for _, c := range g.cells {
			cs = append(cs, c.Name())
		}
		starts = append(starts, strings.Join(cs, "+"))
	}
	wantStarts := []string{"kafka-L1+kafka-L2+kafka-L3+kafka-L4", "pulsar-L1+pulsar-L3", "pulsar-L2+pulsar-L4", "pulsar-L2-bypass+pulsar-L4-bypass"}
	if !slices.Equal(starts, wantStarts) {
		t.Errorf("broker starts %v, want %v", starts, wantStarts)
	}
}

func TestCheck(t *testing.T) {
	const d = 30 * time.Millisecond
	syncs := map[string]int{"fsync": 10}
	l1 := Cell{System: v1alpha1.SystemKafka, Level: 1}
	l2 := Cell{System: v1alpha1.SystemKafka, Level: 2}
	cases := []struct {
		name string
		r    Result
		ok   bool
	}{
		{"sync level at the delay", Result{Cell: l1, P50: d, Syncs: syncs}, true},
		{"sync level below the delay", Result{Cell: l1, P50: d - time.Millisecond, Syncs: syncs}, false},
		{"sync level without any sync", Result{Cell: l1, P50: time.Second}, false},
		{"async level far below", Result{Cell: l2, P50: 2 * time.Millisecond, Syncs: syncs}, true},
		{"async level at half the delay", Result{Cell: l2, P50: d / 2, Syncs: syncs}, false},
	}
	for _, tc := range cases {
		if err := tc.r.Check(d); (err == nil) != tc.ok {
			t.Errorf("%s: Check = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func uptime() string {
	out, err := exec.Command("uptime").Output()
	if err != nil {
		return err.Error()
	}
	return strings.TrimSpace(string(out))
}
