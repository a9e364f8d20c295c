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
// cri-containerd-<id>.scope), and signals them. The Job runs in the
// operator's namespace, never a tenant's (controllers,
// privileged_jobs.go); it still takes its ids as arguments, so both
// ends check them (CheckContainerID) and match them whole
// (cgroupNames).

// SignalResult is what a signal Job did: its container's termination
// message, read by the operator into status.faults.
type SignalResult struct {
	Signal string `json:"signal"`
	// Pids are the host pids signalled.
	Pids       []int      `json:"pids"`
	InjectedAt time.Time  `json:"injectedAt"`
	ClearedAt  *time.Time `json:"clearedAt,omitempty"`
}

// ContainerIDLen is the length of a container id as containerd, CRI-O
// and Docker make them: 32 random bytes in lowercase hex.
const ContainerIDLen = 64

// CheckContainerID refuses anything but such an id (without the pod
// status's <runtime>:// prefix: ParseContainerID strips it). The signal
// Job runs privileged in the host's PID namespace: an id that is short,
// empty or holds a path separator would let its cgroup match name other
// containers, or every process on the node.
func CheckContainerID(id string) error {
	if len(id) != ContainerIDLen {
		return fmt.Errorf("container id %q is %d characters long; a containerd, CRI-O or Docker id is %d lowercase hex digits", id, len(id), ContainerIDLen)
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return fmt.Errorf("container id %q holds %q; a containerd, CRI-O or Docker id is %d lowercase hex digits", id, c, ContainerIDLen)
		}
	}
	return nil
}

// ParseContainerID is the id of a pod status's containerID
// (containerd://<id>, cri-o://<id>, docker://<id>), checked.
func ParseContainerID(s string) (string, error) {
	id := s
	if _, after, ok := strings.Cut(s, "://"); ok {
		id = after
	}
	if err := CheckContainerID(id); err != nil {
		return "", err
	}
	return id, nil
}

// scopePrefixes are the runtimes' names of a container's own cgroup
// under the systemd driver (<prefix><id>.scope), and CRI-O's under
// cgroupfs (crio-<id>). Listed, not any <something>-<id>: CRI-O's
// monitor sits in crio-conmon-<id>.scope, and is not the container.
var scopePrefixes = []string{"cri-containerd-", "crio-", "docker-"}

// cgroupNames says whether a /proc/<pid>/cgroup names container id: a
// component of some line's path is the id itself (cgroupfs driver:
// /kubepods/burstable/pod<uid>/<id>, on cgroup v1 one line per
// hierarchy, on v2 the one 0:: line) or the runtime's scope of it
// (systemd driver: .../kubepods-burstable-pod<uid>.slice/
// cri-containerd-<id>.scope). Whole components, never a substring: a
// path that merely contains the id (a longer name, a sibling's scope)
// is another cgroup's.
func cgroupNames(cgroup, id string) bool {
	for _, line := range strings.Split(cgroup, "\n") {
		// hierarchy-ID:controller-list:path (cgroup(7)); the path may
		// hold colons itself.
		fields := strings.SplitN(line, ":", 3)
		if len(fields) != 3 {
			continue
		}
		for _, c := range strings.Split(fields[2], "/") {
			if c == id {
				return true
			}
			base := strings.TrimSuffix(c, ".scope")
			for _, p := range scopePrefixes {
				if base == p+id {
					return true
				}
			}
		}
	}
	return false
}

// ContainerPids lists the pids under procRoot (/proc of the host's PID
// namespace) whose cgroup names one of the container ids (cgroupNames),
// in order. Each id must be a container id (CheckContainerID). The
// caller's own pid is never one.
func ContainerPids(procRoot string, ids []string) ([]int, error) {
	if len(ids) == 0 {
		return nil, fmt.Errorf("no container id to look for")
	}
	for _, id := range ids {
		if err := CheckContainerID(id); err != nil {
			return nil, err
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
		for _, id := range ids {
			if cgroupNames(string(b), id) {
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
