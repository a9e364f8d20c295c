package pulsar

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/internal/localbrokers"
)

// TestImageZKReadAnswersAsTheJVMTools checks the Pulsar image's
// hack/images/pulsar/bin/zk-read.py, which answers the Pulsar chart's
// wait-loop questions (zookeeper-shell get and ls, bookkeeper shell
// whatisinstanceid) without a JVM start: on a real ZooKeeper, each question
// gets the exit status the JVM tool it stands in for gives, the tool run on
// the same question from the same jars. It lives here because this package
// already runs a Pulsar standalone, whose ZooKeeper holds a real cluster's
// metadata and BookKeeper's INSTANCEID.
func TestImageZKReadAnswersAsTheJVMTools(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("python3 is needed to run the Pulsar image's bin/zk-read.py: %v", err)
	}
	p := needPulsar(t)
	script, err := filepath.Abs("../../../hack/images/pulsar/bin/zk-read.py")
	if err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(localbrokers.CacheDir(), "pulsar-"+p.Version, "lib")
	zk := "127.0.0.1:" + strconv.Itoa(p.ZooKeeperPort)
	closed := "127.0.0.1:" + strconv.Itoa(closedPort(t))
	dir := t.TempDir()
	// java runs a JVM tool from the standalone's jars.
	java := func(main string, args ...string) (int, string) {
		return exitStatus(t, "java", append([]string{"-XX:TieredStopAtLevel=1", "-Xmx128m", "-cp", lib + "/*", main}, args...)...)
	}
	conf := func(name, body string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	// The chart's bookkeeper.conf names the ledgers root by
	// metadataServiceUri (zk+hierarchical://, its default: _bookkeeper.tpl),
	// upstream's by zkServers and zkLedgersRootPath. The standalone's
	// bookies registered under /ledgers without an INSTANCEID (no
	// initnewcluster), and BookieShell answers by the root: it says
	// "InstanceId: null" and exits 0 there.
	hier := conf("hier.conf", "metadataServiceUri=zk+hierarchical://"+zk+"/ledgers\n")
	servers := conf("servers.conf", "# as upstream writes it\nzkServers="+zk+"\nzkLedgersRootPath=/ledgers\n")
	noRoot := conf("noroot.conf", "metadataServiceUri=zk+hierarchical://"+zk+"/nowhere/ledgers\n")
	unreachable := conf("unreachable.conf", "metadataServiceUri=zk+hierarchical://"+closed+"/ledgers\n")

	// Every case was run against the JVM tool when this was written, and
	// agreed (a root with an INSTANCEID too). Each JVM start costs 2
	// CPU-s, 10-20 s on a busy machine, and BookieShell retries an
	// unreachable server for 10 s: the test keeps the comparisons that
	// decide a wait loop's answer (jvm), one for each way it can go.
	shell := func(args ...string) []string { return append([]string{"zookeeper-shell"}, args...) }
	cases := []struct {
		name  string
		args  []string // zk-read.py's, after the script
		found bool
		jvm   bool // also asked of the JVM tool
	}{
		{"get of the cluster's znode", shell("-r", "-server", zk, "get", "/admin/clusters/standalone"), true, true},
		{"get of a missing znode", shell("-r", "-server", zk, "get", "/admin/clusters/nowhere"), false, true},
		{"ls of the root", shell("-server", zk, "ls", "/"), true, false},
		{"ls of a missing znode", shell("-server", zk, "ls", "/nowhere"), false, false},
		{"get from an unreachable server", shell("-r", "-server", closed, "get", "/"), false, false},
		{"whatisinstanceid, zk+hierarchical, a root without an INSTANCEID", []string{"whatisinstanceid", hier}, true, true},
		{"whatisinstanceid, zkServers", []string{"whatisinstanceid", servers}, true, false},
		{"whatisinstanceid, no such root", []string{"whatisinstanceid", noRoot}, false, true},
		{"whatisinstanceid, unreachable", []string{"whatisinstanceid", unreachable}, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, out := exitStatus(t, "python3", append([]string{script}, c.args...)...)
			want := 1
			if c.found {
				want = 0
			}
			if got != want {
				t.Fatalf("zk-read.py %v: exit %d, want %d; output:\n%s", c.args, got, want, out)
			}
			if !c.jvm {
				return
			}
			// The JVM tool on the same question.
			var jvm []string
			if c.args[0] == "zookeeper-shell" {
				jvm = append([]string{"org.apache.zookeeper.ZooKeeperMain"}, c.args[1:]...)
			} else {
				jvm = []string{"org.apache.bookkeeper.bookie.BookieShell", "-conf", c.args[1], "whatisinstanceid"}
			}
			tool, toolOut := java(jvm[0], jvm[1:]...)
			if (tool == 0) != c.found {
				t.Fatalf("the JVM tool %s: exit %d, and zk-read.py %d: the case's expectation is wrong; its output:\n%s", jvm[0], tool, got, toolOut)
			}
		})
	}

	t.Run("questions it does not answer are passed to the JVM tool", func(t *testing.T) {
		for _, args := range [][]string{
			shell("-server", zk, "create", "/x"),
			shell("-server", zk, "get", "-s", "/"),
			shell("-server", zk, "-client-configuration", "f", "get", "/"),
			// Pulsar's metadata driver, which the JVM tool loads only when
			// named in the JVM's options.
			{"whatisinstanceid", conf("store.conf", "metadataServiceUri=metadata-store:zk:"+zk+"/streambench-zkread\n")},
			{"whatisinstanceid", conf("oxia.conf", "metadataServiceUri=metadata-store:oxia://oxia:6648/bookkeeper\n")},
			{"listbookies", hier},
		} {
			if got, out := exitStatus(t, "python3", append([]string{script}, args...)...); got != 3 {
				t.Errorf("zk-read.py %v: exit %d, want 3 (run the JVM tool); output:\n%s", args, got, out)
			}
		}
		cmd := exec.Command("python3", script, "zookeeper-shell", "-server", zk, "get", "/")
		cmd.Env = append(os.Environ(), "PULSAR_EXTRA_OPTS=-Dzookeeper.client.secure=true")
		if err := cmd.Run(); exitCode(err) != 3 {
			t.Errorf("with TLS to ZooKeeper: %v, want exit 3 (run the JVM tool)", err)
		}
	})
}

// exitStatus runs name args with a 60 s bound and returns its exit status
// and combined output.
func exitStatus(t *testing.T, name string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s %v did not end in a minute; output:\n%s", name, args, out)
	}
	code := exitCode(err)
	if code < 0 {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return code, string(out)
}

// exitCode is err's exit status: 0 for nil, -1 when the command did not run.
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

// closedPort is a local port nothing listens on: reserved for this process
// (localbrokers.FreePort), so no other test binds it meanwhile.
func closedPort(t *testing.T) int {
	t.Helper()
	port, err := localbrokers.FreePort()
	if err != nil {
		t.Fatalf("a free port: %v", err)
	}
	return port
}
