package localcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// hasAddr says whether dev carries ip/prefix.
func hasAddr(dev, cidr string) bool {
	out, err := exec.Command("ip", "-o", "addr", "show", "dev", dev).Output()
	return err == nil && strings.Contains(string(out), " inet "+cidr+" ")
}

func linkExists(dev string) bool { return exec.Command("ip", "link", "show", dev).Run() == nil }

// upBridge makes node n's bridge before its kubelet starts: the node IP must
// be on a host interface, and the CNI bridge plugin reuses a bridge that has
// its gateway address.
func (c *Cluster) upBridge(n Node) error {
	if !linkExists(n.Bridge) {
		if _, err := run("ip", "link", "add", n.Bridge, "type", "bridge"); err != nil {
			return fmt.Errorf("network: cannot create bridge %s (needs CAP_NET_ADMIN): %w", n.Bridge, err)
		}
		if err := touch(c.marker("bridge-" + n.Bridge)); err != nil {
			return err
		}
	}
	if !hasAddr(n.Bridge, n.IP+"/24") {
		if _, err := run("ip", "addr", "add", n.IP+"/24", "dev", n.Bridge); err != nil {
			return err
		}
	}
	_, err := run("ip", "link", "set", n.Bridge, "up")
	return err
}

// downBridge removes node n's bridge if up made it or it has the node's
// address (a bridge of a crashed up); every pod's veth goes with it.
func (c *Cluster) downBridge(n Node) {
	m := c.marker("bridge-" + n.Bridge)
	if exists(m) || hasAddr(n.Bridge, n.IP+"/24") {
		if _, err := run("ip", "link", "del", n.Bridge); err == nil {
			Logf("removed bridge %s", n.Bridge)
		}
	}
	_ = os.Remove(m)
}

// sysctl is a kernel setting up needs and down restores if up changed it.
type sysctl struct {
	path string
	// ok says whether the current value will do; want is written if not.
	ok   func(cur string) bool
	want string
	why  string
}

// sysctls are the machine settings the cluster needs:
//   - bridge-nf-call-iptables: a pod's reply to a pod that dialled a
//     ClusterIP on the same bridge is switched, not routed; only
//     br_netfilter hands bridged packets to iptables, where conntrack undoes
//     kube-proxy's DNAT (without it the client gets its answer from the
//     endpoint's pod IP instead of the ClusterIP, and drops it);
//   - ip_forward: a pod reaches a pod of another node, the host's brokers
//     and CoreDNS through the host, which routes between the bridges (the
//     CNI bridge plugin sets it as a side effect; down never restored it);
//   - inotify instances: every kubelet and containerd watches files, and
//     the machines' default of 128 per user runs out with several nodes and
//     the JVMs' own watches ("too many open files" from fsnotify).
func sysctls() []sysctl {
	return []sysctl{
		{path: "/proc/sys/net/bridge/bridge-nf-call-iptables", ok: func(v string) bool { return v == "1" }, want: "1", why: "kube-proxy's ClusterIPs between pods of one bridge"},
		{path: "/proc/sys/net/ipv4/ip_forward", ok: func(v string) bool { return v == "1" }, want: "1", why: "routing between the nodes' bridges"},
		{path: "/proc/sys/fs/inotify/max_user_instances", ok: func(v string) bool { return atoiOr(v, 0) >= 1024 }, want: "1024", why: "the kubelets' and containerds' file watches"},
	}
}

func (c *Cluster) setSysctls() error {
	for _, s := range sysctls() {
		if s.path == "/proc/sys/net/bridge/bridge-nf-call-iptables" && !exists(s.path) {
			_ = exec.Command("modprobe", "br_netfilter").Run()
			if !exists(s.path) {
				return fmt.Errorf("network: %s is missing: kube-proxy needs br_netfilter (modprobe br_netfilter)", s.path)
			}
		}
		b, err := os.ReadFile(s.path)
		if err != nil {
			return fmt.Errorf("%s (%s): %w", s.path, s.why, err)
		}
		cur := strings.TrimSpace(string(b))
		if s.ok(cur) {
			continue
		}
		m := c.marker("sysctl-" + filepath.Base(s.path))
		// The value before the first change is what down restores.
		if !exists(m) {
			if err := writeFile(m, cur+"\n"); err != nil {
				return err
			}
		}
		if err := os.WriteFile(s.path, []byte(s.want), 0o644); err != nil {
			return fmt.Errorf("cannot set %s to %s (%s): %w", s.path, s.want, s.why, err)
		}
		Logf("%s: %s -> %s (%s; down restores it)", s.path, cur, s.want, s.why)
	}
	return nil
}

func (c *Cluster) restoreSysctls() {
	for _, s := range sysctls() {
		m := c.marker("sysctl-" + filepath.Base(s.path))
		b, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		old := strings.TrimSpace(string(b))
		if err := os.WriteFile(s.path, []byte(old), 0o644); err == nil {
			Logf("%s back to %s", s.path, old)
		}
		_ = os.Remove(m)
	}
}

// removeAPIIP takes 10.96.0.1 off lo, where an older version of the script
// put it: kube-proxy DNATs it to the `kubernetes` Service's endpoint now.
func removeAPIIP() {
	if hasAddr("lo", APIServiceIP+"/32") {
		if _, err := run("ip", "addr", "del", APIServiceIP+"/32", "dev", "lo"); err == nil {
			Logf("removed %s from lo", APIServiceIP)
		}
	}
}

// cleanupIPTables removes every chain kube-proxy and the kubelets add, in
// iptables and ip6tables; run after both have stopped (they would recreate
// them), and safe when neither ever ran. kube-proxy --cleanup removes its
// own chains. The kubelet's are KUBE-IPTABLES-HINT (mangle), KUBE-FIREWALL
// (filter, jumped to from INPUT and OUTPUT) and KUBE-KUBELET-CANARY
// (mangle, nat, filter); the kubelet never removes them.
func (c *Cluster) cleanupIPTables() {
	proxy := filepath.Join(c.Bin, "kube-proxy")
	if exists(proxy) {
		if out, err := exec.Command(proxy, "--cleanup").CombinedOutput(); err != nil {
			Logf("kube-proxy --cleanup failed: %s", lastLines(string(out), 5))
		}
	}
	for _, ipt := range []string{"iptables", "ip6tables"} {
		if _, err := exec.LookPath(ipt); err != nil {
			continue
		}
		for _, chain := range []string{"INPUT", "OUTPUT"} {
			for exec.Command(ipt, "-w", "-t", "filter", "-D", chain, "-j", "KUBE-FIREWALL").Run() == nil {
			}
		}
		for _, tc := range [][2]string{{"mangle", "KUBE-IPTABLES-HINT"}, {"filter", "KUBE-FIREWALL"}, {"mangle", "KUBE-KUBELET-CANARY"}, {"nat", "KUBE-KUBELET-CANARY"}, {"filter", "KUBE-KUBELET-CANARY"}} {
			if exec.Command(ipt, "-w", "-t", tc[0], "-F", tc[1]).Run() == nil {
				_ = exec.Command(ipt, "-w", "-t", tc[0], "-X", tc[1]).Run()
			}
		}
	}
	if n := kubeChainLines(); n > 0 {
		Logf("iptables: %d lines still name a KUBE- chain (iptables-save | grep KUBE-)", n)
	}
}

// kubeChainLines counts the lines of iptables-save and ip6tables-save that
// name a KUBE- chain.
func kubeChainLines() int {
	n := 0
	for _, save := range []string{"iptables-save", "ip6tables-save"} {
		out, err := exec.Command(save).Output()
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "KUBE-") {
				n++
			}
		}
	}
	return n
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func touch(path string) error { return writeFile(path, "") }

func writeFile(path, data string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(data), 0o644)
}

func atoiOr(s string, def int) int {
	var n int
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil {
		return def
	}
	return n
}

var errNoCluster = errors.New("the cluster is not running; start it with: hack/local-cluster/local-cluster.sh up")

// BridgesLeft counts the node bridges (cni0, cni1, ...) that carry their
// node's address, in order: the nodes of a cluster whose record is gone.
func BridgesLeft() int {
	n := 0
	for n < MaxNodes && hasAddr(fmt.Sprintf("cni%d", n), fmt.Sprintf("10.244.%d.1/24", n)) {
		n++
	}
	return n
}
