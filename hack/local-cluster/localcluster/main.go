// Command localcluster runs a Kubernetes cluster of real nodes built from
// source on this machine (internal/localcluster); hack/local-cluster/local-cluster.sh
// builds and runs it.
//
//	up [--nodes N]   build the binaries once, start the control plane and N
//	                 nodes (a containerd, a kubelet and a bridge each; 1 by
//	                 default), wait until every node is Ready
//	down             stop everything up started, on every node: pods,
//	                 processes, bridges, iptables chains, mounts, data
//	status           each part and whether it runs, each node's state
//	packages         install only what up installs with apt-get
//	load-image       build the streambench image and import it into every node
//	load-strimzi     build Strimzi's images from source, import them
//	load-pulsar      build the Pulsar chart's image, import it
//	check-services   prove ClusterIP Services and DNS work for pods
//	check-nodes      prove the nodes are real nodes (placement, network,
//	                 logs and exec on each, a kubelet stopped alone)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/streambench/streambench-operator/internal/localcluster"
)

const usage = "usage: local-cluster.sh up [--nodes N]|down|status|packages|load-image|load-strimzi|load-pulsar|check-services|check-nodes"

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "local-cluster: %v\n", err)
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func run() error {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	cmd := os.Args[1]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	nodes := fs.Int("nodes", 0, "how many nodes up starts (default: 1, or LOCAL_CLUSTER_NODES)")
	if err := fs.Parse(os.Args[2:]); err != nil {
		os.Exit(2)
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	k8s := envOr("K8S_VERSION", "1.36.3")
	cfg := localcluster.Config{
		Root:    root,
		Bin:     envOr("LOCAL_CLUSTER_BIN_DIR", filepath.Join(root, "bin", "k8s", k8s)),
		State:   envOr("LOCAL_CLUSTER_DIR", filepath.Join(root, "bin", "local-cluster")),
		RunDir:  "/run/streambench-local-cluster",
		DataDir: "/var/lib/streambench-local-cluster",
		Versions: localcluster.Versions{
			Kubernetes: k8s,
			Etcd:       envOr("ETCD_VERSION", "3.6.16"),
			CoreDNS:    envOr("COREDNS_VERSION", "1.14.6"),
		},
		Image: envOr("E2E_IMG", "docker.io/streambench/streambench:e2e"),
	}
	for _, p := range []*string{&cfg.Bin, &cfg.State} {
		if *p, err = filepath.Abs(*p); err != nil {
			return err
		}
	}
	cfg.Nodes = nodeCount(cmd, *nodes, cfg.State)
	c, err := localcluster.New(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch cmd {
	case "up":
		return c.Up(ctx)
	case "down":
		return c.Down(ctx)
	case "status":
		return c.Status(os.Stdout)
	case "packages":
		if err := localcluster.NeedRoot(); err != nil {
			return err
		}
		return localcluster.InstallPackages(root)
	case "load-image":
		return c.LoadImage()
	case "load-strimzi":
		return c.LoadStrimzi()
	case "load-pulsar":
		return c.LoadPulsar()
	case "check-services":
		return c.CheckServices(ctx)
	case "check-nodes":
		return c.CheckNodes(ctx)
	}
	fmt.Fprintln(os.Stderr, usage)
	os.Exit(2)
	return nil
}

// nodeCount: up takes --nodes (or LOCAL_CLUSTER_NODES, else 1); every other
// command acts on the nodes the last up started (its record), or on the
// bridges a crashed up left.
func nodeCount(cmd string, flagNodes int, state string) int {
	if cmd == "up" {
		if flagNodes > 0 {
			return flagNodes
		}
		var n int
		if _, err := fmt.Sscanf(os.Getenv("LOCAL_CLUSTER_NODES"), "%d", &n); err == nil && n > 0 {
			return n
		}
		return 1
	}
	if flagNodes > 0 {
		return flagNodes
	}
	if rec, err := localcluster.LoadRecord(state); err == nil && rec.Nodes > 0 {
		return rec.Nodes
	}
	return max(1, localcluster.BridgesLeft())
}

// repoRoot is the repository this binary was started from: the wrapper
// script runs it from there.
func repoRoot() (string, error) {
	if r := os.Getenv("LOCAL_CLUSTER_ROOT"); r != "" {
		return r, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "hack", "local-cluster", "build-binaries.sh")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("run from the repository (no hack/local-cluster above %s), or set LOCAL_CLUSTER_ROOT", wd)
		}
	}
}
