package localbrokers

import (
	"archive/zip"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestClassArchiveKey(t *testing.T) {
	dir := t.TempDir()
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("%v: %v", err, CheckJava())
	}
	write := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := write("a.jar"), write("b.jar")
	cp := a + string(os.PathListSeparator) + b
	base, err := classArchiveKey(java, cp, "x.Main")
	if err != nil {
		t.Fatal(err)
	}
	same, err := classArchiveKey(java, cp, "x.Main")
	if err != nil || same != base {
		t.Fatalf("the same JVM, jars and main class gave keys %q and %q (%v)", base, same, err)
	}
	for _, tc := range []struct {
		name  string
		cp    string
		main  string
		touch string
	}{
		{name: "another main class", cp: cp, main: "x.Other"},
		{name: "the jars in another order", cp: b + string(os.PathListSeparator) + a, main: "x.Main"},
		{name: "a jar written again", cp: cp, main: "x.Main", touch: b},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.touch != "" {
				later := time.Now().Add(time.Hour)
				if err := os.Chtimes(tc.touch, later, later); err != nil {
					t.Fatal(err)
				}
			}
			k, err := classArchiveKey(java, tc.cp, tc.main)
			if err != nil {
				t.Fatal(err)
			}
			if k == base {
				t.Errorf("key %q unchanged: a JVM would find an archive it refuses", k)
			}
		})
	}
	for _, bad := range []string{dir, filepath.Join(dir, "missing.jar")} {
		if k, err := classArchiveKey(java, bad, "x.Main"); err == nil {
			t.Errorf("classpath %s: key %q, want an error (a directory or a missing jar cannot be archived)", bad, k)
		}
	}
}

// The class archive through StartJVM on a real JVM: a JVM with an agent,
// killed or failing leaves none, the first that ends on SIGTERM writes it, and the
// next maps its classes from it (the JVM's class-load log says where each
// class came from).
func TestStartJVMSharesClassesThroughAnArchive(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("STREAMBENCH_CACHE", cache)
	t.Setenv("STREAMBENCH_JVM_CDS", "")
	dir := t.TempDir()
	jar := listenerJar(t, dir)
	archives := func() []string {
		m, _ := filepath.Glob(filepath.Join(cache, "cds", "*.jsa"))
		return m
	}
	agent := agentJar(t, dir)
	var jvmExtra []string
	start := func(name string, args ...string) *Process {
		t.Helper()
		p, err := StartJVM(JVM{Name: name, Classpath: jar, Main: "Listener", Args: args, Dir: dir,
			JVMArgs: append(append(append([]string{}, DefaultJVMArgs...), "-Xlog:class+load=info"), jvmExtra...)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Stop(time.Second) })
		return p
	}
	listen := func(name string, hang bool) *Process {
		t.Helper()
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		args := []string{strconv.Itoa(port)}
		if hang {
			args = append(args, "hang")
		}
		p := start(name, args...)
		if err := p.WaitPort(context.Background(), "127.0.0.1:"+strconv.Itoa(port), 2*time.Minute); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// A JVM with an agent refuses to start while writing an archive: it
	// starts without one (the monitoring test's Kafka nodes carry the JMX
	// exporter's agent).
	jvmExtra = []string{"-javaagent:" + agent}
	withAgent := listen("agent", false)
	if err := withAgent.Stop(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	if log := withAgent.LogTail(1 << 20); !strings.Contains(log, "agent loaded") {
		t.Errorf("the agent did not run; log:\n%s", tail(log, 2000))
	}
	jvmExtra = nil

	failed := start("failed", "not-a-port")
	<-failed.done
	killed := listen("killed", true)
	if err := killed.Stop(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	if a := archives(); len(a) != 0 {
		t.Fatalf("archives %v kept after a JVM with an agent, one that failed and one killed by SIGKILL", a)
	}

	first := listen("first", false)
	if err := first.Stop(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	if a := archives(); len(a) != 1 {
		t.Fatalf("archives after a JVM ended by SIGTERM: %v, want one; its log:\n%s", a, first.LogTail(2000))
	}
	if log := first.LogTail(1 << 20); !strings.Contains(log, "Listener source: file:") {
		t.Errorf("the first JVM did not load Listener from its jar; log:\n%s", tail(log, 2000))
	}

	second := listen("second", false)
	if err := second.Stop(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	if log := second.LogTail(1 << 20); !strings.Contains(log, "Listener source: shared objects file") {
		t.Errorf("the second JVM did not map Listener from the archive; log:\n%s", tail(log, 2000))
	}
}

// agent is a Java agent that says it ran.
const agent = `
public class Agent {
  public static void premain(String args) { System.out.println("agent loaded"); }
}
`

// listenerJar compiles the listener program into dir/listener.jar: a class
// archive holds classes from jars only.
func listenerJar(t *testing.T, dir string) string {
	return javaJar(t, dir, "Listener", listener, "")
}

// agentJar compiles the agent into dir/agent.jar, its manifest naming it.
func agentJar(t *testing.T, dir string) string {
	return javaJar(t, dir, "Agent", agent, "Manifest-Version: 1.0\r\nPremain-Class: Agent\r\n\r\n")
}

// javaJar compiles one class's source into dir/<lower-case name>.jar, with
// manifest when it is not empty.
func javaJar(t *testing.T, dir, class, source, manifest string) string {
	t.Helper()
	src := filepath.Join(dir, class+".java")
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	classes := filepath.Join(dir, class+"-classes")
	if out, err := exec.Command("javac", "-d", classes, src).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	jar := filepath.Join(dir, strings.ToLower(class)+".jar")
	f, err := os.Create(jar)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	if manifest != "" {
		w, err := zw.Create("META-INF/MANIFEST.MF")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(manifest)); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(classes)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(classes, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return jar
}
