package localrun

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/results"
)

// TestRunKafkaPause pauses broker-1 (process kafka-2) of the three-broker
// sample for 4 s, 3 s into the short workload's 15 s measured phase, and
// checks the record the run leaves: the process and pid hit, injected and
// cleared about 4 s apart, in summary.json.
func TestRunKafkaPause(t *testing.T) {
	run, err := Load("../../config/samples/run-ack2-async.yaml", "testdata/short-latency.yaml")
	if err != nil {
		t.Fatal(err)
	}
	run.Spec.Faults = []v1alpha1.Fault{{Action: v1alpha1.FaultPause, Target: "broker-1",
		At: metav1.Duration{Duration: 3 * time.Second}, Duration: &metav1.Duration{Duration: 4 * time.Second}}}
	lr := startRun(t, Options{Run: run}).wait()
	if lr.err != nil {
		t.Fatalf("run: %v", lr.err)
	}
	// Three brokers and, for the faults, the controller of its own.
	checkStopped(t, lr.out, 4)
	fs := lr.out.Faults
	if len(fs) != 1 {
		t.Fatalf("faults %+v, want one", fs)
	}
	f := fs[0]
	if want := fmt.Sprintf("process kafka-2 (pid %d)", lr.out.BrokerPids[1]); f.Resolved != want || !f.Injected || f.Message != "" {
		t.Errorf("fault %+v: want %s injected, without a message", f, want)
	}
	if f.InjectedAt == nil || f.ClearedAt == nil {
		t.Fatalf("fault %+v: want injectedAt and clearedAt", f)
	}
	// metav1.Time keeps seconds.
	if d := f.ClearedAt.Sub(f.InjectedAt.Time); d < 3*time.Second || d > 5*time.Second {
		t.Errorf("paused for %s, want about 4 s", d)
	}
	if e := lr.stderr.String(); !strings.Contains(e, "fault 0: Pause broker-1: SIGSTOP to kafka-2") || !strings.Contains(e, "SIGCONT to kafka-2") {
		t.Errorf("stderr does not say what was injected and cleared")
	}
	raw, err := os.ReadFile(filepath.Join(lr.out.Dir, results.KeySummary))
	if err != nil {
		t.Fatal(err)
	}
	var sum results.Summary
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Faults) != 1 || sum.Faults[0].Resolved != f.Resolved || !sum.Faults[0].Injected || sum.Faults[0].ClearedAt == nil {
		t.Errorf("summary.json faults %+v, want the run's record %+v", sum.Faults, f)
	}
	// The impact, from the measured phase's series (TestWithImpact has
	// the figures): placed where the pause came, at the workload's rate.
	if len(sum.Faults) == 1 {
		im := sum.Faults[0].Impact
		switch {
		case im == nil:
			t.Error("summary.json's fault has no impact")
		case im.InjectedSeconds < 2 || im.InjectedSeconds > 5 || im.ClearedSeconds == nil || *im.ClearedSeconds-im.InjectedSeconds < 3:
			t.Errorf("impact placed at %g..%v s of the measured phase, want about 3..7", im.InjectedSeconds, im.ClearedSeconds)
		case im.TargetRateMsgPerSec != 1000 || im.IntervalSeconds <= 0:
			t.Errorf("impact %+v: want the workload's 1000 msg/s and the intervals' length", im)
		}
	}
}
