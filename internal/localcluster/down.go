package localcluster

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Down stops the cluster: pods first, through the kubelets, so the CRI
// tears down their network (CNI DEL) and volumes; then every action's undo
// in reverse; then whatever is left (shims, mounts, network namespaces,
// iptables chains) and the cluster's data. Certificates, images and
// binaries stay.
func (c *Cluster) Down(ctx context.Context) error {
	if err := NeedRoot(); err != nil {
		return err
	}
	if !exists(c.State) {
		Logf("nothing to stop (no %s)", c.State)
		for _, n := range c.Nodes {
			c.downBridge(n)
		}
		c.cleanupIPTables()
		return nil
	}
	c.drain()
	acts := c.actions()
	for i := len(acts) - 1; i >= 0; i-- {
		if acts[i].undo != nil {
			acts[i].undo(ctx)
		}
	}
	c.stopShims()
	c.cleanupMounts()
	c.cleanupIPTables()
	// Fresh cluster data every time.
	rm := []string{filepath.Join(c.State, "etcd"), filepath.Join(c.State, "apiserver"), c.RunDir, c.DataDir,
		filepath.Join(c.State, "netns-before"), recordPath(c.State)}
	for _, n := range c.Nodes {
		rm = append(rm, filepath.Join(n.Dir, "containerd", "root"), n.KubeletRoot,
			filepath.Join(n.Dir, "kubelet", "pod-logs"), n.CNIIPAMDir())
	}
	// What the one-node script kept directly under the state dir.
	for _, old := range []string{"containerd/root", "kubelet/root", "kubelet/pod-logs", "cni/ipam"} {
		rm = append(rm, filepath.Join(c.State, old))
	}
	for _, p := range rm {
		if err := os.RemoveAll(p); err != nil {
			Logf("could not remove %s: %v", p, err)
		}
	}
	if left := c.Leftovers(); len(left) > 0 {
		return fmt.Errorf("down left behind: %s", strings.Join(left, "; "))
	}
	Logf("down")
	return nil
}

// drain deletes every pod through the kubelets while the control plane
// still runs, and waits (up to a minute) until no node's containerd has a
// task left.
func (c *Cluster) drain() {
	kubelets := false
	for _, n := range c.Nodes {
		kubelets = kubelets || c.Alive(n.KubeletPart())
	}
	if !kubelets || !c.Alive(PartAPIServer) {
		return
	}
	c.stop(PartControllerManager)
	c.stop(PartScheduler)
	Logf("deleting every pod through the kubelets")
	_, _ = c.kubectl("delete", "pods", "--all-namespaces", "--all", "--grace-period=0", "--force", "--wait=false")
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		left := false
		for _, n := range c.Nodes {
			if out, err := ctr(n, "tasks", "ls", "-q"); err == nil && strings.TrimSpace(out) != "" {
				left = true
			}
		}
		if !left {
			return
		}
		time.Sleep(time.Second)
	}
}

// stopContainerd kills and deletes the containers its kubelet did not stop
// (e.g. it was already gone), then stops node n's containerd.
func (c *Cluster) stopContainerd(n Node) {
	if c.Alive(n.ContainerdPart()) {
		out, _ := ctr(n, "tasks", "ls", "-q")
		tasks := strings.Fields(out)
		for _, t := range tasks {
			_, _ = ctr(n, "tasks", "kill", "-s", "SIGKILL", t)
		}
		if len(tasks) > 0 {
			time.Sleep(time.Second)
		}
		for _, t := range tasks {
			_, _ = ctr(n, "tasks", "delete", "-f", t)
		}
		out, _ = ctr(n, "containers", "ls", "-q")
		for _, ctn := range strings.Fields(out) {
			_, _ = ctr(n, "containers", "delete", ctn)
		}
	}
	c.stop(n.ContainerdPart())
}

// stopShims stops the containerd-shim processes of this cluster's nodes:
// they detach from containerd, and name its socket on their command line.
func (c *Cluster) stopShims() {
	socks := map[string]bool{}
	for _, n := range c.Nodes {
		socks[n.ContainerdSocket()] = true
	}
	for _, pid := range shimsOf(socks) {
		stopPid("containerd-shim", pid, 5*time.Second)
	}
}

// shimsOf lists the pids of containerd shims whose -address is one of socks.
func shimsOf(socks map[string]bool) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) == 0 || !strings.Contains(args[0], "containerd-shim") {
			continue
		}
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "-address" && socks[args[i+1]] {
				if pid, err := strconv.Atoi(filepath.Base(d)); err == nil {
					pids = append(pids, pid)
				}
			}
		}
	}
	return pids
}

// cleanupMounts unmounts what is left under the state, run and data dirs
// (overlay root file systems, volume tmpfs), deepest first, and the network
// namespaces of pods this cluster ran.
func (c *Cluster) cleanupMounts() {
	for _, m := range c.mounts() {
		_, _ = run("umount", "-l", m)
	}
	before := map[string]bool{}
	if b, err := os.ReadFile(filepath.Join(c.State, "netns-before")); err == nil {
		for _, l := range strings.Fields(string(b)) {
			before[l] = true
		}
	} else {
		return
	}
	for _, ns := range cniNetns() {
		if before[ns] {
			continue
		}
		_, _ = run("umount", filepath.Join("/var/run/netns", ns))
		_ = os.Remove(filepath.Join("/var/run/netns", ns))
	}
}

// mounts lists the mount points under the state, run and data dirs, deepest
// first.
func (c *Cluster) mounts() []string {
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return nil
	}
	defer f.Close()
	var ms []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		// /proc/self/mounts escapes spaces as \040; our paths have none.
		m := fields[1]
		if strings.HasPrefix(m, c.State+"/") || strings.HasPrefix(m, c.RunDir+"/") || strings.HasPrefix(m, c.DataDir+"/") {
			ms = append(ms, m)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(ms)))
	return ms
}

// cniNetns lists the CNI's pod network namespaces (/var/run/netns/cni-*).
func cniNetns() []string {
	ents, _ := os.ReadDir("/var/run/netns")
	var ns []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "cni-") {
			ns = append(ns, e.Name())
		}
	}
	return ns
}

// Leftovers lists what of the cluster is still on the machine: bridges
// with a node's address, iptables lines naming a KUBE- chain, shims of the
// nodes' containerds, mounts under the state and run dirs. Down ends by
// checking it is empty.
func (c *Cluster) Leftovers() []string {
	var left []string
	for i := 0; i < MaxNodes; i++ {
		if br := fmt.Sprintf("cni%d", i); hasAddr(br, fmt.Sprintf("10.244.%d.1/24", i)) {
			left = append(left, "bridge "+br)
		}
	}
	if n := kubeChainLines(); n > 0 {
		left = append(left, fmt.Sprintf("%d iptables lines naming a KUBE- chain", n))
	}
	socks := map[string]bool{}
	for _, n := range c.Nodes {
		socks[n.ContainerdSocket()] = true
	}
	for _, pid := range shimsOf(socks) {
		left = append(left, fmt.Sprintf("containerd-shim pid %d", pid))
	}
	for _, m := range c.mounts() {
		left = append(left, "mount "+m)
	}
	return left
}
