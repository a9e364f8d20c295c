package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/version"
)

// TestMain makes the test binary the streambench binary when
// STREAMBENCH_MAIN_ARGS is set (a JSON list of arguments), so a test can
// check what a user's shell sees: main's exit code and stderr.
func TestMain(m *testing.M) {
	if raw := os.Getenv("STREAMBENCH_MAIN_ARGS"); raw != "" {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			panic(err)
		}
		os.Args = append([]string{"streambench"}, args...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// streambenchExit runs the streambench main in a child process and returns
// its exit code and combined output.
func streambenchExit(t *testing.T, args ...string) (int, string) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "STREAMBENCH_MAIN_ARGS="+string(raw))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &exit):
		return exit.ExitCode(), string(out)
	}
	t.Fatalf("running streambench %v: %v", args, err)
	return 0, ""
}

// withTestbed copies a recorded run's results and gives it a testbed of
// one broker node whose slowest write+fdatasync p99 is p99 ms.
func withTestbed(t *testing.T, src string, p99 float64) string {
	t.Helper()
	dir := reportCopyDir(t, src)
	path := filepath.Join(dir, results.KeySummary)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	sum["testbed"] = v1alpha1.Testbed{
		Scope: v1alpha1.TestbedBrokerNodes, Topology: &v1alpha1.Topology{Brokers: 3, Version: "4.0.0"},
		SlowestFsyncP99Ms: &p99,
		Nodes: []v1alpha1.NodeProbe{{Node: "node-a", Roles: []string{"broker"}, Volumes: []v1alpha1.VolumeProbe{{
			Name: "data", WriteMBPerSec: 800, WriteBytes: 256 << 20,
			FsyncLatencyMs: v1alpha1.FsyncLatency{Count: 2000, AppendBytes: 4096, P50: p99 / 4, P99: p99, P999: p99 * 2, Max: p99 * 3},
		}}}},
	}
	if raw, err = json.Marshal(sum); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCompareStrictExitCode: --strict makes the binary exit non-zero when a
// pair is flagged (one run's disks made 2.5 times as slow), and zero when the
// same runs on like disks are not; without --strict a flag is a warning.
func TestCompareStrictExitCode(t *testing.T) {
	src := filepath.Join(recordedResults, "kafka-ack-1")
	// The recorded run's load generator fell behind (send delay p99 about
	// 1.35 s), a flag of its own; the bound is raised so the testbed decides.
	lenient := "--max-send-delay-ms=5000"
	fast, alike, slow := withTestbed(t, src, 2.0), withTestbed(t, src, 2.2), withTestbed(t, src, 5.0)

	code, out := streambenchExit(t, "compare", fast, alike, "--strict", "--html", "", lenient)
	if code != 0 {
		t.Fatalf("like testbeds with --strict: exit %d, want 0:\n%s", code, out)
	}

	code, out = streambenchExit(t, "compare", fast, slow, "--strict", "--html", "", lenient)
	if code == 0 {
		t.Fatalf("a slower testbed with --strict: exit 0, want non-zero:\n%s", out)
	}
	for _, want := range []string{"[testbed]", "the slowest write+fdatasync p50 is 0.500 ms vs 1.250 ms", "--strict: 1 unfair comparison flags"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	code, out = streambenchExit(t, "compare", fast, slow, "--html", "", lenient)
	if code != 0 || !strings.Contains(out, "[testbed]") {
		t.Errorf("without --strict: exit %d, want 0 with the flag shown:\n%s", code, out)
	}
}

// withMachines sets the testbed.machines of the summary.json in dir, as
// the operator records it (internal/machines).
func withMachines(t *testing.T, dir string, m *v1alpha1.TestbedMachines) {
	t.Helper()
	path := filepath.Join(dir, results.KeySummary)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	sum["testbed"].(map[string]any)["machines"] = m
	if raw, err = json.Marshal(sum); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCompareSharedMachine: a run whose nodes are one machine is said to
// be, from its summary.json, and flagged against a run on separate
// machines (--strict fails on it); two runs on one machine each are like
// with like.
func TestCompareSharedMachine(t *testing.T) {
	src := filepath.Join(recordedResults, "kafka-ack-1")
	lenient := "--max-send-delay-ms=5000"
	one := &v1alpha1.TestbedMachines{Nodes: 3, Machines: 1,
		Hosts: []v1alpha1.TestbedHost{{Nodes: []string{"streambench-local", "streambench-local-2", "streambench-local-3"}, By: v1alpha1.HostBootID, ID: "1a2b3c4d"}},
		Note:  "3 nodes on 1 machine (streambench-local, streambench-local-2, streambench-local-3 share boot id 1a2b3c4d): their CPU, memory and disk figures are one machine's, measured 3 times, not 3 machines'"}
	apart := &v1alpha1.TestbedMachines{Nodes: 3, Machines: 3, Note: "3 nodes on 3 machines: no two share a boot or machine id"}
	ci, ci2, cloud := withTestbed(t, src, 2.0), withTestbed(t, src, 2.0), withTestbed(t, src, 2.0)
	withMachines(t, ci, one)
	withMachines(t, ci2, one)
	withMachines(t, cloud, apart)

	code, out := streambenchExit(t, "compare", ci, ci2, "--strict", "--html", "", lenient)
	if code != 0 || strings.Contains(out, "[machines]") {
		t.Fatalf("two runs on one machine each with --strict: exit %d, want 0 and no flag:\n%s", code, out)
	}
	for _, want := range []string{"3 nodes on 1 machine (streambench-local, streambench-local-2, streambench-local-3 share boot id 1a2b3c4d): its per-node figures", "machines"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out = streambenchExit(t, "compare", ci, cloud, "--strict", "--html", "", lenient)
	if code == 0 {
		t.Fatalf("one machine against three with --strict: exit 0, want non-zero:\n%s", out)
	}
	for _, want := range []string{"[machines]", "3 nodes on 1 machine vs 3 nodes on 3 machines", "3 nodes on 3 machines"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestVersion: `streambench version` prints one line with the version and
// the commit (ldflags or the build info; "unknown" when neither recorded
// one, as in this test binary), and --json the same as an object.
func TestVersion(t *testing.T) {
	code, out := streambenchExit(t, "version")
	if code != 0 || !regexp.MustCompile(`^streambench \S+ \(commit \S+\)( with uncommitted changes)?\n$`).MatchString(out) {
		t.Fatalf("streambench version exited %d: %q", code, out)
	}
	code, out = streambenchExit(t, "version", "--json")
	var info version.Info
	if err := json.Unmarshal([]byte(out), &info); code != 0 || err != nil || info.Version == "" || info.Commit == "" {
		t.Fatalf("streambench version --json exited %d: %q (%v)", code, out, err)
	}
}

// repeatedDir writes the summary.json of a run of five repeats whose publish
// p99 is p99 ms times the same spread, and returns its directory.
func repeatedDir(t *testing.T, name string, p99 float64) string {
	t.Helper()
	var reps []*results.Summary
	var dirs []string
	for i, f := range []float64{1, 1.08, 0.95, 1.03, 0.98} {
		reps = append(reps, &results.Summary{Run: name, System: v1alpha1.SystemKafka, Results: v1alpha1.ResultsSummary{
			PublishRateMsgPerSec: 1000, PublishMBPerSec: 1, ConsumeMBPerSec: 1,
			PublishLatencyMs: v1alpha1.LatencySummary{P50: 2 * f, P99: p99 * f, P999: 2 * p99 * f},
			Sent:             1000, Acked: 1000, Received: 1000,
		}})
		dirs = append(dirs, fmt.Sprintf("repeat-%d", i+1))
	}
	agg, err := results.Aggregate(reps, dirs)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), name)
	raw, err := json.Marshal(agg)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, results.KeySummary), raw, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCompareFailOnDifference: --fail-on-difference exits non-zero when a
// repeated run differs from the first beyond their spread, zero when it does
// not, and non-zero when the runs were not repeated (it cannot tell).
func TestCompareFailOnDifference(t *testing.T) {
	a, faster, same := repeatedDir(t, "a", 10), repeatedDir(t, "faster", 7), repeatedDir(t, "same", 10)

	code, out := streambenchExit(t, "compare", a, same, "--fail-on-difference", "--html", "")
	if code != 0 || !strings.Contains(out, "no difference beyond the runs' own spread") {
		t.Fatalf("the same configuration: exit %d, want 0 with no difference:\n%s", code, out)
	}
	code, out = streambenchExit(t, "compare", a, faster, "--fail-on-difference", "--html", "")
	if code == 0 || !strings.Contains(out, "publish p99 (ms): B's is 30 % lower, better") || !strings.Contains(out, "figure(s) differ beyond the runs' own spread") {
		t.Fatalf("p99 30 %% lower: exit %d, want non-zero naming the figure:\n%s", code, out)
	}
	if code, out = streambenchExit(t, "compare", a, faster, "--html", ""); code != 0 {
		t.Errorf("without --fail-on-difference: exit %d, want 0:\n%s", code, out)
	}
	code, out = streambenchExit(t, "compare", filepath.Join(recordedResults, "kafka-ack-1"), filepath.Join(recordedResults, "pulsar-ack-1"), "--fail-on-difference", "--html", "")
	if code == 0 || !strings.Contains(out, "cannot tell") {
		t.Errorf("single runs: exit %d, want non-zero saying it cannot tell:\n%s", code, out)
	}
}

// TestCompareFaultSchedules: two runs whose fault schedules differ are
// flagged [faults] (--strict fails on it), and the Faults table puts
// their faults side by side; the same schedule is no flag.
func TestCompareFaultSchedules(t *testing.T) {
	src := filepath.Join(recordedResults, "kafka-ack-1")
	lenient := "--max-send-delay-ms=5000"
	withFaults := func(faults ...v1alpha1.FaultStatus) string {
		dir := withTestbed(t, src, 2.0)
		path := filepath.Join(dir, results.KeySummary)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var sum map[string]any
		if err := json.Unmarshal(raw, &sum); err != nil {
			t.Fatal(err)
		}
		sum["faults"] = faults
		if raw, err = json.Marshal(sum); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	kill := v1alpha1.FaultStatus{Index: 0, Action: v1alpha1.FaultKill, Target: "broker-1", Message: "process kafka-2 not running"}
	a, b, none := withFaults(kill), withFaults(kill), withFaults()

	code, out := streambenchExit(t, "compare", a, b, "--strict", "--html", "", lenient)
	if code != 0 || strings.Contains(out, "[faults]") {
		t.Fatalf("the same fault, missed alike in both, --strict: exit %d, want 0 and no flag:\n%s", code, out)
	}
	code, out = streambenchExit(t, "compare", a, none, "--strict", "--html", "", lenient)
	if code == 0 {
		t.Fatalf("faults against none with --strict: exit 0, want non-zero:\n%s", out)
	}
	for _, want := range []string{"[faults]", "(#0 Kill broker-1 vs no faults)", "Faults (times in the measured phase; lost is the fault's own, by the interval its messages were sent in)", "not injected"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
