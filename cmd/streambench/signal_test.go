package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/internal/faults"
)

// TestSignalContainer: signal-container, what the privileged signal Job
// runs as root in the host's PID namespace, refuses anything but whole
// container ids and signals only the processes whose cgroup names one
// whole. The pids are above the kernel's pid_max (2^22), so no real
// process is ever signalled here: SIGKILL to them finds none (ESRCH), which
// Kill treats as a process gone meanwhile.
func TestSignalContainer(t *testing.T) {
	const id = "4f1c2a9be0d14c7e8a6b5c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f"
	proc := t.TempDir()
	for pid, cgroup := range map[string]string{
		"4194401": "0::/kubepods.slice/kubepods-burstable.slice/cri-containerd-" + id + ".scope\n", // the container
		"4194402": "0::/kubepods/burstable/pod1234/x" + id + "\n",                                  // holds the id, is not it
		"4194403": "0::/kubepods/burstable/pod1234/" + strings.Repeat("a", 64) + "\n",              // another container
	} {
		if err := os.MkdirAll(filepath.Join(proc, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proc, pid, "cgroup"), []byte(cgroup), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name     string
		ids      string
		wantErr  string
		wantPids []int
	}{
		{name: "the container's processes only", ids: id, wantPids: []int{4194401}},
		{name: "a short id", ids: id[:12], wantErr: "64 lowercase hex digits"},
		{name: "a good id beside a bad one", ids: id + "," + id[:40], wantErr: "64 lowercase hex digits"},
		{name: "a path", ids: "../" + id[:61], wantErr: "holds '.'"},
		{name: "no process of that container", ids: strings.Repeat("b", 64), wantErr: "no process of container(s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			termLog := filepath.Join(t.TempDir(), "termination-log")
			cmd := newSignalContainerCmd()
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			cmd.SetArgs([]string{"--container-ids=" + tc.ids, "--signal=KILL", "--proc=" + proc, "--termination-log=" + termLog})
			err := cmd.Execute()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if _, statErr := os.Stat(termLog); statErr == nil {
					t.Error("a refused call wrote a result")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(termLog)
			if err != nil {
				t.Fatal(err)
			}
			var res faults.SignalResult
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Pids, tc.wantPids) || res.Signal != "SIGKILL" {
				t.Errorf("result %+v, want SIGKILL to %v", res, tc.wantPids)
			}
		})
	}
}
