package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Signalling a pod's processes from its node. A container's process is
// PID 1 of its PID namespace, and the kernel drops SIGSTOP and SIGKILL
// sent to a namespace's init from inside that namespace (so kubectl exec
// and an ephemeral container cannot do it); from the host's PID
// namespace they work. The operator therefore runs a privileged Job with
// hostPID on the target's node (internal/provision/faultjob), which finds
// the container's processes by their cgroup, which names the container's
// id under every cgroup driver (cgroupfs .../<id>, systemd
// cri-containerd-<id>.scope), and signals them.

// SignalResult is what a signal Job did: its container's termination
// message, read by the operator into status.faults.
type SignalResult struct {
	Signal string `json:"signal"`
	// Pids are the host pids signalled.
	Pids       []int      `json:"pids"`
	InjectedAt time.Time  `json:"injectedAt"`
	ClearedAt  *time.Time `json:"clearedAt,omitempty"`
}

// ContainerPids lists the pids under procRoot (/proc of the host's PID
// namespace) whose cgroup names one of the container ids, in order. The
// caller's own pid is never one.
func ContainerPids(procRoot string, ids []string) ([]int, error) {
	if len(ids) == 0 {
		return nil, fmt.Errorf("no container id to look for")
	}
	for _, id := range ids {
		// A short id would match other containers' too.
		if len(id) < 12 {
			return nil, fmt.Errorf("container id %q is too short to name one container", id)
		}
	}
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "cgroup"))
		if err != nil {
			continue // gone meanwhile, or a kernel thread's
		}
		cg := string(b)
		for _, id := range ids {
			if strings.Contains(cg, id) {
				pids = append(pids, pid)
				break
			}
		}
	}
	sort.Ints(pids)
	return pids, nil
}

// Kill sends SIGKILL to every pid: the container's runtime sees its
// process die and the kubelet restarts it, as after a crash.
func Kill(pids []int, now func() time.Time) (SignalResult, error) {
	res := SignalResult{Signal: "SIGKILL", InjectedAt: now().UTC()}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
			return res, fmt.Errorf("SIGKILL pid %d: %w", pid, err)
		}
		res.Pids = append(res.Pids, pid)
	}
	return res, nil
}

// Pause stops every pid (SIGSTOP), waits d or until ctx ends (the Job's
// deadline, a deletion), and lets them go (SIGCONT) either way: a
// process is never left stopped by a pause that was cut short.
func Pause(ctx context.Context, pids []int, d time.Duration, now func() time.Time) (SignalResult, error) {
	res := SignalResult{Signal: "SIGSTOP", InjectedAt: now().UTC()}
	var stopErr error
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil && err != syscall.ESRCH {
			stopErr = fmt.Errorf("SIGSTOP pid %d: %w", pid, err)
			break
		}
		res.Pids = append(res.Pids, pid)
	}
	if stopErr == nil {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	var contErr error
	for _, pid := range res.Pids {
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil && err != syscall.ESRCH && contErr == nil {
			contErr = fmt.Errorf("SIGCONT pid %d: %w", pid, err)
		}
	}
	cleared := now().UTC()
	res.ClearedAt = &cleared
	if stopErr != nil {
		return res, stopErr
	}
	return res, contErr
}
