package brokerres

import (
	"fmt"
	"os"
	"sort"
	"sync"
	"syscall"
	"time"
)

// Process is one local broker JVM to watch.
type Process struct {
	// Name is the broker's name in the results (e.g. "kafka-1").
	Name string
	Pid  int
	// GCLog is the JVM's GC log (GCLogArg); empty: no GC figures.
	GCLog string
	// DataDir is where the broker writes; its device's /proc/diskstats
	// line gives the host's disk figure.
	DataDir string
}

// LocalOptions configure StartLocal.
type LocalOptions struct {
	Processes []Process
	// Every is the sampling interval (default 1 s). The counters at the
	// window's ends are interpolated between the samples around them.
	Every time.Duration
	// ProcRoot is /proc unless a test says otherwise.
	ProcRoot string
	// Notes are added to the report (e.g. what a Pulsar standalone JVM
	// holds).
	Notes []string
	// ToolPids are the load generator's processes on the same host (local
	// mode: the streambench process, which runs the workers and the
	// coordinator), whose CPU the host's verdict sets apart.
	ToolPids []int
}

// sample is every counter at one instant; ok[i] is false when process i
// could not be read.
type sample struct {
	at      time.Time
	cpu     []float64
	written []int64
	ok      []bool
	// rss is each process's resident set, in bytes; rssOK whether it
	// was read.
	rss     []int64
	rssOK   []bool
	lo      int64
	loOK    bool
	sectors int64
	diskOK  bool
	host    hostCPU
	hostOK  bool
	tool    float64
	toolOK  bool
}

// LocalSampler samples the broker processes' counters until Stop.
type LocalSampler struct {
	o       LocalOptions
	devs    map[string]bool
	devName []string
	errs    []string

	mu      sync.Mutex
	samples []sample
	stop    chan struct{}
	done    chan struct{}
}

// StartLocal starts sampling now.
func StartLocal(o LocalOptions) *LocalSampler {
	if o.Every <= 0 {
		o.Every = time.Second
	}
	if o.ProcRoot == "" {
		o.ProcRoot = "/proc"
	}
	s := &LocalSampler{o: o, devs: map[string]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	ds, _ := os.ReadFile(o.ProcRoot + "/diskstats")
	names := diskstatsNames(ds)
	for _, p := range o.Processes {
		if p.DataDir == "" {
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Stat(p.DataDir, &st); err != nil {
			s.errs = append(s.errs, fmt.Sprintf("data directory of %s: %v", p.Name, err))
			continue
		}
		id := fmt.Sprintf("%d:%d", major(st.Dev), minor(st.Dev))
		if _, ok := names[id]; !ok {
			// tmpfs, overlay and other filesystems without a block
			// device have no diskstats line.
			s.errs = append(s.errs, fmt.Sprintf("the data directory of %s (%s) is on device %s, which /proc/diskstats does not list (no block device, e.g. tmpfs): no host disk figure", p.Name, p.DataDir, id))
			continue
		}
		if !s.devs[id] {
			s.devs[id] = true
			s.devName = append(s.devName, names[id])
		}
	}
	sort.Strings(s.devName)
	s.take()
	go s.loop()
	return s
}

func major(dev uint64) uint64 { return (dev >> 8) & 0xfff }
func minor(dev uint64) uint64 { return (dev & 0xff) | ((dev >> 12) & 0xfff00) }

func (s *LocalSampler) loop() {
	defer close(s.done)
	t := time.NewTicker(s.o.Every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			s.take()
			return
		case <-t.C:
			s.take()
		}
	}
}

// Stop takes a last sample and stops sampling. Idempotent.
func (s *LocalSampler) Stop() {
	s.mu.Lock()
	select {
	case <-s.stop:
		s.mu.Unlock()
		return
	default:
	}
	close(s.stop)
	s.mu.Unlock()
	<-s.done
}

func (s *LocalSampler) take() {
	n := len(s.o.Processes)
	sm := sample{cpu: make([]float64, n), written: make([]int64, n), ok: make([]bool, n), rss: make([]int64, n), rssOK: make([]bool, n)}
	for i, p := range s.o.Processes {
		c, err1 := procCPUSeconds(s.o.ProcRoot, p.Pid)
		w, err2 := procWriteBytes(s.o.ProcRoot, p.Pid)
		sm.cpu[i], sm.written[i], sm.ok[i] = c, w, err1 == nil && err2 == nil
		rss, err := procRSSBytes(s.o.ProcRoot, p.Pid)
		sm.rss[i], sm.rssOK[i] = rss, err == nil
	}
	if b, err := os.ReadFile(s.o.ProcRoot + "/net/dev"); err == nil {
		if rx, _, err := parseNetDev(b, "lo"); err == nil {
			sm.lo, sm.loOK = rx, true
		}
	}
	if len(s.devs) > 0 {
		if b, err := os.ReadFile(s.o.ProcRoot + "/diskstats"); err == nil {
			if m, err := parseDiskstatsWritten(b, s.devs); err == nil {
				for _, v := range m {
					sm.sectors += v
				}
				sm.diskOK = true
			}
		}
	}
	if b, err := os.ReadFile(s.o.ProcRoot + "/stat"); err == nil {
		if h, err := parseProcStat(b); err == nil {
			sm.host, sm.hostOK = h, true
		}
	}
	sm.toolOK = len(s.o.ToolPids) > 0
	for _, pid := range s.o.ToolPids {
		c, err := procCPUSeconds(s.o.ProcRoot, pid)
		sm.tool += c
		sm.toolOK = sm.toolOK && err == nil
	}
	sm.at = time.Now()
	s.mu.Lock()
	s.samples = append(s.samples, sm)
	s.mu.Unlock()
}

// Window computes the report for [start, end] (the measured phase). The
// sampler must have run across the whole window.
func (s *LocalSampler) Window(start, end time.Time) (*Report, error) {
	s.mu.Lock()
	samples := append([]sample(nil), s.samples...)
	s.mu.Unlock()
	if !end.After(start) {
		return nil, fmt.Errorf("broker resources: window end %s is not after its start %s", end.Format(time.RFC3339Nano), start.Format(time.RFC3339Nano))
	}
	if len(samples) < 2 || samples[0].at.After(start) || samples[len(samples)-1].at.Before(end) {
		return nil, fmt.Errorf("broker resources: the samples (%d) do not cover the window %s..%s; start the sampler before the load and stop it after", len(samples), start.Format(time.RFC3339), end.Format(time.RFC3339))
	}
	secs := end.Sub(start).Seconds()
	r := &Report{Source: SourceProc, Start: start, End: end, Seconds: secs}
	for i, p := range s.o.Processes {
		b := Broker{Name: p.Name}
		cpu0, ok0 := interp(samples, start, func(sm sample) (float64, bool) { return sm.cpu[i], sm.ok[i] })
		cpu1, ok1 := interp(samples, end, func(sm sample) (float64, bool) { return sm.cpu[i], sm.ok[i] })
		w0, _ := interp(samples, start, func(sm sample) (float64, bool) { return float64(sm.written[i]), sm.ok[i] })
		w1, _ := interp(samples, end, func(sm sample) (float64, bool) { return float64(sm.written[i]), sm.ok[i] })
		if ok0 && ok1 {
			b.CPUCores = f((cpu1 - cpu0) / secs)
			wb := int64(w1 - w0)
			b.DiskWriteBytes = &wb
			b.DiskWriteMBPerSec = f((w1 - w0) / secs / 1e6)
		} else {
			r.Notes = append(r.Notes, fmt.Sprintf("%s (pid %d): /proc/%d/stat or io could not be read across the window (did the process exit?)", p.Name, p.Pid, p.Pid))
		}
		if gib, ok := meanRSS(samples, start, end, i); ok {
			b.MemoryGiB = f(gib)
		} else {
			r.Notes = append(r.Notes, fmt.Sprintf("%s (pid %d): /proc/%d/status VmRSS was not read inside the window: no memory figure", p.Name, p.Pid, p.Pid))
		}
		if p.GCLog != "" {
			ms, n, err := GCPauses(p.GCLog, start, end)
			if err != nil {
				r.Notes = append(r.Notes, fmt.Sprintf("%s: GC log: %v", p.Name, err))
			} else {
				b.GCPauseMs, b.GCPauses = f(ms), &n
			}
		}
		r.Brokers = append(r.Brokers, b)
	}
	h := &Host{Devices: s.devName}
	// rate is a counter's growth per second over the window; nil when a
	// sample at either end lacks it.
	rate := func(get func(sample) (float64, bool)) *float64 {
		v0, ok0 := interp(samples, start, get)
		v1, ok1 := interp(samples, end, get)
		if !ok0 || !ok1 {
			return nil
		}
		return f((v1 - v0) / secs)
	}
	scaled := func(v *float64, by float64) *float64 {
		if v == nil {
			return nil
		}
		return f(*v * by)
	}
	h.LoopbackMBPerSec = scaled(rate(func(sm sample) (float64, bool) { return float64(sm.lo), sm.loOK }), 1/1e6)
	h.DiskWriteMBPerSec = scaled(rate(func(sm sample) (float64, bool) { return float64(sm.sectors), sm.diskOK }), sectorBytes/1e6)
	if busy := rate(func(sm sample) (float64, bool) { return sm.host.busy, sm.hostOK }); busy != nil {
		h.CPUs = samples[len(samples)-1].host.cpus
		h.CPUBusyCores = busy
	}
	h.ToolCPUCores = rate(func(sm sample) (float64, bool) { return sm.tool, sm.toolOK })
	r.Host = h
	r.totals()
	h.JudgeCPU(r.Total.CPUCores)
	r.Notes = append(r.Notes, s.errs...)
	r.Notes = append(r.Notes,
		"local mode: CPU is utime+stime of each broker JVM (/proc/<pid>/stat); disk write is the bytes each JVM dirtied for storage (/proc/<pid>/io write_bytes - cancelled_write_bytes), so page-cache writes count before they reach the disk, and a page re-dirtied after an fsync counts again",
		"local mode: memory is each broker JVM's resident set (/proc/<pid>/status VmRSS) averaged over the samples inside the window: heap, metaspace, direct buffers and thread stacks the JVM touched; the page cache it fills is not in it",
		"local mode: network in/out per broker is not measured: brokers and workers talk over the loopback interface, whose counter (host.loopbackMBPerSec) is shared by every process on the machine and cannot be split by process",
		"local mode: host.diskWriteMBPerSec is /proc/diskstats of the data directories' devices: everything written to them, by any process")
	r.Notes = append(r.Notes, s.o.Notes...)
	return r, nil
}

// interp is a counter at t, linear between the samples around it; false
// when either sample lacks it.
func interp(samples []sample, t time.Time, get func(sample) (float64, bool)) (float64, bool) {
	j := sort.Search(len(samples), func(i int) bool { return !samples[i].at.Before(t) })
	if j == len(samples) {
		return 0, false
	}
	b := samples[j]
	vb, okb := get(b)
	if !okb {
		return 0, false
	}
	if j == 0 || b.at.Equal(t) {
		return vb, true
	}
	a := samples[j-1]
	va, oka := get(a)
	if !oka {
		return 0, false
	}
	span := b.at.Sub(a.at).Seconds()
	if span <= 0 {
		return vb, true
	}
	return va + (vb-va)*t.Sub(a.at).Seconds()/span, true
}

// meanRSS is process i's resident set averaged over the samples inside
// [start, end], in GiB; false when none of them read it. A gauge, not a
// counter: there is nothing to interpolate, so a window shorter than the
// sampling interval uses the sample just after it.
func meanRSS(samples []sample, start, end time.Time, i int) (float64, bool) {
	var sum float64
	n := 0
	for _, sm := range samples {
		if sm.at.Before(start) || sm.at.After(end) || i >= len(sm.rssOK) || !sm.rssOK[i] {
			continue
		}
		sum += float64(sm.rss[i])
		n++
	}
	if n == 0 {
		j := sort.Search(len(samples), func(k int) bool { return !samples[k].at.Before(end) })
		if j == len(samples) || i >= len(samples[j].rssOK) || !samples[j].rssOK[i] {
			return 0, false
		}
		return float64(samples[j].rss[i]) / (1 << 30), true
	}
	return sum / float64(n) / (1 << 30), true
}
