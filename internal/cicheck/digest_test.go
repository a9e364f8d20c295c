package cicheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFailureDigest runs hack/failure-digest.sh, which .ci/run prints at
// the end of a failed run, on a log of the lanes' interleaved lines: each
// kind of failure must be in it with what explains it, and a stage that
// failed before any test ran with its lane's last lines, the only ones
// that say why (CI's report stage once failed in 2 s and the digest was
// empty); a long spec message keeps its end, where a failed run's error
// is (CI's digest once cut it after 8 lines).
func TestFailureDigest(t *testing.T) {
	log := strings.Join([]string{
		"[tests] ==> report test",
		"[images] ==> strimzi images build",
		"[tests] go: listing the packages failed: why",
		"[cluster] \x1b[1mSTEP:\x1b[0m deploying",
		"[tests] no Go files in /src",
		"[tests] <== report test                     2 s  FAILED (exit 1)  (CPU 0 s)",
		"[tests] ==> unit and envtest suites",
		"[tests] --- FAIL: TestX (0.00s)",
		"[tests]     x_test.go:12: got 1, want 2",
		"[tests] FAIL\tgithub.com/a/b\t0.1s",
		"[tests] <== unit and envtest suites         9 s  FAILED (exit 1)  (CPU 5 s)",
		"[cluster] \x1b[38;5;9m• [FAILED] [60.2 seconds]\x1b[0m",
		"[cluster] a spec title",
		"[cluster]   [FAILED] Timed out after 5s.",
		"[cluster]   the reason",
		"[cluster]   In [It] at: x_test.go:1",
		"[cluster]   not the reason",
		"[cluster] • [FAILED] [100.3 seconds]",
		"[cluster] a run that failed",
		"[cluster]   [FAILED] Told to stop trying after 100.272s.",
		"[cluster]   run e2e-x ended Failed: coordinator pod failed: its log's tail:",
		"[cluster]   log line 3", "[cluster]   log line 4", "[cluster]   log line 5", "[cluster]   log line 6",
		"[cluster]   log line 7", "[cluster]   log line 8", "[cluster]   log line 9", "[cluster]   log line 10",
		"[cluster]   log line 11", "[cluster]   log line 12", "[cluster]   log line 13", "[cluster]   log line 14",
		"[cluster]   log line 15", "[cluster]   log line 16", "[cluster]   log line 17", "[cluster]   log line 18",
		"[cluster]   log line 19",
		"[cluster]   streambench: repeat 2: the error itself",
		"[cluster]   In [It] at: x_test.go:2",
		"[cluster] <== e2e suite                   100 s  FAILED (exit 1)  (CPU 50 s)",
		"[tests] --- FAIL: TestX (0.00s)",
		"[tests]     x_test.go:12: got 1, want 2",
		"[images] <== strimzi images build          5 s  ok  (CPU 5 s)",
		"",
	}, "\n")
	f := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(f, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", filepath.Join(root, "hack", "failure-digest.sh"), f).CombinedOutput()
	if err != nil {
		t.Fatalf("failure-digest.sh: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{
		"stage failed: report test ",
		"  | go: listing the packages failed: why\n  | no Go files in /src\n",
		"--- FAIL: TestX", "x_test.go:12: got 1, want 2", "FAIL\tgithub.com/a/b",
		"stage failed: unit and envtest suites",
		"spec: a spec title\n  [FAILED] Timed out after 5s.\n  the reason\n",
		"stage failed: e2e suite",
		// A long message keeps its head and its tail, where a failed run's
		// pod said what went wrong.
		"spec: a run that failed\n  [FAILED] Told to stop trying after 100.272s.\n  run e2e-x ended Failed: coordinator pod failed: its log's tail:\n  log line 3\n  log line 4\n  ... (2 lines)\n  log line 7\n",
		"  log line 19\n  streambench: repeat 2: the error itself\nstage failed: e2e suite",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the digest has no %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "x_test.go:12: got 1, want 2"); n != 1 {
		t.Errorf("a failure printed twice in the log is in the digest %d times, want once:\n%s", n, got)
	}
	for _, notWant := range []string{"deploying", "not the reason", "strimzi", "| --- FAIL", "log line 6", "x_test.go:2"} {
		if strings.Contains(got, notWant) {
			t.Errorf("the digest has %q, which is not a failure or not of the failed stage's lane:\n%s", notWant, got)
		}
	}
}
