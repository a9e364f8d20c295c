// Command localbrokers starts and stops real local brokers (JVM processes
// from Maven Central jars) in the background for manual runs; it is what
// hack/local-brokers.sh runs:
//
//	go run ./hack/localbrokers kafka start --brokers 3 --level 2 --dir bin/local-kafka
//	go run ./hack/localbrokers kafka status --dir bin/local-kafka
//	go run ./hack/localbrokers kafka stop --dir bin/local-kafka
//
// start writes the pids to <dir>/pids and each endpoint to <dir>/<name>
// (Kafka: <dir>/bootstrap); stop ends exactly those pids. A system is one
// file that adds itself to systems.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/localbrokers"
)

// startOptions are the flags every system's start understands.
type startOptions struct {
	Dir     string
	Brokers int
	// Level is the durability level whose broker settings are applied; 0
	// means the brokers' own defaults.
	Level   v1alpha1.Level
	Version string
	// Secure opens secured client listeners beside the plaintext one
	// (kafka: SSL and SASL_SSL with SCRAM-SHA-512), with a CA, the
	// brokers' certificate and a user made under <dir>/tls, and writes
	// <dir>/secrets.yaml: the Secret a run names, for streambench run
	// --secrets.
	Secure bool
	Log    func(format string, args ...any)
}

// started is what a system's start leaves running.
type started struct {
	Pids []int
	// Endpoints by name (a file name under dir), e.g. "bootstrap".
	Endpoints map[string]string
}

// system starts one messaging system detached (its JVMs outlive this
// process); stop and status are generic over the recorded pids.
type system struct {
	start          func(ctx context.Context, o startOptions) (started, error)
	defaultBrokers int
}

var systems = map[string]system{}

const pidsFile = "pids"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "localbrokers:", err)
		os.Exit(1)
	}
}

func usage() error {
	names := make([]string, 0, len(systems))
	for n := range systems {
		names = append(names, n)
	}
	sort.Strings(names)
	return fmt.Errorf("usage: localbrokers <%s> <start|stop|status> [--dir DIR] [--brokers N] [--level 1-4] [--version V] [--secure]", strings.Join(names, "|"))
}

func run(args []string) error {
	if len(args) < 2 {
		return usage()
	}
	name, action := args[0], args[1]
	sys, ok := systems[name]
	if !ok {
		return usage()
	}
	fs := flag.NewFlagSet(name+" "+action, flag.ContinueOnError)
	dir := fs.String("dir", filepath.Join("bin", "local-"+name), "directory for pids, endpoints, data and logs")
	brokers := fs.Int("brokers", sys.defaultBrokers, "number of broker nodes")
	level := fs.Int("level", 0, "durability level 1-4 whose broker settings to apply (0: broker defaults)")
	version := fs.String("version", "", "broker version on Maven Central (default: the package's default)")
	secure := fs.Bool("secure", false, "also open secured client listeners (kafka: SSL and SASL_SSL SCRAM-SHA-512) and write DIR/secrets.yaml")
	if err := fs.Parse(args[2:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch action {
	case "start":
		if *level < 0 || *level > 4 {
			return fmt.Errorf("--level %d: want 1-4, or 0 for the brokers' defaults", *level)
		}
		return start(sys, startOptions{Dir: *dir, Brokers: *brokers, Level: v1alpha1.Level(*level), Version: *version, Secure: *secure})
	case "stop":
		return stop(*dir)
	case "status":
		return status(*dir)
	default:
		return usage()
	}
}

func start(sys system, o startOptions) error {
	if pids, _ := readPids(o.Dir); len(alive(pids)) > 0 {
		return fmt.Errorf("%s already has running processes %v; run stop first", o.Dir, alive(pids))
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return err
	}
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return err
	}
	o.Dir = abs
	o.Log = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	// Ctrl-C during start: the system's start stops what it started.
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	s, err := sys.start(ctx, o)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, p := range s.Pids {
		fmt.Fprintln(&b, p)
	}
	if err := os.WriteFile(filepath.Join(o.Dir, pidsFile), []byte(b.String()), 0o644); err != nil {
		return errors.Join(err, stopPids(s.Pids))
	}
	for n, v := range s.Endpoints {
		if err := os.WriteFile(filepath.Join(o.Dir, n), []byte(v+"\n"), 0o644); err != nil {
			return errors.Join(err, stopPids(s.Pids))
		}
		fmt.Printf("%s=%s\n", n, v)
	}
	return nil
}

func stop(dir string) error {
	pids, err := readPids(dir)
	if err != nil {
		if os.IsNotExist(err) {
			fmt.Fprintf(os.Stderr, "nothing to stop: no %s\n", filepath.Join(dir, pidsFile))
			return nil
		}
		return err
	}
	if err := stopPids(pids); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "stopped %v\n", pids)
	return os.Remove(filepath.Join(dir, pidsFile))
}

func stopPids(pids []int) error {
	var errs []error
	// Reverse order: brokers first, the controller (first pid) last.
	for i := len(pids) - 1; i >= 0; i-- {
		errs = append(errs, localbrokers.StopPid(pids[i], localbrokers.StopGrace))
	}
	return errors.Join(errs...)
}

func status(dir string) error {
	pids, err := readPids(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return fmt.Errorf("not running: no %s", filepath.Join(dir, pidsFile))
		}
		return err
	}
	up := alive(pids)
	for _, p := range pids {
		state := "stopped"
		if localbrokers.PidAlive(p) {
			state = "running"
		}
		fmt.Printf("pid %d %s\n", p, state)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name() != pidsFile && !strings.Contains(e.Name(), ".") {
			if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
				fmt.Printf("%s=%s\n", e.Name(), strings.TrimSpace(string(b)))
			}
		}
	}
	if len(up) != len(pids) {
		return fmt.Errorf("%d of %d processes are running; see the logs under %s", len(up), len(pids), dir)
	}
	return nil
}

func readPids(dir string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(dir, pidsFile))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		p, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%s: bad pid %q", filepath.Join(dir, pidsFile), f)
		}
		pids = append(pids, p)
	}
	return pids, nil
}

func alive(pids []int) []int {
	var up []int
	for _, p := range pids {
		if localbrokers.PidAlive(p) {
			up = append(up, p)
		}
	}
	return up
}
