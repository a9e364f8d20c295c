package syncdelay

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestShimDelaysSyncs builds the shim with the machine's compiler and runs
// coreutils' sync(1) under it, which calls fsync or fdatasync through libc
// as the JVM's FileChannel.force does: the delayed call must take at least
// the delay and be traced, an undelayed run must not wait.
func TestShimDelaysSyncs(t *testing.T) {
	dir := t.TempDir()
	lib, err := Build(context.Background(), filepath.Join(dir, "lib"))
	if err != nil {
		t.Fatal(err)
	}
	if again, err := Build(context.Background(), filepath.Join(dir, "lib")); err != nil || again != lib {
		t.Errorf("second Build = %q, %v; want the cached %q", again, err, lib)
	}
	file := filepath.Join(dir, "data")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(delay time.Duration, trace string, args ...string) time.Duration {
		t.Helper()
		cmd := exec.Command("sync", append(args, file)...)
		cmd.Env = append(os.Environ(), Env(lib, delay, trace)...)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sync %v: %v\n%s", args, err, out)
		}
		return time.Since(start)
	}
	const delay = 150 * time.Millisecond
	trace := filepath.Join(dir, "trace")
	if took := run(delay, trace); took < delay {
		t.Errorf("sync FILE (fsync) with a %s delay took %s", delay, took)
	}
	if took := run(delay, trace, "-d"); took < delay {
		t.Errorf("sync -d FILE (fdatasync) with a %s delay took %s", delay, took)
	}
	counts, err := Trace(trace)
	if err != nil {
		t.Fatal(err)
	}
	if counts["fsync"] != 1 || counts["fdatasync"] != 1 {
		t.Errorf("trace counts %v; want one fsync and one fdatasync", counts)
	}
	// Without a delay the shim only passes through; a generous bound keeps
	// a busy machine from failing the test, while staying far below delay.
	if took := run(0, ""); took >= delay {
		t.Errorf("sync FILE without a delay took %s; the shim must not wait when the delay is 0", took)
	}
}

func TestParseTrace(t *testing.T) {
	got := ParseTrace([]byte("fsync 10\nmsync 10\nfsync 11\n\nfdatasync 12\n"))
	want := map[string]int{"fsync": 2, "msync": 1, "fdatasync": 1}
	if len(got) != len(want) {
		t.Fatalf("ParseTrace = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("ParseTrace[%s] = %d, want %d", k, got[k], v)
		}
	}
	if Total(got) != 4 {
		t.Errorf("Total = %d, want 4", Total(got))
	}
}
