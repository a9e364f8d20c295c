package localcluster

import (
	"fmt"
	"path/filepath"
	"strings"
)

// The config files, as pure functions of the cluster: files_test.go reads
// them back.

// KubeconfigFile is the admin kubeconfig: the API server on the first
// node's IP, with the admin token.
func (c *Cluster) KubeconfigFile(token string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster:
    server: https://%[2]s:%[3]d
    certificate-authority: %[4]s
users:
- name: streambench-admin
  user:
    token: %[5]s
contexts:
- name: %[1]s
  context: {cluster: %[1]s, user: streambench-admin}
current-context: %[1]s
`, ClusterName, c.First().IP, APIPort, filepath.Join(c.PKI(), "ca.crt"), token)
}

// ContainerdConfigFile is node n's containerd: its own root, state, sockets,
// CNI directories and runc root, so that nothing of one node's containers
// is visible to another node's containerd (whose kubelet would kill them).
//
// restrict_oom_score_adj: root here lacks CAP_SYS_RESOURCE, and without it
// every sandbox fails in runc with "can't get final child's PID from pipe".
// The stream server (exec, logs -f, port-forward) listens on a port of its
// own choosing, so N of them never collide.
func (c *Cluster) ContainerdConfigFile(n Node) string {
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = %[3]q
[ttrpc]
  address = %[4]q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[5]q
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %[6]q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %[7]q
`, filepath.Join(n.Dir, "containerd", "root"), filepath.Join(n.RunDir, "containerd-state"),
		n.ContainerdSocket(), n.ContainerdSocket()+".ttrpc", PauseImage,
		filepath.Join(n.RunDir, "runc"), n.CNIConfDir())
}

// CNIConfigFile is node n's pod network: its bridge, its range, the node IP
// as gateway. No portmap and no ipMasq: no pod uses a host port and nothing
// leaves the machine; the only iptables rules are kube-proxy's and the
// kubelets'.
func (c *Cluster) CNIConfigFile(n Node) string {
	return fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": %[1]q,
  "plugins": [
    {
      "type": "bridge",
      "bridge": %[2]q,
      "isGateway": true,
      "isDefaultGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": %[3]q,
        "ranges": [[{"subnet": %[4]q, "gateway": %[5]q}]]
      }
    }
  ]
}
`, CNINetwork, n.Bridge, n.CNIIPAMDir(), n.PodCIDR, n.IP)
}

// CorefileFile is the pods' DNS, on the first node's IP: cluster names
// only; there is no upstream to forward to.
func (c *Cluster) CorefileFile() string {
	return fmt.Sprintf(`cluster.local:53 {
    bind %s
    errors
    kubernetes cluster.local {
        kubeconfig %s %s
    }
}
`, c.First().IP, c.Kubeconfig(), ClusterName)
}

// ResolvConfFile is every pod's resolv.conf: CoreDNS.
func (c *Cluster) ResolvConfFile() string { return "nameserver " + c.First().IP + "\n" }

// KubeletConfigFile is node n's kubelet. Every address is the node's own
// IP, so N kubelets can use the same ports; its pod logs directory is its
// own, as the kubelet's garbage collector removes the log directories of
// pods it does not know.
//
// cgroup v1 host: the kubelet refuses v1 unless told, and the QoS and
// node-allocatable cgroups cannot be managed here. The images were
// imported, not pulled: garbage collection must never drop them, and other
// work on this disk must not evict the test pods.
func (c *Cluster) KubeletConfigFile(n Node) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %[1]s
port: 10250
readOnlyPort: 0
healthzBindAddress: %[1]s
healthzPort: 10248
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
failCgroupV1: false
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
localStorageCapacityIsolation: false
containerRuntimeEndpoint: unix://%[2]s
clusterDNS: [%[3]s]
clusterDomain: cluster.local
resolvConf: %[4]s
podLogsDir: %[5]s
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%%", imagefs.available: "1%%", nodefs.inodesFree: "1%%"}
`, n.IP, n.ContainerdSocket(), c.First().IP, filepath.Join(c.State, "resolv.conf"),
		filepath.Join(n.Dir, "kubelet", "pod-logs"))
}

// APIServerSANs are the serving certificate's names: the `kubernetes`
// Service's names and ClusterIP, and the first node's IP where it listens.
func (c *Cluster) APIServerSANs() (dns []string, ips []string) {
	dns = []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"}
	ips = []string{APIServiceIP, c.First().IP, "127.0.0.1"}
	return dns, ips
}

// nodeList is "a, b and c" for messages.
func nodeList(nodes []Node) string {
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = string(n.Name)
	}
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
