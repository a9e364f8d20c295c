// Command cpusample says which processes a CI run's CPU went to, by what
// they are rather than by their command's name: process accounting and the
// stage table count every JVM as "java", and half of a cold run's CPU is
// JVMs (Strimzi's operator, a Kafka broker in a pod, a Pulsar standalone of
// a broker test, Maven). It reads /proc every interval until it is
// stopped (SIGTERM or SIGINT), gives each process's CPU since the last look
// to its label, and then writes the table, the largest first:
//
//	cpusample -out FILE [-interval 2s] [-top 30]
//
// A label is the command and, for a JVM, its main class or jar, prefixed
// "pod " when the process runs in a Kubernetes pod (its cgroup). Processes
// that live shorter than the interval (most compile and vet processes) are
// mostly missed: the last line gives what the machine's counters say the
// cores did beside what the labels got, so the share seen is known.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every Linux
// architecture Go builds for (the kernel's ABI, not the configured HZ).
const clockTicks = 100

func main() {
	out := flag.String("out", "", "file the table is written to when stopped (required)")
	interval := flag.Duration("interval", 2*time.Second, "time between two looks at /proc")
	top := flag.Int("top", 30, "labels in the table; the rest are summed in one line")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "cpusample: -out FILE is required")
		os.Exit(2)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)

	s := newSampler()
	busy0 := machineBusy()
	start := time.Now()
	tick := time.NewTicker(*interval)
	defer tick.Stop()
	s.look()
	for running := true; running; {
		select {
		case <-tick.C:
			s.look()
		case <-stop:
			s.look()
			running = false
		}
	}
	table := s.table(*top, machineBusy()-busy0, time.Since(start))
	if err := os.WriteFile(*out, []byte(table), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "cpusample: writing %s: %v\n", *out, err)
		os.Exit(1)
	}
}

// proc is one process as last seen: pid reuse is told apart by its start
// time.
type proc struct {
	start uint64
	comm  string
	label string
	ticks uint64
}

type sampler struct {
	procs map[int]*proc
	// cpu is each label's CPU in clock ticks, and count how many processes
	// had it.
	cpu   map[string]uint64
	count map[string]int
	// primed: the first look only notes where each running process is, so
	// what it used before the sampler started is not counted.
	primed bool
}

func newSampler() *sampler {
	return &sampler{procs: map[int]*proc{}, cpu: map[string]uint64{}, count: map[string]int{}}
}

// look reads every process's CPU and gives what it used since the last look
// (or since it started, when it is new) to its label.
func (s *sampler) look() {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	seen := make(map[int]bool, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(pid)
		if err != nil {
			continue // gone since ReadDir
		}
		seen[pid] = true
		p := s.procs[pid]
		if p == nil || p.start != st.start {
			p = &proc{start: st.start}
			s.procs[pid] = p
		}
		// A fork runs its parent's command until it execs: the label is
		// read again when the command changes.
		if p.label == "" || p.comm != st.comm {
			p.comm = st.comm
			p.label = label(st.comm, readCmdline(pid), inPod(pid))
			s.count[p.label]++
		}
		if s.primed && st.ticks > p.ticks {
			s.cpu[p.label] += st.ticks - p.ticks
		}
		p.ticks = st.ticks
	}
	for pid := range s.procs {
		if !seen[pid] {
			delete(s.procs, pid)
		}
	}
	s.primed = true
}

type stat struct {
	comm  string
	ppid  int
	ticks uint64 // utime + stime
	start uint64
}

// readStat reads /proc/PID/stat: the command is in parentheses and may hold
// spaces, so the fields are counted from its closing one.
func readStat(pid int) (stat, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return stat{}, err
	}
	return parseStat(string(b))
}

func parseStat(line string) (stat, error) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return stat{}, fmt.Errorf("no command in %q", line)
	}
	// After ") ": state(3) ppid(4) ... utime(14) stime(15) ... starttime(22).
	f := strings.Fields(line[end+1:])
	if len(f) < 20 {
		return stat{}, fmt.Errorf("%d fields after the command in %q", len(f), line)
	}
	num := func(field int) uint64 { n, _ := strconv.ParseUint(f[field-3], 10, 64); return n }
	return stat{comm: line[open+1 : end], ppid: int(num(4)), ticks: num(14) + num(15), start: num(22)}, nil
}

func readCmdline(pid int) []string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// inPod says whether the process runs in a Kubernetes pod: in a cgroup
// under kubepods (a kubelet with QoS cgroups), or below a containerd shim
// (any kubelet on containerd, the local cluster's among them).
func inPod(pid int) bool {
	if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cgroup")); err == nil && strings.Contains(string(b), "kubepods") {
		return true
	}
	for depth := 0; pid > 1 && depth < 64; depth++ {
		st, err := readStat(pid)
		if err != nil {
			return false
		}
		if strings.HasPrefix(st.comm, "containerd-shim") {
			return true
		}
		pid = st.ppid
	}
	return false
}

// jvmOptionsWithValue are the java launcher's options whose value is the
// next argument, so that value is not taken for the main class.
var jvmOptionsWithValue = map[string]bool{
	"-cp": true, "-classpath": true, "--class-path": true, "--module-path": true, "-p": true,
	"--add-opens": true, "--add-exports": true, "--add-modules": true, "--add-reads": true,
	"--patch-module": true, "--limit-modules": true, "--upgrade-module-path": true,
}

// label names a process by what it is: a JVM by its main class (or jar,
// or module), anything else by its command; "pod " in front when it runs in
// a pod.
func label(comm string, cmdline []string, pod bool) string {
	name := comm
	if strings.HasPrefix(comm, "java") && len(cmdline) > 1 {
		name = "java " + javaMain(cmdline[1:])
	}
	if pod {
		return "pod " + name
	}
	return name
}

// javaMain is what a java command line runs: the first argument that is
// not an option (or an option's value), the jar after -jar, the module
// after -m.
func javaMain(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-jar" || a == "-m" || a == "--module":
			if i+1 < len(args) {
				return filepath.Base(args[i+1])
			}
			return a
		case jvmOptionsWithValue[a]:
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return "?"
}

// table is the labels' CPU, the largest first, with what the machine's
// counters say the cores did in the same time.
func (s *sampler) table(top int, machineTicks uint64, took time.Duration) string {
	type row struct {
		label string
		ticks uint64
	}
	var rows []row
	var seen uint64
	for l, t := range s.cpu {
		rows = append(rows, row{l, t})
		seen += t
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].ticks != rows[j].ticks {
			return rows[i].ticks > rows[j].ticks
		}
		return rows[i].label < rows[j].label
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%-60s %8s %6s\n", "process (by main class for a JVM; pod: in a pod)", "CPU s", "procs")
	var rest uint64
	restN := 0
	for i, r := range rows {
		if i < top {
			fmt.Fprintf(&b, "%-60s %8d %6d\n", trim(r.label, 60), r.ticks/clockTicks, s.count[r.label])
			continue
		}
		rest += r.ticks
		restN++
	}
	if restN > 0 {
		fmt.Fprintf(&b, "%-60s %8d\n", fmt.Sprintf("(%d other labels)", restN), rest/clockTicks)
	}
	fmt.Fprintf(&b, "seen %d CPU-s of the %d the machine's cores were busy in %s (processes shorter than a look are missed)\n",
		seen/clockTicks, machineTicks/clockTicks, took.Round(time.Second))
	return b.String()
}

func trim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// machineBusy is the cores' busy time so far (/proc/stat's first line:
// user nice system idle iowait irq softirq steal ...), in clock ticks.
func machineBusy() uint64 {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0
	}
	fields := strings.Fields(sc.Text())
	var busy uint64
	for i, v := range fields[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		if i > 7 { // guest times are in user already
			break
		}
		n, _ := strconv.ParseUint(v, 10, 64)
		busy += n
	}
	return busy
}
