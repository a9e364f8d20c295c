package localcluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Logf prints a progress line as local-cluster.sh did.
func Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "local-cluster: "+format+"\n", args...)
}

// pid reads a part's pid file; 0 when there is none.
func (c *Cluster) pid(p Part) int {
	b, err := os.ReadFile(c.PidFile(p))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return pid
}

// Alive says whether a part's process runs (a zombie, dead but not yet
// reaped by up's own process, does not).
func (c *Cluster) Alive(p Part) bool { return pidAlive(c.pid(p)) }

func pidAlive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses, which may hold
	// spaces.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// start runs a part in a session of its own (a terminal's or CI's signals
// to up's process group must not reach it), with its own log and pid file;
// it outlives up.
func (c *Cluster) start(p Part, argv ...string) error {
	if c.Alive(p) {
		Logf("%s already running (pid %d)", p, c.pid(p))
		return nil
	}
	for _, d := range []string{c.Logs(), c.Pids()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	log, err := os.Create(c.LogFile(p))
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: cannot start %s: %w", p, argv[0], err)
	}
	pid := cmd.Process.Pid
	// Reap it if it dies while up still runs, so Alive sees it gone.
	go func() { _ = cmd.Wait() }()
	if err := os.WriteFile(c.PidFile(p), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		return err
	}
	rel, _ := filepath.Rel(c.Root, c.LogFile(p))
	Logf("%s started (pid %d, log %s)", p, pid, rel)
	return nil
}

// partError is a part that failed: the message and the last lines of its
// log, which is where the reason is.
type partError struct {
	part Part
	msg  string
	tail string
}

func (e *partError) Error() string {
	return fmt.Sprintf("%s: %s\n--- last lines of its log:\n%s", e.part, e.msg, e.tail)
}

func (c *Cluster) failPart(p Part, format string, args ...any) error {
	return &partError{part: p, msg: fmt.Sprintf(format, args...), tail: tailFile(c.LogFile(p), 25)}
}

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitFor polls check every second until it succeeds, the part's process
// dies, or the time is up.
func (c *Cluster) waitFor(ctx context.Context, p Part, timeout time.Duration, what string, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if !c.Alive(p) {
			return c.failPart(p, "exited during start (waiting for %s)", what)
		}
		if time.Now().After(deadline) {
			return c.failPart(p, "not ready after %s (%s: %v)", timeout, what, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// stopPid sends SIGTERM, waits up to grace, then SIGKILL.
func stopPid(name string, pid int, grace time.Duration) {
	if !pidAlive(pid) {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if !pidAlive(pid) {
			Logf("%s stopped (pid %d)", name, pid)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	Logf("%s did not stop within %s; killing pid %d", name, grace, pid)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	time.Sleep(500 * time.Millisecond)
}

// stop stops a part by its own pid and removes its pid file.
func (c *Cluster) stop(p Part) {
	if pid := c.pid(p); pid > 0 {
		stopPid(string(p), pid, 20*time.Second)
	}
	_ = os.Remove(c.PidFile(p))
}

// run runs a command to its end; its output is in the error when it fails.
func run(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(lastLines(string(out), 5)))
	}
	return string(out), nil
}

func lastLines(s string, n int) string {
	sc := bufio.NewScanner(strings.NewReader(s))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// kubectl runs the cluster's kubectl with its kubeconfig.
func (c *Cluster) kubectl(args ...string) (string, error) {
	return run(filepath.Join(c.Bin, "kubectl"), append([]string{"--kubeconfig", c.Kubeconfig()}, args...)...)
}

// ctr runs containerd's CLI against node n's containerd, in the CRI's
// namespace.
func ctr(n Node, args ...string) (string, error) {
	return run("ctr", append([]string{"--address", n.ContainerdSocket(), "-n", "k8s.io"}, args...)...)
}

var errNotRoot = errors.New("must run as root (it starts containerd and the kubelets and creates the nodes' bridges)")

// NeedRoot refuses to go on as another user.
func NeedRoot() error {
	if os.Geteuid() != 0 {
		return errNotRoot
	}
	return nil
}
