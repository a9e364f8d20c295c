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
	write("14", "0::/kubepods/burstable/pod1234/"+id+"0\n")                 // a longer name holding the id
	write("15", "0::/kubepods.slice/crio-conmon-"+id+".scope\n")            // CRI-O's monitor, not the container
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
	for _, bad := range []string{"abc", id[:12], "/", id + "/..", strings.ToUpper(id)} {
		if _, err := ContainerPids(proc, []string{id, bad}); err == nil || !strings.Contains(err.Error(), "64 lowercase hex digits") {
			t.Errorf("id %q: err = %v, want it refused as no container id", bad, err)
		}
	}
	if _, err := ContainerPids(proc, nil); err == nil {
		t.Error("no ids: want an error")
	}
}

// TestCheckContainerID: only a runtime's id (64 lowercase hex digits)
// goes into a signal Job or is looked for by signal-container.
func TestCheckContainerID(t *testing.T) {
	const id = "4f1c2a9be0d14c7e8a6b5c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f"
	for _, tc := range []struct {
		in      string
		want    string // the id ParseContainerID returns; "" refused
		wantErr string
	}{
		{in: id, want: id},
		{in: "containerd://" + id, want: id},
		{in: "cri-o://" + id, want: id},
		{in: "docker://" + id, want: id},
		{in: "", wantErr: "0 characters long"},
		{in: "containerd://", wantErr: "0 characters long"},
		{in: id[:12], wantErr: "12 characters long"},          // docker's short form: a prefix of other ids too
		{in: id + "0", wantErr: "65 characters long"},         // longer
		{in: strings.ToUpper(id), wantErr: `holds 'F'`},       // not lowercase
		{in: id[:63] + "g", wantErr: `holds 'g'`},             // not hex
		{in: id[:62] + "/.", wantErr: `holds '/'`},            // a path
		{in: "containerd://" + id[:63] + "*", wantErr: `'*'`}, // a pattern
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseContainerID(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "64 lowercase hex digits") {
					t.Fatalf("ParseContainerID(%q) = %q, %v; want refused with %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseContainerID(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
			if err := CheckContainerID(got); err != nil {
				t.Fatalf("CheckContainerID(%q) = %v", got, err)
			}
		})
	}
}

// TestCgroupNames: a process is the container's only when a whole
// component of its cgroup path is the id or the runtime's scope of it,
// under cgroup v1 and v2 and both drivers.
func TestCgroupNames(t *testing.T) {
	const id = "4f1c2a9be0d14c7e8a6b5c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f"
	const other = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	for _, tc := range []struct {
		name   string
		cgroup string
		want   bool
	}{
		{"v2 cgroupfs", "0::/kubepods/burstable/pod1234/" + id + "\n", true},
		{"v2 systemd containerd", "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod12_34.slice/cri-containerd-" + id + ".scope\n", true},
		{"v2 systemd CRI-O", "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod12_34.slice/crio-" + id + ".scope\n", true},
		{"v2 systemd docker", "0::/system.slice/docker-" + id + ".scope\n", true},
		{"v2 CRI-O cgroupfs", "0::/kubepods/pod1234/crio-" + id + "\n", true},
		{"v2 a child of the scope", "0::/kubepods.slice/cri-containerd-" + id + ".scope/init\n", true},
		{"v2 seen from a private cgroup namespace", "0::/../../kubepods-burstable-pod12_34.slice/cri-containerd-" + id + ".scope\n", true},
		{"kind node", "0::/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod12_34.slice/cri-containerd-" + id + ".scope\n", true},
		{"v1 cgroupfs", "12:memory:/kubepods/burstable/pod1234/" + id + "\n11:cpu,cpuacct:/kubepods/burstable/pod1234/" + id + "\n1:name=systemd:/kubepods/burstable/pod1234/" + id + "\n", true},
		{"v1 systemd, one hierarchy", "12:pids:/system.slice/kubelet.service\n1:name=systemd:/kubepods.slice/cri-containerd-" + id + ".scope\n", true},
		{"another container", "0::/kubepods/burstable/pod1234/" + other + "\n", false},
		{"the id inside a longer component", "0::/kubepods/burstable/pod1234/x" + id + "\n", false},
		{"the id and more", "0::/kubepods/burstable/pod1234/" + id + "-sandbox\n", false},
		{"an unknown runtime's scope", "0::/kubepods.slice/evil-" + id + ".scope\n", false},
		{"CRI-O's conmon", "0::/kubepods.slice/crio-conmon-" + id + ".scope\n", false},
		{"in the controllers field, not the path", "0:" + id + ":/\n", false},
		{"no path at all", id + "\n", false},
		{"the host's", "0::/system.slice/containerd.service\n", false},
		{"empty", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cgroupNames(tc.cgroup, id); got != tc.want {
				t.Errorf("cgroupNames(%q) = %v, want %v", tc.cgroup, got, tc.want)
			}
		})
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
