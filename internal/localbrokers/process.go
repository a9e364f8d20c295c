package localbrokers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// JVM describes one Java process to start.
type JVM struct {
	// Name is used in errors and the default log file name (e.g. "kafka-1").
	Name string
	// Classpath is the java -cp value (see Classpath).
	Classpath string
	// Main is the main class.
	Main string
	Args []string
	// JVMArgs go before -cp, e.g. -Xmx512m. DefaultJVMArgs when nil.
	JVMArgs []string
	// Env is added to the parent's environment.
	Env []string
	// Dir is the working directory; the log is Dir/<Name>.log unless LogFile
	// is set.
	Dir     string
	LogFile string
	// GCLog, if set, is where the JVM logs every GC pause with its wall
	// time (-Xlog:gc), which the broker resources of a run are read from
	// (internal/brokerres).
	GCLog string
}

// Setup is how local brokers run, as the results state it: the JVM's heap,
// collector and compiler options, and the broker settings streambench sets
// beyond the broker's own defaults (not the listeners, ports and paths).
type Setup struct {
	JVM    []string          `json:"jvm"`
	Config map[string]string `json:"config"`
	// Java is the runtime the JVMs run on (BrokerJava); nil when it could
	// not be read, and JavaError says why.
	Java      *v1alpha1.JavaRuntime `json:"java,omitempty"`
	JavaError string                `json:"javaError,omitempty"`
}

// DefaultJVMArgs are the Kafka nodes' heap, collector and compiler. Chosen
// by hack/bench-jvm on this project's 2-core machines (docs/methodology.md):
// against Kafka's own defaults (1 GiB, G1, C2), three nodes measured
// publish p99 25 vs 41 ms and p99.9 35 vs 57 ms at the quickstart
// (medians of 4 runs each, alternated), with 1.22 vs 1.39 cores of CPU;
// G1's and C2's threads cost more than they save when three JVMs share
// two cores, and 2 of the 4 production-flag runs left the host CPU-bound.
// The small heap also suits the tests, which run several JVMs at once.
var DefaultJVMArgs = []string{"-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true"}

// Process is a started JVM. Stop is idempotent and safe from any goroutine.
type Process struct {
	Name    string
	Pid     int
	LogFile string
	// GCLog is JVM.GCLog.
	GCLog string

	cmd      *exec.Cmd
	logf     *os.File
	done     chan struct{}
	waitErr  error
	stopOnce sync.Once
	stopErr  error
}

// StartJVM starts the JVM with its own log file. On Linux the child gets its
// own process group and SIGKILL when the Go process dies (Pdeathsig), so a
// crashed or killed test never leaves a broker behind. Detached processes (the
// hack script) use StartJVMDetached instead.
func StartJVM(j JVM) (*Process, error) {
	return startJVM(j, false)
}

// StartJVMDetached starts a JVM that outlives the Go process (for
// hack/local-brokers.sh); it is stopped later by its recorded pid with
// StopPid.
func StartJVMDetached(j JVM) (*Process, error) {
	return startJVM(j, true)
}

func startJVM(j JVM, detached bool) (*Process, error) {
	if j.Name == "" || j.Main == "" || j.Classpath == "" {
		return nil, errors.New("localbrokers: JVM needs Name, Main and Classpath")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, CheckJava()
	}
	if j.Dir == "" {
		j.Dir = os.TempDir()
	}
	if err := os.MkdirAll(j.Dir, 0o755); err != nil {
		return nil, err
	}
	if j.LogFile == "" {
		j.LogFile = filepath.Join(j.Dir, j.Name+".log")
	}
	logf, err := os.OpenFile(j.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: opening log file: %w", j.Name, err)
	}
	jvmArgs := j.JVMArgs
	if jvmArgs == nil {
		jvmArgs = DefaultJVMArgs
	}
	if j.GCLog != "" {
		// The "time" decoration (wall clock) places each pause in or out
		// of a run's measured phase.
		jvmArgs = append(append([]string{}, jvmArgs...), "-Xlog:gc:file="+j.GCLog+":time")
	}
	share := shareClasses(classArchives(), java, j.Classpath, j.Main, jvmArgs, detached)
	args := append(append(append(append([]string{}, jvmArgs...), share.opts...), "-cp", j.Classpath, j.Main), j.Args...)
	cmd := exec.Command(java, args...)
	cmd.Dir = j.Dir
	cmd.Env = append(os.Environ(), j.Env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr(detached)
	if err := cmd.Start(); err != nil {
		logf.Close()
		share.end(nil)
		return nil, fmt.Errorf("%s: starting java: %w", j.Name, err)
	}
	p := &Process{Name: j.Name, Pid: cmd.Process.Pid, LogFile: j.LogFile, GCLog: j.GCLog, cmd: cmd, logf: logf, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logf.Close()
		// Before done: whoever waited for the stop finds the archive.
		share.end(cmd.ProcessState)
		close(p.done)
	}()
	return p, nil
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// WaitPort waits until addr accepts TCP connections, the process exits, or
// timeout passes; the error carries the tail of the log.
func (p *Process) WaitPort(ctx context.Context, addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited (%v) before %s accepted connections; log %s:\n%s", p.Name, p.waitErr, addr, p.LogFile, p.LogTail(3000))
		case <-ctx.Done():
			return fmt.Errorf("%s: %s did not accept connections within %s; log %s:\n%s", p.Name, addr, timeout, p.LogFile, p.LogTail(3000))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// LogTail is the last n bytes of the process log, for error messages.
func (p *Process) LogTail(n int) string { return LogTail(p.LogFile, n) }

// LogTail is the last n bytes of a log file.
func LogTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	return tail(string(b), n)
}

// StopGrace is how long Stop waits after SIGTERM before SIGKILL. Kafka and
// Pulsar shut down cleanly well within it when healthy.
const StopGrace = 15 * time.Second

// Stop sends SIGTERM, waits up to grace, then SIGKILL, and waits for the exit.
// It is idempotent. A process that already exited is not an error.
func (p *Process) Stop(grace time.Duration) error {
	p.stopOnce.Do(func() {
		if p.Exited() {
			return
		}
		_ = signalTree(p.Pid, syscall.SIGTERM)
		select {
		case <-p.done:
			return
		case <-time.After(grace):
		}
		_ = signalTree(p.Pid, syscall.SIGKILL)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			p.stopErr = fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.Name, p.Pid)
		}
	})
	return p.stopErr
}

// StopPid stops a process this package started earlier, possibly from another
// Go process (hack/local-brokers.sh stop), by its recorded pid: SIGTERM, then
// SIGKILL after grace. A pid that no longer exists is not an error.
func StopPid(pid int, grace time.Duration) error {
	if pid <= 0 {
		return fmt.Errorf("invalid pid %d", pid)
	}
	if !PidAlive(pid) {
		return nil
	}
	_ = signalTree(pid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if !PidAlive(pid) {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	_ = signalTree(pid, syscall.SIGKILL)
	for i := 0; i < 50; i++ {
		if !PidAlive(pid) {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("pid %d did not exit after SIGKILL", pid)
}

// PidAlive reports whether pid exists and is not a zombie.
func PidAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	// A zombie child of another process still answers kill(0); /proc says
	// whether it is really running (Linux only; elsewhere trust kill).
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !os.IsNotExist(err)
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// signalTree signals the process group the JVM leads (it was started with
// Setpgid), falling back to the pid alone.
func signalTree(pid int, sig syscall.Signal) error {
	if err := syscall.Kill(-pid, sig); err == nil {
		return nil
	}
	return syscall.Kill(pid, sig)
}
