package syncdelay

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	run := func(delay time.Duration, trace string, args ...string) (before, after time.Time) {
		t.Helper()
		cmd := exec.Command("sync", append(args, file)...)
		cmd.Env = append(os.Environ(), Env(lib, delay, trace)...)
		before = time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sync %v: %v\n%s", args, err, out)
		}
		return before, time.Now()
	}
	const delay = 150 * time.Millisecond
	trace := filepath.Join(dir, "trace")
	b1, a1 := run(delay, trace)
	b2, a2 := run(delay, trace, "-d")
	syncs, err := ReadTrace(trace)
	if err != nil {
		t.Fatal(err)
	}
	if len(syncs) != 2 || syncs[0].Call != "fsync" || syncs[1].Call != "fdatasync" {
		t.Fatalf("trace %+v; want one fsync, then one fdatasync", syncs)
	}
	for i, win := range [][2]time.Time{{b1, a1}, {b2, a2}} {
		s := syncs[i]
		if s.Path != file {
			t.Errorf("%s traced the path %q, want %q", s.Call, s.Path, file)
		}
		// The trace's times are the shim's own, around the call: a slow
		// machine makes them longer, never shorter than the delay.
		if took := s.End.Sub(s.Start); took < delay {
			t.Errorf("%s with a %s delay took %s from its start to its end", s.Call, delay, took)
		}
		if s.Start.Before(win[0]) || s.End.After(win[1]) {
			t.Errorf("%s traced %s..%s, outside the run of sync(1) %s..%s: the shim's clock is not the wall clock", s.Call, s.Start, s.End, win[0], win[1])
		}
	}
	// Without a delay the shim only passes through: the call, timed by the
	// shim itself (not with the process start, which a busy machine slows
	// down), stays far below the delay.
	run(0, trace)
	if syncs, err = ReadTrace(trace); err != nil || len(syncs) != 3 {
		t.Fatalf("trace after the undelayed run: %+v, %v", syncs, err)
	}
	if took := syncs[2].End.Sub(syncs[2].Start); took >= delay {
		t.Errorf("sync FILE without a delay took %s in the shim; it must not wait when the delay is 0", took)
	}
}

func TestParseTrace(t *testing.T) {
	got, err := ParseTrace([]byte("fsync 10 1000 31000 /d/sb-x-0-0/0.log\nmsync 10 2000 32000 -\n\nfdatasync 12 3000 33000 /j/current/1.txn\nfsync 10 4000"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Sync{
		{Call: "fsync", Pid: 10, Start: time.Unix(0, 1000), End: time.Unix(0, 31000), Path: "/d/sb-x-0-0/0.log"},
		{Call: "msync", Pid: 10, Start: time.Unix(0, 2000), End: time.Unix(0, 32000), Path: "-"},
		{Call: "fdatasync", Pid: 12, Start: time.Unix(0, 3000), End: time.Unix(0, 33000), Path: "/j/current/1.txn"},
	}
	if len(got) != len(want) {
		t.Fatalf("ParseTrace = %+v, want %+v (the unfinished last line left out)", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if c := Count(got); c["fsync"] != 1 || c["msync"] != 1 || Total(c) != 3 {
		t.Errorf("Count = %v, want fsync 1, msync 1, fdatasync 1", c)
	}
	if _, err := ParseTrace([]byte("fsync 10\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a line of the old format: %v, want an error naming line 1", err)
	}
}

// journals makes a journal file of one byte under dir/<bookie>/ for each
// of two bookies and returns their paths.
func journals(t *testing.T, dir, a, b string) (string, string) {
	t.Helper()
	var out []string
	for _, bookie := range []string{a, b} {
		f := filepath.Join(dir, bookie, "journal")
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out[0], out[1]
}

// start starts cmd and returns where its end is sent.
func start(t *testing.T, cmd *exec.Cmd) <-chan error {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return done
}

// TestShimStallsOnePath: sync(1) of a file, and dd(1) writing to it, under
// the stall path do not return while the flag exists, and return once it
// is removed; a file elsewhere is not stalled. A flag that names a path
// stalls that path instead.
func TestShimStallsOnePath(t *testing.T) {
	dir := t.TempDir()
	lib, err := Build(context.Background(), filepath.Join(dir, "lib"))
	if err != nil {
		t.Fatal(err)
	}
	bookie2, bookie1 := journals(t, dir, "bookie2", "bookie1")
	flag := filepath.Join(dir, "stall")
	env := append(os.Environ(), StallEnv(lib, filepath.Join(dir, "bookie2")+"/", flag)...)
	sync := func(f string) *exec.Cmd { return exec.Command("sync", f) }
	// dd writes with write(2), as a bookie that does not sync its journal
	// still does before it answers.
	write := func(f string) *exec.Cmd {
		return exec.Command("dd", "if=/dev/zero", "of="+f, "bs=1", "count=1", "conv=notrunc", "status=none")
	}
	for _, tc := range []struct {
		name             string
		cmd              func(file string) *exec.Cmd
		flagPath         string
		stalled, passing string
	}{
		{"sync", sync, "", bookie2, bookie1},
		{"write", write, "", bookie2, bookie1},
		{"sync of the path the flag names", sync, filepath.Join(dir, "bookie1") + "/", bookie1, bookie2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release, err := StallPath(flag, tc.flagPath)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = release() }()

			// Elsewhere: passes through although the flag exists.
			cmd := tc.cmd(tc.passing)
			cmd.Env = env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s %s: %v\n%s", tc.name, tc.passing, err, out)
			}

			cmd = tc.cmd(tc.stalled)
			cmd.Env = env
			done := start(t, cmd)
			// Not a time bound on the machine's speed: whatever the load,
			// the call cannot return while the flag exists.
			select {
			case err := <-done:
				t.Fatalf("%s of %s returned while stalled: %v", tc.name, tc.stalled, err)
			case <-time.After(time.Second):
			}
			if err := release(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("%s after the stall: %v", tc.name, err)
				}
			case <-time.After(time.Minute):
				t.Fatalf("%s of %s still stalled a minute after the flag was removed", tc.name, tc.stalled)
			}
		})
	}
}

// TestShimHoldsWhatTheFlagNamesNow: a call held while the flag named its
// file (here an empty flag: the whole stall path) returns once the flag
// names another path, although the flag still exists. Before, a held call
// waited for the flag to go, so a flag read while it was being written
// held a second bookie's journal for the whole stall (TestAcksWaitFor's
// level 1 in CI: 400 of 400 held at ack quorum 2).
func TestShimHoldsWhatTheFlagNamesNow(t *testing.T) {
	dir := t.TempDir()
	lib, err := Build(context.Background(), filepath.Join(dir, "lib"))
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data") + "/"
	bookie1, bookie2 := journals(t, data, "bookie1", "bookie2")
	flag := filepath.Join(dir, "stall")
	release, err := Stall(flag)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = release() }()
	cmd := exec.Command("dd", "if=/dev/zero", "of="+bookie1, "bs=1", "count=1", "conv=notrunc", "status=none")
	cmd.Env = append(os.Environ(), StallEnv(lib, data, flag)...)
	done := start(t, cmd)
	select {
	case err := <-done:
		t.Fatalf("a write to %s returned while the flag named the whole stall path: %v", bookie1, err)
	case <-time.After(time.Second):
	}
	// The stall moves to bookie 2: bookie 1's write goes on, the flag
	// still there.
	if _, err := StallPath(flag, filepath.Dir(bookie2)+"/"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the write to %s: %v", bookie1, err)
		}
	case <-time.After(time.Minute):
		t.Fatalf("a write to %s still held a minute after the flag named %s", bookie1, filepath.Dir(bookie2))
	}
	if _, err := os.Stat(flag); err != nil {
		t.Fatalf("the flag is gone (%v): the write's return proves nothing", err)
	}
}

// TestStallPathAppearsWhole: the flag is never seen without the path it
// names. os.WriteFile creates and then writes, and in between the shim
// read an empty flag as the whole stall path; a reader polling the flag
// through many stalls would see that moment.
func TestStallPathAppearsWhole(t *testing.T) {
	dir := t.TempDir()
	flag := filepath.Join(dir, "stall")
	want := filepath.Join(dir, "data", "bookkeeper2") + "/"
	stop := make(chan struct{})
	seen := make(chan string, 1)
	go func() {
		defer close(seen)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if b, err := os.ReadFile(flag); err == nil && string(b) != want {
				seen <- string(b)
				return
			}
		}
	}()
	for range 2000 {
		release, err := StallPath(flag, want)
		if err != nil {
			t.Fatal(err)
		}
		if err := release(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	if got, ok := <-seen; ok {
		t.Fatalf("a reader saw the flag hold %q, want %q or no flag", got, want)
	}
}
