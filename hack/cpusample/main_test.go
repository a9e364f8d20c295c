package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLabel(t *testing.T) {
	for _, tc := range []struct {
		name    string
		comm    string
		cmdline []string
		pod     bool
		want    string
	}{
		{"a command", "compile", []string{"/usr/lib/go/pkg/tool/linux_amd64/compile", "-o", "x"}, false, "compile"},
		{"a JVM by its main class, past the classpath's value", "java",
			[]string{"java", "-Xmx1g", "-cp", "/opt/kafka/libs/*", "--add-opens", "java.base/java.lang=ALL-UNNAMED", "kafka.Kafka", "/tmp/server.properties"}, true,
			"pod java kafka.Kafka"},
		{"a jar", "java", []string{"/usr/bin/java", "-XX:TieredStopAtLevel=1", "-jar", "/opt/x/lib/app.jar", "run"}, false, "java app.jar"},
		{"the c1 wrapper's launcher is a JVM too", "java-launcher",
			[]string{"/usr/lib/jvm/java-17-openjdk-amd64/bin/java-launcher", "-XX:TieredStopAtLevel=1", "io.strimzi.operator.cluster.Main"}, true,
			"pod java io.strimzi.operator.cluster.Main"},
		{"a JVM with only options", "java", []string{"java", "-version"}, false, "java ?"},
		{"no command line (a kernel thread)", "kworker/0:1", nil, false, "kworker/0:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := label(tc.comm, tc.cmdline, tc.pod); got != tc.want {
				t.Errorf("label = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseStat(t *testing.T) {
	// A command with a space and a parenthesis, as /proc writes it.
	line := "1234 (my (odd) cmd) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 98765 1000 10 18446744073709551615"
	st, err := parseStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if st.comm != "my (odd) cmd" || st.ppid != 1 || st.ticks != 300 || st.start != 98765 {
		t.Errorf("parseStat = %+v, want comm %q, ppid 1, ticks 300, start 98765", st, "my (odd) cmd")
	}
	if _, err := parseStat("1234 no command"); err == nil {
		t.Error("a line without a command in parentheses parsed")
	}
}

// TestSamplerCountsABusyChild runs a CPU-bound child (a fixed amount of
// work, however busy the machine) and expects the sampler to give its label
// some of that CPU and never more than the child used: it reads the real
// /proc.
func TestSamplerCountsABusyChild(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Fatalf("no /proc here: %v", err)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	// Under a name of its own (the command is the name it was started
	// by), so another shell on a busy machine is not counted with it.
	busy := filepath.Join(t.TempDir(), "cpusample-busy")
	if err := os.Symlink(sh, busy); err != nil {
		t.Fatal(err)
	}
	s := newSampler()
	s.look()
	if len(s.cpu) != 0 {
		t.Errorf("the first look counted what ran before it: %v", s.cpu)
	}
	cmd := exec.Command(busy, "-c", `i=0; while [ "$i" -lt 1000000 ]; do i=$((i+1)); done`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			running = false
		case <-time.After(200 * time.Millisecond):
			s.look()
		}
	}
	used := uint64((cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()) / (time.Second / clockTicks))
	if got := s.cpu["cpusample-busy"]; got == 0 || got > used+1 {
		t.Fatalf("the busy shell got %d ticks; it used %d (labels: %v)", got, used, s.cpu)
	}
	table := s.table(100, 1000, time.Second)
	if !strings.Contains(table, "cpusample-busy ") || !strings.Contains(table, "seen ") {
		t.Errorf("table without the shell's line or the seen line:\n%s", table)
	}
}
