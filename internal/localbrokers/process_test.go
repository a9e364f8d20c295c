package localbrokers

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestFreePortsAreDistinctAndFree(t *testing.T) {
	ports, err := FreePorts(50)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("port %d is not free: %v", p, err)
		}
		l.Close()
	}
}

func TestWaitPortReportsEarlyExitWithLog(t *testing.T) {
	dir := t.TempDir()
	p, err := StartJVM(JVM{Name: "nomain", Classpath: dir, Main: "no.such.Main", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	err = p.WaitPort(context.Background(), "127.0.0.1:1", time.Minute)
	if err == nil || !strings.Contains(err.Error(), "nomain exited") || !strings.Contains(err.Error(), "no.such.Main") {
		t.Fatalf("want an early-exit error with the log tail naming the class, got %v", err)
	}
}

// listener is a Java program that listens on a port; with "hang" its
// shutdown hook never returns, so only SIGKILL ends it.
const listener = `
public class Listener {
  public static void main(String[] a) throws Exception {
    if (a.length > 1) Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try { Thread.sleep(600000); } catch (InterruptedException e) {}
    }));
    java.net.ServerSocket s = new java.net.ServerSocket(Integer.parseInt(a[0]), 50, java.net.InetAddress.getLoopbackAddress());
    System.out.println("listening");
    while (true) s.accept().close();
  }
}
`

func TestStartJVMWaitPortAndStop(t *testing.T) {
	for _, hang := range []bool{false, true} {
		name := "sigterm"
		if hang {
			name = "sigkill after grace"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "Listener.java")
			if err := os.WriteFile(src, []byte(listener), 0o644); err != nil {
				t.Fatal(err)
			}
			port, err := FreePort()
			if err != nil {
				t.Fatal(err)
			}
			args := []string{strconv.Itoa(port)}
			if hang {
				args = append(args, "hang")
			}
			// Source-file mode: java compiles Listener.java in memory.
			p, err := StartJVM(JVM{Name: "listener", Classpath: dir, Main: src, Args: args, Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop(time.Second)
			if err := p.WaitPort(context.Background(), "127.0.0.1:"+strconv.Itoa(port), 2*time.Minute); err != nil {
				t.Fatal(err)
			}
			if !PidAlive(p.Pid) {
				t.Fatal("pid not alive while listening")
			}
			start := time.Now()
			if err := p.Stop(2 * time.Second); err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			if PidAlive(p.Pid) {
				t.Fatalf("pid %d alive after Stop", p.Pid)
			}
			// The hanging hook can only have been ended by SIGKILL, which
			// comes after the grace period.
			if hang && took < 2*time.Second {
				t.Fatalf("hanging JVM stopped after %s, before the grace period: SIGKILL came early", took)
			}
			if err := p.Stop(time.Second); err != nil {
				t.Fatalf("second Stop: %v", err)
			}
			if !strings.Contains(p.LogTail(1000), "listening") {
				t.Errorf("stdout did not reach the log file: %q", p.LogTail(1000))
			}
		})
	}
}
