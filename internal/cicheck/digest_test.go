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
// empty).
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
		"[cluster] <== e2e suite                   100 s  FAILED (exit 1)  (CPU 50 s)",
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
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the digest has no %q:\n%s", want, got)
		}
	}
	for _, notWant := range []string{"deploying", "not the reason", "strimzi", "| --- FAIL"} {
		if strings.Contains(got, notWant) {
			t.Errorf("the digest has %q, which is not a failure or not of the failed stage's lane:\n%s", notWant, got)
		}
	}
}
