package localcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The checks prove on the running cluster what the e2e suite takes for
// granted. Each makes its own namespace and removes it afterwards; a check
// that fails says what it saw.

const probeImage = "docker.io/streambench/svcprobe:local"

// kubectlIn runs kubectl with stdin.
func (c *Cluster) kubectlIn(stdin string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(c.Bin, "kubectl"), append([]string{"--kubeconfig", c.Kubeconfig()}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, lastLines(string(out), 5))
	}
	return string(out), nil
}

// loadProbe builds hack/local-cluster/svcprobe's image and imports it into
// every node.
func (c *Cluster) loadProbe() error {
	tar := filepath.Join(c.imagesDir(), "svcprobe.tar")
	if err := c.BuildImage("./hack/local-cluster/svcprobe", probeImage, tar); err != nil {
		return err
	}
	return c.importEverywhere(tar)
}

// freshNamespace deletes ns if a failed check left it, creates it, and
// waits for its default service account.
func (c *Cluster) freshNamespace(ctx context.Context, ns string) error {
	if _, err := c.kubectl("delete", "namespace", ns, "--ignore-not-found", "--timeout=120s"); err != nil {
		return err
	}
	if _, err := c.kubectl("create", "namespace", ns); err != nil {
		return err
	}
	return c.waitFor(ctx, PartControllerManager, 30*time.Second, "service account default in "+ns, func() error {
		_, err := c.kubectl("-n", ns, "get", "serviceaccount", "default")
		return err
	})
}

// proxyHasEndpoint says whether kube-proxy's rules send ns/svc to a pod.
func proxyHasEndpoint(nsSvc string) func() error {
	return func() error {
		out, err := exec.Command("iptables", "-w", "-t", "nat", "-S").Output()
		if err != nil {
			return err
		}
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, `--comment "`+nsSvc) && strings.Contains(l, " -> ") {
				return nil
			}
		}
		return fmt.Errorf("no rule sends %s to a pod yet", nsSvc)
	}
}

// CheckServices: a pod serving TCP behind a ClusterIP Service, dialled by
// ClusterIP and by DNS name from another pod and from the serving pod
// itself (hairpin), and the `kubernetes` Service as in-cluster clients use
// it; in namespace svcprobe, deleted afterwards.
func (c *Cluster) CheckServices(ctx context.Context) error {
	if err := NeedRoot(); err != nil {
		return err
	}
	if !c.Alive(PartAPIServer) {
		return errNoCluster
	}
	if err := c.loadProbe(); err != nil {
		return err
	}
	const ns = "svcprobe"
	if err := c.freshNamespace(ctx, ns); err != nil {
		return err
	}
	defer func() { _, _ = c.kubectl("delete", "namespace", ns, "--timeout=120s") }()
	var pods strings.Builder
	for _, pod := range []string{"server", "client"} {
		fmt.Fprintf(&pods, `apiVersion: v1
kind: Pod
metadata: {name: %[1]s, namespace: %[2]s, labels: {app: svcprobe-%[1]s}}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - {name: svcprobe, image: %[3]s, imagePullPolicy: Never, args: [serve, -addr, ":8080"]}
---
`, pod, ns, probeImage)
	}
	if _, err := c.kubectlIn(pods.String(), "apply", "-f", "-"); err != nil {
		return err
	}
	if _, err := c.kubectl("-n", ns, "create", "service", "clusterip", "probe", "--tcp=80:8080"); err != nil {
		return err
	}
	if _, err := c.kubectl("-n", ns, "set", "selector", "service", "probe", "app=svcprobe-server"); err != nil {
		return err
	}
	if _, err := c.kubectl("-n", ns, "wait", "--for=condition=Ready", "pod", "--all", "--timeout=120s"); err != nil {
		out, _ := c.kubectl("-n", ns, "get", "pods", "-o", "wide")
		return fmt.Errorf("the probe pods are not Ready: %w\n%s", err, out)
	}
	ip, err := c.kubectl("-n", ns, "get", "service", "probe", "-o", "jsonpath={.spec.clusterIP}")
	if err != nil {
		return err
	}
	// A pod is Ready a moment before kube-proxy's next sync sends its
	// Service there (until then the ClusterIP refuses connections).
	if err := c.waitFor(ctx, PartProxy, 30*time.Second, "rules for "+ns+"/probe", proxyHasEndpoint(ns+"/probe")); err != nil {
		return err
	}
	Logf("service %s/probe: ClusterIP %s", ns, ip)
	failed := false
	for _, pod := range []string{"client", "server"} {
		fmt.Printf("from pod %s:\n", pod)
		for _, args := range [][]string{{"dial", ip + ":80", "probe." + ns + ".svc.cluster.local:80"}, {"api", "env", "kubernetes.default.svc.cluster.local"}} {
			out, err := c.kubectl(append([]string{"-n", ns, "exec", pod, "--", "/ko-app/svcprobe"}, args...)...)
			fmt.Print(out)
			failed = failed || err != nil
		}
	}
	out, _ := c.kubectl("-n", ns, "logs", "server")
	fmt.Printf("server's log (the peers it saw):\n%s", out)
	if failed {
		return errors.New("ClusterIP Services check FAILED")
	}
	Logf("ClusterIP Services work")
	return nil
}

// CheckNodes proves the nodes are nodes, one at a time:
//  1. every node Ready, with an IP of its own;
//  2. a StatefulSet of one pod per node under a required pod anti-affinity
//     on kubernetes.io/hostname lands one pod on each node, each with a
//     local PersistentVolume of its own node bound (the pod writes its name
//     into it, found on that node's directory on the disk); one more
//     replica stays Pending, and the scheduler names the anti-affinity;
//  3. from every pod: every other pod by pod IP (across nodes), the
//     Service by ClusterIP and by DNS name, the API server; exec and logs
//     on every node;
//  4. stopping one node's kubelet leaves every other node's containers
//     running (the same tasks, no restart), and the node comes back.
func (c *Cluster) CheckNodes(ctx context.Context) error {
	if err := NeedRoot(); err != nil {
		return err
	}
	if !c.Alive(PartAPIServer) {
		return errNoCluster
	}
	if err := c.checkNodesReady(); err != nil {
		return err
	}
	if err := c.loadProbe(); err != nil {
		return err
	}
	const ns = "nodecheck"
	if err := c.freshNamespace(ctx, ns); err != nil {
		return err
	}
	cleanup := func() {
		_, _ = c.kubectl("delete", "namespace", ns, "--timeout=120s")
		_, _ = c.kubectl("delete", "pv", "-l", "streambench.io/check=nodes", "--timeout=60s")
		_, _ = c.kubectl("delete", "storageclass", "nodecheck-local", "--ignore-not-found")
		for _, n := range c.Nodes {
			for _, slot := range volumeSlots {
				_ = os.RemoveAll(nodeCheckDir(n, slot))
			}
		}
	}
	cleanup()
	if err := c.freshNamespace(ctx, ns); err != nil {
		return err
	}
	defer cleanup()
	// The volumes' directories, before a pod mounts one; writable by the
	// probe, which runs as ko's nonroot user.
	for _, n := range c.Nodes {
		for _, slot := range volumeSlots {
			if err := os.MkdirAll(nodeCheckDir(n, slot), 0o755); err != nil {
				return err
			}
			if err := os.Chmod(nodeCheckDir(n, slot), 0o1777); err != nil {
				return err
			}
		}
	}
	if _, err := c.kubectlIn(c.NodeCheckObjects(ns), "apply", "-f", "-"); err != nil {
		return err
	}
	pods, err := c.checkSpread(ctx, ns)
	if err != nil {
		return err
	}
	if err := c.checkOneTooMany(ctx, ns); err != nil {
		return err
	}
	if err := c.checkReach(ctx, ns, pods); err != nil {
		return err
	}
	if len(c.Nodes) > 1 {
		if err := c.checkKubeletAlone(ctx, pods); err != nil {
			return err
		}
	}
	Logf("%d node(s) are nodes: one pod each under anti-affinity, a local volume each, pods reach each other, Services and DNS from every node, exec and logs on every node%s",
		len(c.Nodes), map[bool]string{true: ", a stopped kubelet leaves the other nodes' pods alone", false: ""}[len(c.Nodes) > 1])
	return nil
}

// volumeSlots are the local volumes check-nodes makes on each node: one
// for the node's pod, and one spare, so that the one pod too many finds a
// free volume on every node and only the anti-affinity keeps it off (the
// scheduler names the volumes first when they are what is missing).
var volumeSlots = []string{"a", "b"}

func nodeCheckDir(n Node, slot string) string {
	return filepath.Join(n.Dir, "nodecheck-volume-"+slot)
}

func nodeCheckPV(n Node, slot string) string { return "nodecheck-" + slot + "-" + string(n.Name) }

// NodeCheckObjects are check-nodes' objects: a static local class, two PVs
// per node (their paths name the node, their node affinity is that node),
// a Service, and the StatefulSet of one pod per node.
func (c *Cluster) NodeCheckObjects(ns string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: nodecheck-local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
`)
	for _, n := range c.Nodes {
		for _, slot := range volumeSlots {
			fmt.Fprintf(&b, `---
apiVersion: v1
kind: PersistentVolume
metadata: {name: %[3]s, labels: {streambench.io/check: nodes}}
spec:
  capacity: {storage: 1Mi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Delete
  storageClassName: nodecheck-local
  local: {path: %[2]s}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: kubernetes.io/hostname, operator: In, values: [%[1]s]}
`, n.Name, nodeCheckDir(n, slot), nodeCheckPV(n, slot))
		}
	}
	fmt.Fprintf(&b, `---
apiVersion: v1
kind: Service
metadata: {name: spread, namespace: %[1]s}
spec:
  selector: {app: spread}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: spread, namespace: %[1]s}
spec:
  replicas: %[2]d
  serviceName: spread
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: spread}}
  template:
    metadata: {labels: {app: spread}}
    spec:
      terminationGracePeriodSeconds: 0
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - topologyKey: kubernetes.io/hostname
            labelSelector: {matchLabels: {app: spread}}
      containers:
      - name: svcprobe
        image: %[3]s
        imagePullPolicy: Never
        args: [serve, -addr, ":8080", -mark, /data/pod]
        volumeMounts: [{name: data, mountPath: /data}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      storageClassName: nodecheck-local
      resources: {requests: {storage: 1Mi}}
`, ns, len(c.Nodes), probeImage)
	return b.String()
}

// checkNodesReady: every node Ready, every node IP distinct.
func (c *Cluster) checkNodesReady() error {
	var nodes corev1.NodeList
	if err := c.getJSON(&nodes, "get", "nodes", "-o", "json"); err != nil {
		return err
	}
	seen := map[string]string{}
	ready := 0
	for _, n := range nodes.Items {
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				ready++
			}
		}
		for _, a := range n.Status.Addresses {
			if a.Type != corev1.NodeInternalIP {
				continue
			}
			if other, dup := seen[a.Address]; dup {
				return fmt.Errorf("nodes %s and %s have the same IP %s", other, n.Name, a.Address)
			}
			seen[a.Address] = n.Name
		}
	}
	if ready != len(c.Nodes) || len(nodes.Items) != len(c.Nodes) {
		return fmt.Errorf("%d of %d node(s) Ready (%d Node objects); want every one of %s", ready, len(c.Nodes), len(nodes.Items), nodeList(c.Nodes))
	}
	fmt.Printf("nodes: %d Ready, IPs %v\n", ready, seen)
	return nil
}

func (c *Cluster) getJSON(into any, args ...string) error {
	out, err := run(filepath.Join(c.Bin, "kubectl"), append([]string{"--kubeconfig", c.Kubeconfig()}, args...)...)
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(out), into)
}

// checkSpread waits for the StatefulSet's pods and checks one per node,
// each node's volume bound on that node, holding the pod's name.
func (c *Cluster) checkSpread(ctx context.Context, ns string) (map[NodeName]corev1.Pod, error) {
	if _, err := c.kubectl("-n", ns, "rollout", "status", "statefulset/spread", "--timeout=180s"); err != nil {
		out, _ := c.kubectl("-n", ns, "get", "pods,pvc", "-o", "wide")
		return nil, fmt.Errorf("the StatefulSet's %d pods are not Ready: %w\n%s", len(c.Nodes), err, out)
	}
	var pods corev1.PodList
	if err := c.getJSON(&pods, "-n", ns, "get", "pods", "-l", "app=spread", "-o", "json"); err != nil {
		return nil, err
	}
	byNode := map[NodeName]corev1.Pod{}
	for _, p := range pods.Items {
		if other, dup := byNode[NodeName(p.Spec.NodeName)]; dup {
			return nil, fmt.Errorf("pods %s and %s both on node %s despite the required anti-affinity", other.Name, p.Name, p.Spec.NodeName)
		}
		byNode[NodeName(p.Spec.NodeName)] = p
	}
	for _, n := range c.Nodes {
		p, ok := byNode[n.Name]
		if !ok {
			return nil, fmt.Errorf("no pod on node %s (placement: %v)", n.Name, placement(byNode))
		}
		// The volume is the node's: its PV names the node, and the pod's
		// mark is in that node's directory.
		pv, err := c.kubectl("-n", ns, "get", "pvc", "data-"+p.Name, "-o", "jsonpath={.spec.volumeName}")
		if err != nil {
			return nil, err
		}
		slot := ""
		for _, s := range volumeSlots {
			if pv == nodeCheckPV(n, s) {
				slot = s
			}
		}
		if slot == "" {
			return nil, fmt.Errorf("pod %s on node %s has volume %q, not one of its node's", p.Name, n.Name, pv)
		}
		// The pod is Ready once started; it writes its mark right then.
		markFile := filepath.Join(nodeCheckDir(n, slot), "pod")
		if err := c.waitFor(ctx, n.KubeletPart(), 20*time.Second, "pod "+p.Name+"'s mark in "+markFile, func() error {
			mark, err := os.ReadFile(markFile)
			if err != nil {
				return err
			}
			if got := strings.TrimSpace(string(mark)); got != p.Name {
				return fmt.Errorf("it holds %q", got)
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("node %s's volume is not where its PV says: %w", n.Name, err)
		}
	}
	fmt.Printf("one pod per node, each with its node's volume: %v\n", placement(byNode))
	return byNode, nil
}

func placement(byNode map[NodeName]corev1.Pod) string {
	var parts []string
	for n, p := range byNode {
		parts = append(parts, p.Name+"@"+string(n))
	}
	return strings.Join(parts, " ")
}

// checkOneTooMany scales to one pod more than nodes: it must stay Pending,
// and the scheduler must say the anti-affinity is why.
func (c *Cluster) checkOneTooMany(ctx context.Context, ns string) error {
	extra := fmt.Sprintf("spread-%d", len(c.Nodes))
	if _, err := c.kubectl("-n", ns, "scale", "statefulset/spread", fmt.Sprintf("--replicas=%d", len(c.Nodes)+1)); err != nil {
		return err
	}
	var msg string
	err := c.waitFor(ctx, PartScheduler, 60*time.Second, "pod "+extra+" to be found unschedulable", func() error {
		var p corev1.Pod
		if err := c.getJSON(&p, "-n", ns, "get", "pod", extra, "-o", "json"); err != nil {
			return err
		}
		if p.Spec.NodeName != "" {
			return fmt.Errorf("pod %s was scheduled to %s", extra, p.Spec.NodeName)
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
				msg = cond.Message
				return nil
			}
		}
		return errors.New("not yet marked Unschedulable")
	})
	if err != nil {
		return err
	}
	if !strings.Contains(msg, "anti-affinity") {
		return fmt.Errorf("pod %s is unschedulable, but not for the anti-affinity: %s", extra, msg)
	}
	fmt.Printf("pod %s stays Pending: %s\n", extra, msg)
	_, err = c.kubectl("-n", ns, "scale", "statefulset/spread", fmt.Sprintf("--replicas=%d", len(c.Nodes)))
	return err
}

// checkReach: from every pod, every pod IP, the Service by ClusterIP and
// by name, the API server; exec (the probes) and logs on every node.
func (c *Cluster) checkReach(ctx context.Context, ns string, pods map[NodeName]corev1.Pod) error {
	ip, err := c.kubectl("-n", ns, "get", "service", "spread", "-o", "jsonpath={.spec.clusterIP}")
	if err != nil {
		return err
	}
	if err := c.waitFor(ctx, PartProxy, 30*time.Second, "rules for "+ns+"/spread", proxyHasEndpoint(ns+"/spread")); err != nil {
		return err
	}
	targets := []string{ip + ":80", "spread." + ns + ".svc.cluster.local:80"}
	for _, p := range pods {
		targets = append(targets, p.Status.PodIP+":8080")
	}
	for _, n := range c.Nodes {
		p := pods[n.Name]
		out, err := c.kubectl(append([]string{"-n", ns, "exec", p.Name, "--", "/ko-app/svcprobe", "dial"}, targets...)...)
		fmt.Printf("from pod %s on node %s:\n%s", p.Name, n.Name, out)
		if err != nil {
			return fmt.Errorf("pod %s on node %s: %w", p.Name, n.Name, err)
		}
		if out, err := c.kubectl("-n", ns, "exec", p.Name, "--", "/ko-app/svcprobe", "api", "env"); err != nil {
			return fmt.Errorf("pod %s on node %s cannot reach the API server: %w", p.Name, n.Name, err)
		} else {
			fmt.Print(out)
		}
		logs, err := c.kubectl("-n", ns, "logs", p.Name)
		if err != nil || !strings.Contains(logs, "serving on") {
			return fmt.Errorf("logs of pod %s on node %s: %q %v", p.Name, n.Name, logs, err)
		}
	}
	return nil
}

// checkKubeletAlone stops the last node's kubelet (a kubelet kills every
// running pod it does not know: on a shared containerd it would kill the
// others'), waits for a few of the kubelets' housekeeping rounds (2 s
// each), and checks that every node's containers are the tasks they were;
// then starts the kubelet again and waits for its node.
func (c *Cluster) checkKubeletAlone(ctx context.Context, pods map[NodeName]corev1.Pod) error {
	before := map[NodeName]string{}
	for _, n := range c.Nodes {
		out, err := ctr(n, "tasks", "ls")
		if err != nil {
			return err
		}
		before[n.Name] = out
	}
	last := c.Nodes[len(c.Nodes)-1]
	Logf("stopping the kubelet of node %s for 15s", last.Name)
	c.stop(last.KubeletPart())
	time.Sleep(15 * time.Second)
	var changed []string
	for _, n := range c.Nodes {
		out, err := ctr(n, "tasks", "ls")
		if err != nil {
			return err
		}
		if out != before[n.Name] {
			changed = append(changed, fmt.Sprintf("node %s: before\n%safter\n%s", n.Name, before[n.Name], out))
		}
	}
	if err := c.startKubelet(ctx, last); err != nil {
		return err
	}
	if len(changed) > 0 {
		return fmt.Errorf("with node %s's kubelet stopped, containers changed:\n%s", last.Name, strings.Join(changed, "\n"))
	}
	if err := c.waitFor(ctx, last.KubeletPart(), 60*time.Second, "node "+string(last.Name)+" Ready", func() error {
		st, _ := c.kubectl("get", "node", string(last.Name), "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
		if st != "True" {
			return errors.New("not Ready")
		}
		return nil
	}); err != nil {
		return err
	}
	fmt.Printf("with node %s's kubelet stopped for 15s, every node's containers ran on (%d pods); the kubelet is back\n", last.Name, len(pods))
	return nil
}
