package localcluster

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"sigs.k8s.io/yaml"
)

// testConfig's repository is where make ci-cold clones one: the kubelet's
// sockets under a root in its state dir passed 108 bytes there.
func testConfig(nodes int) Config {
	const repo = "/tmp/streambench-ci-cold.bqHnKz/repo"
	return Config{Root: repo, Bin: repo + "/bin/k8s/1.36.3", State: repo + "/bin/local-cluster",
		RunDir: "/run/streambench-local-cluster", DataDir: "/var/lib/streambench-local-cluster", Nodes: nodes}
}

func TestNewNodes(t *testing.T) {
	for _, tc := range []struct {
		nodes   int
		names   []NodeName
		ips     []string
		bridges []string
		err     string
	}{
		{nodes: 1, names: []NodeName{"streambench-local"}, ips: []string{"10.244.0.1"}, bridges: []string{"cni0"}},
		{nodes: 3, names: []NodeName{"streambench-local", "streambench-local-2", "streambench-local-3"},
			ips: []string{"10.244.0.1", "10.244.1.1", "10.244.2.1"}, bridges: []string{"cni0", "cni1", "cni2"}},
		{nodes: 0, err: "1 to 8 nodes"},
		{nodes: 9, err: "1 to 8 nodes"},
	} {
		t.Run(fmt.Sprint(tc.nodes), func(t *testing.T) {
			c, err := New(testConfig(tc.nodes))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("New(%d nodes): err %v, want %q", tc.nodes, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sockets := map[string]bool{}
			for i, n := range c.Nodes {
				if n.Name != tc.names[i] || n.IP != tc.ips[i] || n.Bridge != tc.bridges[i] {
					t.Errorf("node %d: %s %s %s, want %s %s %s", i, n.Name, n.IP, n.Bridge, tc.names[i], tc.ips[i], tc.bridges[i])
				}
				if !strings.Contains(n.Dir, string(n.Name)) {
					t.Errorf("node %s's directory %s does not name it", n.Name, n.Dir)
				}
				// A Unix socket path has at most 108 bytes: containerd's ttrpc
				// socket, and the kubelet's pod-resources socket (a random
				// name of 10 digits) under its root.
				for _, sock := range []string{n.ContainerdSocket() + ".ttrpc", n.KubeletRoot + "/pod-resources/1234567890"} {
					if l := len(sock); l >= 108 {
						t.Errorf("node %s's socket path %s is %d bytes", n.Name, sock, l)
					}
				}
				if strings.HasPrefix(n.KubeletRoot, "/run/") {
					t.Errorf("node %s's kubelet root %s is on /run's tmpfs: pods' emptyDir volumes are there", n.Name, n.KubeletRoot)
				}
				if sockets[n.ContainerdSocket()] {
					t.Errorf("node %s shares socket %s", n.Name, n.ContainerdSocket())
				}
				sockets[n.ContainerdSocket()] = true
			}
			// Parts: every node's containerd before the controllers, every
			// kubelet before kube-proxy, which is last; no name twice.
			parts := c.Parts()
			seen := map[Part]int{}
			for i, p := range parts {
				if _, dup := seen[p]; dup {
					t.Errorf("part %s twice in %v", p, parts)
				}
				seen[p] = i
			}
			if parts[len(parts)-1] != PartProxy {
				t.Errorf("last part %s, want kube-proxy", parts[len(parts)-1])
			}
			for _, n := range c.Nodes {
				if seen[n.ContainerdPart()] > seen[PartControllerManager] || seen[n.KubeletPart()] < seen[PartCoreDNS] {
					t.Errorf("node %s's parts out of order: %v", n.Name, parts)
				}
			}
			if got := c.First().KubeletPart(); got != "kubelet" {
				t.Errorf("first node's kubelet part %q, want the one-node name kubelet", got)
			}
		})
	}
}

// Every node's files name its own socket, bridge, range and directories,
// and nothing of another node's.
func TestNodeFilesAreTheNodes(t *testing.T) {
	c, err := New(testConfig(3))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes {
		var cni struct {
			Plugins []struct {
				Bridge string `json:"bridge"`
				IPAM   struct {
					DataDir string `json:"dataDir"`
					Ranges  [][]struct {
						Subnet, Gateway string
					} `json:"ranges"`
				} `json:"ipam"`
			} `json:"plugins"`
		}
		if err := json.Unmarshal([]byte(c.CNIConfigFile(n)), &cni); err != nil {
			t.Fatalf("node %s's CNI config: %v", n.Name, err)
		}
		p := cni.Plugins[0]
		if p.Bridge != n.Bridge || p.IPAM.DataDir != n.CNIIPAMDir() || p.IPAM.Ranges[0][0].Subnet != n.PodCIDR || p.IPAM.Ranges[0][0].Gateway != n.IP {
			t.Errorf("node %s's CNI config: %+v", n.Name, p)
		}
		var kubelet map[string]any
		if err := yaml.Unmarshal([]byte(c.KubeletConfigFile(n)), &kubelet); err != nil {
			t.Fatalf("node %s's kubelet config: %v", n.Name, err)
		}
		want := map[string]any{
			"address":                  n.IP,
			"healthzBindAddress":       n.IP,
			"containerRuntimeEndpoint": "unix://" + n.ContainerdSocket(),
			"podLogsDir":               n.Dir + "/kubelet/pod-logs",
		}
		for k, v := range want {
			if kubelet[k] != v {
				t.Errorf("node %s's kubelet %s = %v, want %v", n.Name, k, kubelet[k], v)
			}
		}
		if dns := kubelet["clusterDNS"].([]any); len(dns) != 1 || dns[0] != c.First().IP {
			t.Errorf("node %s's clusterDNS %v, want CoreDNS on %s", n.Name, dns, c.First().IP)
		}
		ctd := c.ContainerdConfigFile(n)
		for _, s := range []string{n.ContainerdSocket(), n.CNIConfDir(), n.Dir + "/containerd/root", n.RunDir + "/runc", `stream_server_port = "0"`} {
			if !strings.Contains(ctd, s) {
				t.Errorf("node %s's containerd config lacks %s:\n%s", n.Name, s, ctd)
			}
		}
		for _, o := range c.Nodes {
			if o.Index == n.Index {
				continue
			}
			for _, file := range []string{ctd, c.CNIConfigFile(n), c.KubeletConfigFile(n)} {
				if strings.Contains(file, o.Dir+"/") || strings.Contains(file, o.RunDir+"/") || strings.Contains(file, `"`+o.Bridge+`"`) {
					t.Errorf("node %s's files name node %s's:\n%s", n.Name, o.Name, file)
				}
			}
		}
	}
}

// check-nodes' objects: one PV per node, bound to that node only, at a path
// that names it; a StatefulSet of one replica per node under a required
// anti-affinity on the hostname.
func TestNodeCheckObjects(t *testing.T) {
	c, err := New(testConfig(3))
	if err != nil {
		t.Fatal(err)
	}
	pvs := map[string]corev1.PersistentVolume{}
	var sc storagev1.StorageClass
	var replicas int
	var antiAffinity bool
	for _, doc := range strings.Split(c.NodeCheckObjects("nodecheck"), "\n---\n") {
		var meta struct {
			Kind string `json:"kind"`
			Spec struct {
				Replicas int `json:"replicas"`
				Template struct {
					Spec corev1.PodSpec `json:"spec"`
				} `json:"template"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("%v:\n%s", err, doc)
		}
		switch meta.Kind {
		case "PersistentVolume":
			var pv corev1.PersistentVolume
			if err := yaml.UnmarshalStrict([]byte(doc), &pv); err != nil {
				t.Fatal(err)
			}
			pvs[pv.Name] = pv
		case "StorageClass":
			if err := yaml.UnmarshalStrict([]byte(doc), &sc); err != nil {
				t.Fatal(err)
			}
		case "StatefulSet":
			replicas = meta.Spec.Replicas
			a := meta.Spec.Template.Spec.Affinity
			antiAffinity = a != nil && a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) == 1 &&
				a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey == "kubernetes.io/hostname"
		}
	}
	if sc.VolumeBindingMode == nil || *sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
		t.Errorf("the check's class must bind where the pod lands: %+v", sc.VolumeBindingMode)
	}
	if replicas != 3 || !antiAffinity {
		t.Errorf("StatefulSet: %d replicas, required hostname anti-affinity %v; want 3, true", replicas, antiAffinity)
	}
	if len(pvs) != 2*len(c.Nodes) {
		t.Errorf("%d PVs, want two per node (the pod's and a spare)", len(pvs))
	}
	for _, n := range c.Nodes {
		for _, slot := range volumeSlots {
			pv, ok := pvs[nodeCheckPV(n, slot)]
			if !ok {
				t.Fatalf("no PV %s for node %s in %v", nodeCheckPV(n, slot), n.Name, pvs)
			}
			terms := pv.Spec.NodeAffinity.Required.NodeSelectorTerms
			if len(terms) != 1 || terms[0].MatchExpressions[0].Values[0] != string(n.Name) {
				t.Errorf("PV %s's node affinity %+v, want node %s only", pv.Name, terms, n.Name)
			}
			if !strings.Contains(pv.Spec.Local.Path, string(n.Name)) {
				t.Errorf("PV %s's path %s does not name node %s", pv.Name, pv.Spec.Local.Path, n.Name)
			}
		}
	}
}
