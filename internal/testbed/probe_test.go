package testbed

import (
	"os"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/stats"
)

func TestMBPerSec(t *testing.T) {
	for _, tc := range []struct {
		bytes   int64
		elapsed time.Duration
		want    float64
	}{
		{256 << 20, 2 * time.Second, 134.2}, // MiB written, MB (10^6) reported
		{1e9, time.Second, 1000},
		{5e6, 0, 0},
		{0, time.Second, 0},
	} {
		if got := MBPerSec(tc.bytes, tc.elapsed); got != tc.want {
			t.Errorf("MBPerSec(%d, %s) = %v, want %v", tc.bytes, tc.elapsed, got, tc.want)
		}
	}
}

func TestFsyncSummary(t *testing.T) {
	h := stats.NewHistogram()
	// 990 appends at 100 µs, 9 at 5 ms, one at 40 ms: p50 0.1, p99 0.1
	// (the 990th of 1000), p99.9 5 ms, max 40 ms.
	for range 990 {
		h.RecordMicros(100)
	}
	for range 9 {
		h.RecordMicros(5000)
	}
	h.RecordMicros(40000)
	got := FsyncSummary(h, 4096)
	if got.Count != 1000 || got.AppendBytes != 4096 {
		t.Fatalf("count/appendBytes = %d/%d, want 1000/4096", got.Count, got.AppendBytes)
	}
	within := func(name string, v, want, tol float64) {
		if v < want*(1-tol) || v > want*(1+tol) {
			t.Errorf("%s = %v ms, want %v ms (±%.0f%%, HDR precision)", name, v, want, tol*100)
		}
	}
	within("p50", got.P50, 0.1, 0.01)
	within("p99", got.P99, 0.1, 0.01)
	within("p999", got.P999, 5, 0.01)
	within("max", got.Max, 40, 0.01)
}

func TestSlowest(t *testing.T) {
	vol := func(name string, p99, mbps float64) v1alpha1.VolumeProbe {
		return v1alpha1.VolumeProbe{Name: name, WriteMBPerSec: mbps, WriteBytes: 1,
			FsyncLatencyMs: v1alpha1.FsyncLatency{Count: 10, P99: p99}}
	}
	nodes := []v1alpha1.NodeProbe{
		{Node: "a", Volumes: []v1alpha1.VolumeProbe{vol("journal", 0.4, 900), vol("ledgers", 2.5, 300)}},
		{Node: "b", Volumes: []v1alpha1.VolumeProbe{vol("journal", 1.1, 1200)}},
		{Node: "c", Error: "probe Job failed"}, // not measured: not the slowest
	}
	ms, node, ok := SlowestFsyncP99(nodes)
	if !ok || ms != 2.5 || node != "a" {
		t.Errorf("SlowestFsyncP99 = %v %q %v, want 2.5 \"a\" true", ms, node, ok)
	}
	mbps, ok := SlowestWriteMBPerSec(nodes)
	if !ok || mbps != 300 {
		t.Errorf("SlowestWriteMBPerSec = %v %v, want 300 true", mbps, ok)
	}
	if _, _, ok := SlowestFsyncP99(nodes[2:]); ok {
		t.Error("SlowestFsyncP99 of unmeasured nodes reported a value")
	}
}

func TestParseCPUInfo(t *testing.T) {
	x86 := "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz\n\n" +
		"processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz\n"
	arm := "processor\t: 0\nBogoMIPS\t: 243.75\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n\nprocessor\t: 1\nCPU part\t: 0xd0c\n\nprocessor\t: 2\n"
	for _, tc := range []struct {
		name, in, model string
		cpus            int32
	}{
		{"x86", x86, "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", 2},
		{"arm64 without model name", arm, "CPU part 0xd0c", 3},
		{"empty", "", "", 0},
	} {
		model, cpus := ParseCPUInfo(tc.in)
		if model != tc.model || cpus != tc.cpus {
			t.Errorf("%s: ParseCPUInfo = %q, %d; want %q, %d", tc.name, model, cpus, tc.model, tc.cpus)
		}
	}
}

func TestParseMemTotal(t *testing.T) {
	if got := ParseMemTotal("MemTotal:        8029876 kB\nMemFree:  1 kB\n"); got != 8029876*1024 {
		t.Errorf("ParseMemTotal = %d, want %d", got, 8029876*1024)
	}
	if got := ParseMemTotal("MemFree: 1 kB\n"); got != 0 {
		t.Errorf("ParseMemTotal without MemTotal = %d, want 0", got)
	}
}

// TestProbeBounds runs the real probe on a temporary directory with tiny
// bounds: it must stop at them and clean up after itself.
func TestProbeBounds(t *testing.T) {
	dir := t.TempDir()
	// Time bounds far above the work, so only the size and count bounds
	// are reached, however slow a busy disk is.
	v, err := Probe(dir, "data", Options{WriteBytes: 3<<20 + 512, BlockBytes: 1 << 20, Appends: 25, AppendBytes: 512, WriteTime: 5 * time.Minute, AppendTime: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if v.WriteBytes != 3<<20+512 {
		t.Errorf("WriteBytes = %d, want the bound %d (the last block cut short)", v.WriteBytes, 3<<20+512)
	}
	if v.WriteMBPerSec <= 0 {
		t.Errorf("WriteMBPerSec = %v, want > 0", v.WriteMBPerSec)
	}
	if v.FsyncLatencyMs.Count != 25 || v.FsyncLatencyMs.AppendBytes != 512 {
		t.Errorf("appends = %d of %d B, want 25 of 512 B", v.FsyncLatencyMs.Count, v.FsyncLatencyMs.AppendBytes)
	}
	// In 4 rounds each: their own figures, for the disk's spread.
	if len(v.WriteRoundsMBPerSec) != 4 || len(v.FsyncLatencyMs.RoundP50s) != 4 || Spread(v.FsyncLatencyMs.RoundP50s) < 1 {
		t.Errorf("rounds: write %v, fsync p50s %v; want 4 of each", v.WriteRoundsMBPerSec, v.FsyncLatencyMs.RoundP50s)
	}
	if v.FsyncLatencyMs.Max < v.FsyncLatencyMs.P50 {
		t.Errorf("max %v < p50 %v", v.FsyncLatencyMs.Max, v.FsyncLatencyMs.P50)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 0 {
		t.Errorf("the probe left %d entries in the directory", len(left))
	}
	if _, err := Probe(dir+"/missing", "data", Options{}); err == nil {
		t.Error("Probe of a missing directory succeeded")
	}
}

func TestSpreadAndShare(t *testing.T) {
	for _, tc := range []struct {
		vs   []float64
		want float64
	}{{nil, 1}, {[]float64{0.2}, 1}, {[]float64{0.2, 0.75, 0.25}, 3.75}, {[]float64{0, 0.5, 0.25}, 2}} {
		if got := Spread(tc.vs); got != tc.want {
			t.Errorf("Spread(%v) = %v, want %v", tc.vs, got, tc.want)
		}
	}
	var sum int64
	for r := range 4 {
		sum += share(3<<20+514, 4, r)
	}
	if sum != 3<<20+514 || share(25, 4, 0) != 7 || share(25, 4, 3) != 6 {
		t.Errorf("shares add up to %d, want %d; share(25,4,0) %d, share(25,4,3) %d", sum, 3<<20+514, share(25, 4, 0), share(25, 4, 3))
	}
}
