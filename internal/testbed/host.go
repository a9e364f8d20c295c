package testbed

import (
	"bufio"
	"os"
	"strconv"
	"strings"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// Host reads the node's CPU model and count, memory and kernel from /proc
// (in a container these are the node's, not the container's limits: the
// figures describe the machine the brokers share). Fields that cannot be
// read stay empty.
func Host(node string) v1alpha1.NodeProbe {
	out := v1alpha1.NodeProbe{Node: node}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		out.CPUModel, out.CPUs = ParseCPUInfo(string(b))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		out.MemoryBytes = ParseMemTotal(string(b))
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		out.Kernel = strings.TrimSpace(string(b))
	}
	return out
}

// ParseCPUInfo returns the first CPU model and the number of logical CPUs
// of /proc/cpuinfo. x86 names the model "model name"; arm64 has none, and
// its "CPU part" is the closest thing.
func ParseCPUInfo(s string) (model string, cpus int32) {
	var part string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "processor":
			cpus++
		case "model name", "Model", "cpu model":
			if model == "" {
				model = v
			}
		case "CPU part":
			if part == "" {
				part = "CPU part " + v
			}
		}
	}
	if model == "" {
		model = part
	}
	return model, cpus
}

// ParseMemTotal returns MemTotal of /proc/meminfo in bytes (the file says
// kB and means KiB).
func ParseMemTotal(s string) int64 {
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kib, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0
			}
			return kib * 1024
		}
	}
	return 0
}
