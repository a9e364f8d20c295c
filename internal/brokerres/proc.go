package brokerres

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// userHZ is the unit of utime and stime in /proc/<pid>/stat. The kernel
// reports them in USER_HZ, which is 100 on every Linux architecture Go
// supports (sysconf(_SC_CLK_TCK) would need cgo).
const userHZ = 100

// sectorBytes is the unit of /proc/diskstats' sector counts, 512 bytes
// whatever the device's real sector size.
const sectorBytes = 512

// procCPUSeconds is user+system CPU time of every thread of pid.
func procCPUSeconds(procRoot string, pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("%s/%d/stat", procRoot, pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(b)
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a
// /proc/<pid>/stat line. The command name (field 2) is in parentheses and
// may itself hold spaces and parentheses, so fields are counted after the
// last ')'.
func parseStatCPU(b []byte) (float64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("no ')' in /proc/<pid>/stat %q", b)
	}
	fs := strings.Fields(string(b[i+1:]))
	// fs[0] is field 3 (state), so field n is fs[n-3].
	if len(fs) < 13 {
		return 0, fmt.Errorf("/proc/<pid>/stat has %d fields after the name, want at least 13", len(fs))
	}
	ut, err1 := strconv.ParseUint(fs[11], 10, 64)
	st, err2 := strconv.ParseUint(fs[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/<pid>/stat utime %q stime %q: not numbers", fs[11], fs[12])
	}
	return float64(ut+st) / userHZ, nil
}

// hostCPU is the machine's CPU time from /proc/stat's "cpu" line, in
// seconds summed over CPUs: busy (user, nice, system, irq, softirq,
// steal; guest time is inside user) and all (busy plus idle and iowait);
// and the number of CPUs (its "cpuN" lines).
type hostCPU struct {
	busy, all float64
	cpus      int
}

func parseProcStat(b []byte) (hostCPU, error) {
	var h hostCPU
	found := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || !strings.HasPrefix(fs[0], "cpu") {
			continue
		}
		if fs[0] != "cpu" {
			h.cpus++
			continue
		}
		if len(fs) < 9 {
			return h, fmt.Errorf("/proc/stat cpu line has %d fields, want at least 9 (user .. steal)", len(fs))
		}
		var v [8]float64
		for i := range v {
			n, err := strconv.ParseUint(fs[1+i], 10, 64)
			if err != nil {
				return h, fmt.Errorf("/proc/stat cpu field %d %q: not a number", i+1, fs[1+i])
			}
			v[i] = float64(n) / userHZ
		}
		user, nice, system, idle, iowait, irq, softirq, steal := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
		h.busy = user + nice + system + irq + softirq + steal
		h.all = h.busy + idle + iowait
		found = true
	}
	if !found || h.cpus == 0 {
		return h, fmt.Errorf("/proc/stat has no cpu lines")
	}
	return h, nil
}

// procWriteBytes is what pid caused to be written to storage:
// write_bytes (counted when a page is dirtied, so page-cache writes count
// before writeback) less cancelled_write_bytes (dirty pages truncated
// before they were written).
func procWriteBytes(procRoot string, pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("%s/%d/io", procRoot, pid))
	if err != nil {
		return 0, err
	}
	return parseIOWrite(b)
}

func parseIOWrite(b []byte) (int64, error) {
	var w, c int64
	seen := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "write_bytes":
			w, seen = n, seen+1
		case "cancelled_write_bytes":
			c, seen = n, seen+1
		}
	}
	if seen != 2 {
		return 0, fmt.Errorf("/proc/<pid>/io has no write_bytes and cancelled_write_bytes (kernel without task I/O accounting?)")
	}
	return w - c, nil
}

// parseNetDev returns the received and transmitted bytes of iface in a
// /proc/net/dev table.
func parseNetDev(b []byte, iface string) (rx, tx int64, err error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.TrimSpace(name) != iface {
			continue
		}
		fs := strings.Fields(rest)
		if len(fs) < 9 {
			return 0, 0, fmt.Errorf("/proc/net/dev line of %s has %d fields, want 16", iface, len(fs))
		}
		rx, err1 := strconv.ParseInt(fs[0], 10, 64)
		tx, err2 := strconv.ParseInt(fs[8], 10, 64)
		if err1 != nil || err2 != nil {
			return 0, 0, fmt.Errorf("/proc/net/dev line of %s: bytes are not numbers", iface)
		}
		return rx, tx, nil
	}
	return 0, 0, fmt.Errorf("/proc/net/dev has no interface %q", iface)
}

// parseDiskstatsWritten returns the sectors written of the devices
// (major:minor) in a /proc/diskstats table.
func parseDiskstatsWritten(b []byte, devs map[string]bool) (map[string]int64, error) {
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 10 {
			continue
		}
		id := fs[0] + ":" + fs[1]
		if !devs[id] {
			continue
		}
		n, err := strconv.ParseInt(fs[9], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("/proc/diskstats %s: sectors written %q is not a number", fs[2], fs[9])
		}
		out[id] = n
	}
	for d := range devs {
		if _, ok := out[d]; !ok {
			return nil, fmt.Errorf("/proc/diskstats has no device %s", d)
		}
	}
	return out, nil
}

// diskstatsNames maps major:minor to the device names of /proc/diskstats.
func diskstatsNames(b []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 3 {
			out[fs[0]+":"+fs[1]] = fs[2]
		}
	}
	return out
}

// procRSSBytes is pid's resident set (VmRSS of /proc/<pid>/status).
func procRSSBytes(procRoot string, pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("%s/%d/status", procRoot, pid))
	if err != nil {
		return 0, err
	}
	return parseStatusRSS(b)
}

// parseStatusRSS reads "VmRSS:  123456 kB" of a /proc/<pid>/status file
// (the kernel's "kB" is KiB).
func parseStatusRSS(b []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != "VmRSS" {
			continue
		}
		fs := strings.Fields(v)
		if len(fs) != 2 || fs[1] != "kB" {
			return 0, fmt.Errorf("/proc/<pid>/status VmRSS %q: want \"<n> kB\"", strings.TrimSpace(v))
		}
		n, err := strconv.ParseInt(fs[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/<pid>/status VmRSS %q: not a number", fs[0])
		}
		return n * 1024, nil
	}
	return 0, fmt.Errorf("/proc/<pid>/status has no VmRSS (a kernel thread, or a process that exited)")
}
