package brokerres

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPauseCollectors runs a real JVM with each collector this machine's
// Java has, makes garbage, and reads its collector beans: every bean the
// GC pause figure counts must be one the JVM has, and ZGC's "Cycles" bean,
// which the figure leaves out, must time more than its "Pauses" bean for
// the same garbage (it times the concurrent cycle, not the pauses).
// Generational ZGC (JDK 21's "ZGC Minor/Major Cycles" and "Pauses") and
// G1's "G1 Concurrent GC" (JDK 20+) are not on this machine's JDK 17: the
// names are matched by the same rule (TestIsPauseCollector).
func TestPauseCollectors(t *testing.T) {
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("no java on PATH: %v", err)
	}
	src := filepath.Join("testdata", "GCBeans.java")
	pause := map[string]bool{}
	for _, gc := range []string{"UseSerialGC", "UseParallelGC", "UseG1GC", "UseZGC"} {
		out, err := exec.Command(java, "-XX:+"+gc, "-Xmx256m", src).CombinedOutput()
		if err != nil {
			t.Fatalf("java -XX:+%s %s: %v\n%s", gc, src, err, out)
		}
		times := map[string]int64{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Split(line, "\t")
			if len(f) != 3 {
				t.Fatalf("-XX:+%s: line %q", gc, line)
			}
			ms, _ := strconv.ParseInt(f[2], 10, 64)
			times[f[0]] = ms
			pause[f[0]] = IsPauseCollector(f[0])
		}
		t.Logf("-XX:+%s: %v", gc, times)
		if gc == "UseZGC" {
			cycles, okc := times["ZGC Cycles"]
			pauses, okp := times["ZGC Pauses"]
			if !okc || !okp {
				t.Fatalf("ZGC's beans: %v, want ZGC Cycles and ZGC Pauses", times)
			}
			if cycles <= pauses {
				t.Errorf("ZGC Cycles %d ms, Pauses %d ms: the Cycles bean did not time more than the pauses", cycles, pauses)
			}
		}
	}
	for name, counted := range pause {
		want := !strings.Contains(name, "Cycles")
		if counted != want {
			t.Errorf("bean %q: counted as pause %v, want %v", name, counted, want)
		}
	}
}

func TestIsPauseCollector(t *testing.T) {
	for name, want := range map[string]bool{
		"Copy": true, "MarkSweepCompact": true, "PS Scavenge": true, "PS MarkSweep": true,
		"G1 Young Generation": true, "G1 Old Generation": true, "G1 Concurrent GC": false,
		"ZGC Cycles": false, "ZGC Pauses": true,
		"ZGC Minor Cycles": false, "ZGC Minor Pauses": true, "ZGC Major Cycles": false, "ZGC Major Pauses": true,
		"Shenandoah Cycles": false, "Shenandoah Pauses": true,
	} {
		if got := IsPauseCollector(name); got != want {
			t.Errorf("IsPauseCollector(%q) = %v, want %v", name, got, want)
		}
	}
}
