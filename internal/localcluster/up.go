package localcluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// action is one step of up, with the undo down runs. An undo must be safe
// when its action never ran, or ran halfway: down runs every undo, in
// reverse, whatever up managed.
type action struct {
	name string
	do   func(ctx context.Context) error
	undo func(ctx context.Context)
}

// ReadyTimeout is how long up waits for every node to be Ready.
var ReadyTimeout = 180 * time.Second

// actions are up's steps in order. Packages and binaries come first and
// are never undone (they are the machine's and the cache's, not the
// cluster's).
func (c *Cluster) actions() []action {
	acts := []action{
		{name: "packages", do: func(context.Context) error { return InstallPackages(c.Root) }},
		{name: "binaries", do: func(context.Context) error { return c.buildBinaries() }},
		{name: "certificates", do: func(context.Context) error { return c.writePKI() }},
		{name: "configs", do: func(context.Context) error { return c.writeConfigs() }},
		{name: "sysctls", do: func(context.Context) error { removeAPIIP(); return c.setSysctls() },
			undo: func(context.Context) { removeAPIIP(); c.restoreSysctls() }},
	}
	for _, n := range c.Nodes {
		acts = append(acts, action{name: "bridge " + n.Bridge,
			do: func(context.Context) error { return c.upBridge(n) }, undo: func(context.Context) { c.downBridge(n) }})
	}
	acts = append(acts,
		action{name: string(PartEtcd), do: c.startEtcd, undo: func(context.Context) { c.stop(PartEtcd) }},
		action{name: string(PartAPIServer), do: c.startAPIServer, undo: func(context.Context) { c.stop(PartAPIServer) }},
	)
	for _, n := range c.Nodes {
		acts = append(acts, action{name: string(n.ContainerdPart()),
			do:   func(ctx context.Context) error { return c.startContainerd(ctx, n) },
			undo: func(context.Context) { c.stopContainerd(n) }})
	}
	acts = append(acts,
		action{name: string(PartControllerManager), do: c.startControllerManager, undo: func(context.Context) { c.stop(PartControllerManager) }},
		action{name: string(PartScheduler), do: c.startScheduler, undo: func(context.Context) { c.stop(PartScheduler) }},
		action{name: string(PartCoreDNS), do: func(context.Context) error {
			return c.start(PartCoreDNS, filepath.Join(c.Bin, "coredns"), "-conf", filepath.Join(c.State, "Corefile"))
		}, undo: func(context.Context) { c.stop(PartCoreDNS) }},
	)
	for _, n := range c.Nodes {
		acts = append(acts, action{name: string(n.KubeletPart()),
			do:   func(ctx context.Context) error { return c.startKubelet(ctx, n) },
			undo: func(context.Context) { c.stop(n.KubeletPart()) }})
	}
	acts = append(acts,
		action{name: string(PartProxy), do: c.startProxy, undo: func(context.Context) { c.stop(PartProxy) }},
		action{name: "nodes Ready", do: c.waitNodesReady},
	)
	return acts
}

// Up brings the cluster up. When a step fails it says which, with the end
// of that part's log, and leaves what started running for `down`, so the
// logs and the state can be read first.
func (c *Cluster) Up(ctx context.Context) error {
	if err := NeedRoot(); err != nil {
		return err
	}
	if err := c.checkNodeCount(); err != nil {
		return err
	}
	t0 := time.Now()
	if err := os.MkdirAll(c.State, 0o755); err != nil {
		return err
	}
	// Pod network namespaces that existed before are never touched by down.
	if !exists(filepath.Join(c.State, "netns-before")) {
		if err := writeFile(filepath.Join(c.State, "netns-before"), strings.Join(cniNetns(), "\n")); err != nil {
			return err
		}
	}
	if err := c.saveRecord(); err != nil {
		return err
	}
	for _, a := range c.actions() {
		if err := a.do(ctx); err != nil {
			return fmt.Errorf("%s: %w\nstop what started with: hack/local-cluster/local-cluster.sh down", a.name, err)
		}
	}
	Logf("%d node(s) Ready after %s (%s); KUBECONFIG=%s", len(c.Nodes), time.Since(t0).Round(time.Second), nodeList(c.Nodes), c.Kubeconfig())
	return nil
}

// checkNodeCount refuses to change the node count of a running cluster:
// the nodes it has would be left out of down.
func (c *Cluster) checkNodeCount() error {
	rec, err := LoadRecord(c.State)
	if err != nil || rec.Nodes == len(c.Nodes) {
		return nil
	}
	old := *c
	old.Config.Nodes = rec.Nodes
	if o, err := New(old.Config); err == nil && o.Alive(PartAPIServer) {
		return fmt.Errorf("a cluster of %d node(s) is running; take it down first (hack/local-cluster/local-cluster.sh down), then up --nodes %d", rec.Nodes, len(c.Nodes))
	}
	return nil
}

func (c *Cluster) buildBinaries() error {
	t0 := time.Now()
	cmd := exec.Command(filepath.Join(c.Root, "hack", "local-cluster", "build-binaries.sh"))
	cmd.Env = append(os.Environ(), "K8S_VERSION="+c.Versions.Kubernetes, "ETCD_VERSION="+c.Versions.Etcd,
		"COREDNS_VERSION="+c.Versions.CoreDNS, "LOCAL_CLUSTER_BIN_DIR="+c.Bin)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("hack/local-cluster/build-binaries.sh: %w", err)
	}
	Logf("binaries ready after %s", time.Since(t0).Round(time.Second))
	return nil
}

// writeConfigs writes every config file; they are rewritten on each up.
func (c *Cluster) writeConfigs() error {
	token, err := c.adminToken()
	if err != nil {
		return err
	}
	for _, d := range []string{filepath.Join(c.State, "etcd"), c.RunDir, c.Logs(), c.Pids(), filepath.Join(c.State, "changed")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	files := map[string]string{
		c.Kubeconfig():                        c.KubeconfigFile(token),
		filepath.Join(c.State, "Corefile"):    c.CorefileFile(),
		filepath.Join(c.State, "resolv.conf"): c.ResolvConfFile(),
	}
	for _, n := range c.Nodes {
		for _, d := range []string{n.CNIIPAMDir(), n.RunDir} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		files[n.ContainerdConfig()] = c.ContainerdConfigFile(n)
		files[filepath.Join(n.CNIConfDir(), "10-streambench.conflist")] = c.CNIConfigFile(n)
		files[n.KubeletConfig()] = c.KubeletConfigFile(n)
	}
	for path, data := range files {
		if err := writeFile(path, data); err != nil {
			return err
		}
	}
	return os.Chmod(c.Kubeconfig(), 0o600)
}

func (c *Cluster) startEtcd(ctx context.Context) error {
	peer := fmt.Sprintf("http://127.0.0.1:%d", EtcdPeerPort)
	client := fmt.Sprintf("http://127.0.0.1:%d", EtcdPort)
	if err := c.start(PartEtcd, filepath.Join(c.Bin, "etcd"), "--name", ClusterName, "--data-dir", filepath.Join(c.State, "etcd"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", ClusterName+"="+peer, "--unsafe-no-fsync"); err != nil {
		return err
	}
	return c.waitFor(ctx, PartEtcd, 60*time.Second, "its /health", func() error { return httpOK(client + "/health") })
}

// startAPIServer: the first node's IP and port are what the `kubernetes`
// Service's EndpointSlice names (--advertise-address, --secure-port), where
// kube-proxy sends 10.96.0.1:443, so kube-apiserver must listen there (not
// on 0.0.0.0: this machine's other interfaces have no business with it).
func (c *Cluster) startAPIServer(ctx context.Context) error {
	pki := c.PKI()
	ip := c.First().IP
	if err := c.start(PartAPIServer, filepath.Join(c.Bin, "kube-apiserver"),
		"--etcd-servers", fmt.Sprintf("http://127.0.0.1:%d", EtcdPort),
		"--bind-address", ip, "--secure-port", strconv.Itoa(APIPort), "--advertise-address", ip,
		"--tls-cert-file", filepath.Join(pki, "apiserver.crt"), "--tls-private-key-file", filepath.Join(pki, "apiserver.key"),
		"--client-ca-file", filepath.Join(pki, "ca.crt"), "--token-auth-file", filepath.Join(pki, "tokens.csv"),
		"--authorization-mode", "RBAC", "--allow-privileged=true",
		"--service-cluster-ip-range", ServiceCIDR,
		"--service-account-key-file", filepath.Join(pki, "sa.pub"), "--service-account-signing-key-file", filepath.Join(pki, "sa.key"),
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--kubelet-preferred-address-types", "InternalIP", "--cert-dir", filepath.Join(c.State, "apiserver")); err != nil {
		return err
	}
	return c.waitFor(ctx, PartAPIServer, 120*time.Second, "/readyz", func() error {
		_, err := c.kubectl("get", "--raw", "/readyz")
		return err
	})
}

func (c *Cluster) startContainerd(ctx context.Context, n Node) error {
	p := n.ContainerdPart()
	if err := c.start(p, "containerd", "--config", n.ContainerdConfig()); err != nil {
		return err
	}
	if err := c.waitFor(ctx, p, 60*time.Second, "ctr version", func() error {
		_, err := run("ctr", "--address", n.ContainerdSocket(), "version")
		return err
	}); err != nil {
		return err
	}
	weighPods()
	return c.loadPause(n)
}

func (c *Cluster) startControllerManager(context.Context) error {
	kc := c.Kubeconfig()
	return c.start(PartControllerManager, filepath.Join(c.Bin, "kube-controller-manager"),
		"--kubeconfig", kc, "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
		"--bind-address", "127.0.0.1", "--leader-elect=false",
		"--service-account-private-key-file", filepath.Join(c.PKI(), "sa.key"), "--root-ca-file", filepath.Join(c.PKI(), "ca.crt"),
		"--service-cluster-ip-range", ServiceCIDR, "--controllers", "*,-nodeipam")
}

func (c *Cluster) startScheduler(context.Context) error {
	kc := c.Kubeconfig()
	return c.start(PartScheduler, filepath.Join(c.Bin, "kube-scheduler"),
		"--kubeconfig", kc, "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
		"--bind-address", "127.0.0.1", "--leader-elect=false")
}

// startKubelet starts node n's kubelet on its own containerd (also as
// cAdvisor's --containerd, which otherwise reads the default socket), root,
// certificates and pod logs, and waits until it has registered its Node.
func (c *Cluster) startKubelet(ctx context.Context, n Node) error {
	p := n.KubeletPart()
	if err := c.start(p, filepath.Join(c.Bin, "kubelet"), "--config", n.KubeletConfig(), "--kubeconfig", c.Kubeconfig(),
		"--node-ip", n.IP, "--hostname-override", string(n.Name),
		"--root-dir", n.KubeletRoot, "--cert-dir", filepath.Join(n.Dir, "kubelet", "pki"),
		"--containerd", n.ContainerdSocket(), "--v", "1"); err != nil {
		return err
	}
	return c.waitFor(ctx, p, 60*time.Second, "its Node", func() error {
		_, err := c.kubectl("get", "node", string(n.Name))
		return err
	})
}

// startProxy starts the one kube-proxy, which writes every node's Service
// rules (they are the host's iptables: N kube-proxies would overwrite each
// other). It reads its node's IPs from the Node object when it starts, so
// it starts once the kubelets have registered. Mode iptables: iptables
// v1.8.9 (its nf_tables backend) is what this machine has and what the
// kubelet already uses; nftables mode needs the nft CLI and ipvs the ip_vs
// module, neither is here. --cluster-cidr covers every node's pods, or the
// traffic of other nodes' pods would be masqueraded. The conntrack flags at
// 0 and NodePorts on the node IP only (not on localhost, so no
// route_localnet) keep kube-proxy from changing this machine's sysctls;
// health and metrics on loopback only. --bind-address is the node IP
// kube-proxy assumes, not a listen address.
func (c *Cluster) startProxy(ctx context.Context) error {
	fp := c.First()
	if err := c.start(PartProxy, filepath.Join(c.Bin, "kube-proxy"), "--kubeconfig", c.Kubeconfig(),
		"--hostname-override", string(fp.Name), "--bind-address", fp.IP,
		"--proxy-mode", "iptables", "--cluster-cidr", ClusterCIDR, "--nodeport-addresses", "primary",
		"--conntrack-max-per-core", "0", "--conntrack-tcp-timeout-established", "0", "--conntrack-tcp-timeout-close-wait", "0",
		"--healthz-bind-address", ProxyHealthz, "--metrics-bind-address", ProxyMetrics); err != nil {
		return err
	}
	// Healthy, and the first sync written (its healthz answers 200 before).
	return c.waitFor(ctx, PartProxy, 60*time.Second, "its first rules", proxySynced)
}

func proxySynced() error {
	if err := httpOK("http://" + ProxyHealthz + "/healthz"); err != nil {
		return err
	}
	out, err := exec.Command("iptables", "-w", "-t", "nat", "-S", "KUBE-SERVICES").Output()
	if err != nil {
		return err
	}
	if !strings.Contains(string(out), "default/kubernetes:https") {
		return errors.New("no rule for default/kubernetes yet")
	}
	return nil
}

// waitNodesReady waits until every node is Ready and CoreDNS serves.
func (c *Cluster) waitNodesReady(ctx context.Context) error {
	Logf("waiting up to %s for %s to be Ready", ReadyTimeout, nodeList(c.Nodes))
	deadline := time.Now().Add(ReadyTimeout)
	for {
		notReady := ""
		for _, n := range c.Nodes {
			st, _ := c.kubectl("get", "node", string(n.Name), "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
			if strings.TrimSpace(st) != "True" {
				notReady = string(n.Name)
				break
			}
		}
		if notReady == "" {
			break
		}
		for _, p := range c.Parts() {
			if !c.Alive(p) {
				return c.failPart(p, "exited while waiting for the nodes")
			}
		}
		if time.Now().After(deadline) {
			msg, _ := c.kubectl("get", "node", notReady, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].message}`)
			return c.failPart(PartKubeletOf(c, notReady), "node %s not Ready after %s: %s", notReady, ReadyTimeout, msg)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return c.waitFor(ctx, PartCoreDNS, 30*time.Second, "its start line", func() error {
		b, _ := os.ReadFile(c.LogFile(PartCoreDNS))
		if !strings.Contains(string(b), "CoreDNS-") {
			return errors.New("not started")
		}
		return nil
	})
}

// PartKubeletOf is the kubelet part of the node named name.
func PartKubeletOf(c *Cluster, name string) Part {
	for _, n := range c.Nodes {
		if string(n.Name) == name {
			return n.KubeletPart()
		}
	}
	return c.First().KubeletPart()
}

// weighPods gives the pods, together, the CPU weight a node's kubelet gives
// its kubepods cgroup: 1024 shares per core. With cgroupsPerQOS off (a
// cgroup v1 host) containerd puts every container under /k8s.io, a group
// of the default 1024 shares: all pods together weighed as one busy thread
// of the host, against every thread of the CI's lanes, the e2e suite's
// host-side brokers and a shared machine's neighbour. Within the group the
// containers keep the shares of their CPU requests, as on a node. Every
// node's containerd uses the same group: the nodes share the machine's
// cores, and the weight is the machine's.
func weighPods() {
	const g = "/sys/fs/cgroup/cpu/k8s.io"
	if !exists("/sys/fs/cgroup/cpu") || exists("/sys/fs/cgroup/cgroup.controllers") {
		return
	}
	shares := strconv.Itoa(runtime.NumCPU() * 1024)
	if err := os.MkdirAll(g, 0o755); err == nil {
		if err := os.WriteFile(filepath.Join(g, "cpu.shares"), []byte(shares), 0o644); err == nil {
			return
		}
	}
	Logf("could not set %s/cpu.shares: the pods weigh as one host thread when the machine is busy", g)
}

func httpOK(url string) error {
	cl := http.Client{Timeout: 2 * time.Second}
	resp, err := cl.Get(url)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}
