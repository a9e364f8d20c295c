package faults

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestContainerPids(t *testing.T) {
	const id = "4f1c2a9be0d14c7e8a6b5c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f"
	proc := t.TempDir()
	write := func(pid, cgroup string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(proc, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proc, pid, "cgroup"), []byte(cgroup), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("10", "0::/kubepods/burstable/pod1234/"+id+"\n")                                           // cgroupfs driver
	write("11", "0::/kubepods.slice/kubepods-burstable.slice/cri-containerd-"+id+".scope\n")         // systemd driver
	write("12", "0::/kubepods/burstable/pod1234/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n") // another container
	write("13", "0::/system.slice/containerd.service\n")
	if err := os.MkdirAll(filepath.Join(proc, "self"), 0o755); err != nil { // not a pid
		t.Fatal(err)
	}
	got, err := ContainerPids(proc, []string{id})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{10, 11}; !slices.Equal(got, want) {
		t.Errorf("pids = %v, want %v", got, want)
	}
	if _, err := ContainerPids(proc, []string{"abc"}); err == nil || !strings.Contains(err.Error(), "too short") {
		t.Errorf("a short id: err = %v, want too short", err)
	}
	if _, err := ContainerPids(proc, nil); err == nil {
		t.Error("no ids: want an error")
	}
}

// A real process really stopped, let go and killed: what a signal Job
// does to a broker's container, here to a sleep. (Finding a container's
// processes by cgroup is TestContainerPids' and, on a real container,
// the e2e's.)
func TestPauseStopsAndContinuesARealProcess(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan SignalResult)
	go func() {
		res, err := Pause(ctx, []int{pid}, time.Minute, time.Now)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	waitState(t, pid, 'T')
	cancel() // cut short: the process must be let go all the same
	res := <-done
	waitState(t, pid, 'S')
	if res.ClearedAt == nil || res.ClearedAt.Before(res.InjectedAt) || !slices.Equal(res.Pids, []int{pid}) {
		t.Errorf("result %+v", res)
	}

	if _, err := Kill([]int{pid}, time.Now); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("after Kill: wait = %v, want killed", err)
	}
}

func waitState(t *testing.T, pid int, want byte) {
	t.Helper()
	for range 500 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		// The state follows the command's closing parenthesis.
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i > 0 && i+2 < len(s) && s[i+2] == want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("pid %d never reached state %c", pid, want)
}
