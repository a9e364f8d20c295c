// Package localcluster brings up a Kubernetes cluster of one or more real
// nodes, built from source, on this one machine, without Docker (kind needs
// a Docker engine and its node image). It is the Go form of what
// hack/local-cluster/local-cluster.sh did for one node, in kind's shape:
// the cluster and its nodes are typed values computed by a pure builder
// (New), and bringing them up is an ordered list of actions (up.go), each
// with an undo that is safe to run when its action never ran, so `down`
// undoes everything in reverse whatever state `up` left.
//
// One control plane (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, CoreDNS, one kube-proxy) serves N nodes. Each node is a
// containerd and a kubelet of its own (several kubelets on one containerd
// kill each other's pods: a kubelet removes every running pod it does not
// know) with its own bridge cni<i>, whose address 10.244.<i>.1 is the node
// IP. The bridges are all in the host's network namespace, so a pod reaches
// a pod on another node by plain routing through the host.
package localcluster

import (
	"errors"
	"fmt"
	"path/filepath"
)

// NodeName is a Kubernetes node's name (its kubelet's --hostname-override).
type NodeName string

// Versions of the binaries the cluster runs (hack/local-cluster/build-binaries.sh
// builds them from the pinned modules in hack/tools).
type Versions struct {
	Kubernetes string
	Etcd       string
	CoreDNS    string
}

// Config is what the caller chooses; New derives everything else.
type Config struct {
	// Root is the repository's root directory.
	Root string
	// Bin holds the Kubernetes binaries (bin/k8s/<version>).
	Bin string
	// State holds configs, certificates, logs, pid files and the nodes'
	// data (bin/local-cluster).
	State string
	// RunDir holds the sockets: a Unix socket path has at most 108 bytes.
	RunDir string
	// DataDir holds the kubelets' root directories, which hold sockets of
	// their own (pod-resources/<random>, plugins_registry): under a clone
	// such as /tmp/streambench-ci-cold.XXXXXX/repo/bin/local-cluster/ their
	// paths passed 108 bytes and the kubelet exited ("bind: invalid
	// argument"). A short fixed path on the disk (not /run's tmpfs: pods'
	// emptyDir volumes live there too) keeps them short wherever the
	// repository is.
	DataDir string
	// Nodes is how many nodes up starts (1 to MaxNodes).
	Nodes int
	// Versions of the binaries.
	Versions Versions
	// Image is the streambench image load-image builds and imports.
	Image string
}

// MaxNodes bounds Config.Nodes: each node is a containerd and a kubelet on
// this machine's cores; past a handful nothing useful fits in 2 cores.
const MaxNodes = 8

// The cluster's fixed network: pods of node i in 10.244.<i>.0/24, whose .1
// is the node's bridge and node IP; Services in 10.96.0.0/16.
const (
	ClusterCIDR = "10.244.0.0/16"
	ServiceCIDR = "10.96.0.0/16"
	// APIServiceIP is the `kubernetes` Service's ClusterIP: in the serving
	// certificate, and what an older version put on lo (down removes it).
	APIServiceIP = "10.96.0.1"
	APIPort      = 443
	EtcdPort     = 12379
	EtcdPeerPort = 12380
	// ProxyHealthz and ProxyMetrics are kube-proxy's, on loopback only.
	ProxyHealthz = "127.0.0.1:10256"
	ProxyMetrics = "127.0.0.1:10249"
	// PauseImage is the pod sandbox image (hack/local-cluster/pause).
	PauseImage = "docker.io/streambench/pause:1.0"
	// CNINetwork is the CNI network's name on every node.
	CNINetwork = "streambench-local"
	// ClusterName names the kubeconfig's cluster and context.
	ClusterName = "streambench-local"
)

// Node is one node: a containerd, a kubelet and a bridge.
type Node struct {
	// Index is 0 for the first node; it picks the bridge and the IPs.
	Index int
	Name  NodeName
	// IP is the bridge's address and the node IP (10.244.<i>.1).
	IP string
	// PodCIDR is the node's pod range (10.244.<i>.0/24), the CNI's.
	PodCIDR string
	// Bridge is the node's CNI bridge (cni<i>).
	Bridge string
	// Dir holds the node's configs and data; its path names the node.
	Dir string
	// RunDir holds the node's sockets.
	RunDir string
	// KubeletRoot is the kubelet's --root-dir: pods' volumes, and sockets.
	KubeletRoot string
}

// ContainerdSocket is the node's containerd, the kubelet's runtime endpoint.
func (n Node) ContainerdSocket() string { return filepath.Join(n.RunDir, "containerd.sock") }

// ContainerdConfig is the node's containerd config file.
func (n Node) ContainerdConfig() string { return filepath.Join(n.Dir, "containerd", "config.toml") }

// KubeletConfig is the node's kubelet config file.
func (n Node) KubeletConfig() string { return filepath.Join(n.Dir, "kubelet", "config.yaml") }

// CNIConfDir and CNIIPAMDir are the node's own: one bridge and one address
// range per node.
func (n Node) CNIConfDir() string { return filepath.Join(n.Dir, "cni", "net.d") }
func (n Node) CNIIPAMDir() string { return filepath.Join(n.Dir, "cni", "ipam") }

// ContainerdPart and KubeletPart name the node's processes (pid and log
// files). The first node's keep the one-node names (containerd, kubelet),
// so a one-node cluster's files are where they always were.
func (n Node) ContainerdPart() Part { return n.part("containerd") }
func (n Node) KubeletPart() Part    { return n.part("kubelet") }

func (n Node) part(what string) Part {
	if n.Index == 0 {
		return Part(what)
	}
	return Part(what + "-" + string(n.Name))
}

// Part names one process of the cluster: its pid file and its log.
type Part string

// Control-plane parts, one each.
const (
	PartEtcd              Part = "etcd"
	PartAPIServer         Part = "kube-apiserver"
	PartControllerManager Part = "kube-controller-manager"
	PartScheduler         Part = "kube-scheduler"
	PartCoreDNS           Part = "coredns"
	PartProxy             Part = "kube-proxy"
)

// Cluster is a computed cluster: the Config and its nodes, with every path.
type Cluster struct {
	Config
	Nodes []Node
}

// NodeNameFor names node i: streambench-local for the first (the one-node
// cluster's name), then streambench-local-2, -3, ... (counted from 1, as
// people count nodes).
func NodeNameFor(i int) NodeName {
	if i == 0 {
		return NodeName(ClusterName)
	}
	return NodeName(fmt.Sprintf("%s-%d", ClusterName, i+1))
}

// New computes the cluster of cfg; it touches nothing.
func New(cfg Config) (*Cluster, error) {
	if cfg.Nodes < 1 || cfg.Nodes > MaxNodes {
		return nil, fmt.Errorf("--nodes %d: a local cluster has 1 to %d nodes", cfg.Nodes, MaxNodes)
	}
	if cfg.Root == "" || cfg.State == "" || cfg.RunDir == "" || cfg.DataDir == "" || cfg.Bin == "" {
		return nil, errors.New("local cluster: Root, Bin, State, RunDir and DataDir must be set")
	}
	c := &Cluster{Config: cfg}
	for i := 0; i < cfg.Nodes; i++ {
		name := NodeNameFor(i)
		c.Nodes = append(c.Nodes, Node{
			Index:       i,
			Name:        name,
			IP:          fmt.Sprintf("10.244.%d.1", i),
			PodCIDR:     fmt.Sprintf("10.244.%d.0/24", i),
			Bridge:      fmt.Sprintf("cni%d", i),
			Dir:         filepath.Join(cfg.State, "nodes", string(name)),
			RunDir:      filepath.Join(cfg.RunDir, fmt.Sprintf("n%d", i)),
			KubeletRoot: filepath.Join(cfg.DataDir, fmt.Sprintf("n%d", i), "kubelet"),
		})
	}
	return c, nil
}

// First is the node the control plane listens on: its IP is the API
// server's, CoreDNS's and kube-proxy's.
func (c *Cluster) First() Node { return c.Nodes[0] }

// Kubeconfig is the admin kubeconfig every component and kubectl use.
func (c *Cluster) Kubeconfig() string { return filepath.Join(c.State, "kubeconfig") }

// PKI holds the certificates and the token file.
func (c *Cluster) PKI() string { return filepath.Join(c.State, "pki") }

// Logs and Pids hold each part's log and pid file.
func (c *Cluster) Logs() string { return filepath.Join(c.State, "logs") }
func (c *Cluster) Pids() string { return filepath.Join(c.State, "pids") }

// LogFile is a part's log.
func (c *Cluster) LogFile(p Part) string { return filepath.Join(c.Logs(), string(p)+".log") }

// PidFile is a part's pid file.
func (c *Cluster) PidFile(p Part) string { return filepath.Join(c.Pids(), string(p)+".pid") }

// Parts lists every process in start order; down stops them in reverse.
func (c *Cluster) Parts() []Part {
	parts := []Part{PartEtcd, PartAPIServer}
	for _, n := range c.Nodes {
		parts = append(parts, n.ContainerdPart())
	}
	parts = append(parts, PartControllerManager, PartScheduler, PartCoreDNS)
	for _, n := range c.Nodes {
		parts = append(parts, n.KubeletPart())
	}
	return append(parts, PartProxy)
}

// Marker files record what up changed on the machine, so down undoes only
// that.
func (c *Cluster) marker(name string) string { return filepath.Join(c.State, "changed", name) }
