//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// The test cluster's nodes as the managed specs use them: the local
// cluster's are real kubelets of this host (`make local-cluster-up
// LOCAL_CLUSTER_NODES=3` in CI: streambench-local, -2, -3), kind's are
// containers. The samples pin brokers and bookies to the node pool
// node-pool=streaming; the specs give that label to every node that takes
// pods, so one-broker runs land on any of them and three-broker runs on
// one each.

// streamingPool is the samples' node pool: the label the specs put on the
// nodes (config/samples, placement.nodeSelector).
const streamingPoolLabel, streamingPool = "node-pool", "streaming"

// threeNodesFix is what a cluster with too few nodes for the samples as
// written needs.
const threeNodesFix = "start the local cluster with `make local-cluster-up LOCAL_CLUSTER_NODES=3` " +
	"(what .ci/run does), or kind with hack/kind/cluster.yaml (`make kind-up`)"

// schedulableNodes are the nodes that take pods: none of their taints
// refuses them (kind's control plane, tainted NoSchedule, does not), by
// name.
func schedulableNodes(ctx context.Context) []corev1.Node {
	var all corev1.NodeList
	Expect(k8s.List(ctx, &all)).To(Succeed())
	var out []corev1.Node
	for _, n := range all.Items {
		if n.Spec.Unschedulable || slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}) {
			continue
		}
		out = append(out, n)
	}
	Expect(out).NotTo(BeEmpty(), "no node of the cluster takes pods")
	slices.SortFunc(out, func(a, b corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// labelStreamingNodes labels every node that takes pods for the samples'
// node pool (node-pool=streaming) and returns them. The label stays until
// the suite ends (unlabelStreamingNodes, process 1): the managed specs of
// parallel processes share the nodes, and one container's end must not
// take the label from under another's next run.
func labelStreamingNodes(ctx context.Context) []corev1.Node {
	nodes := schedulableNodes(ctx)
	By(fmt.Sprintf("labelling %s for the samples' node pool (%s=%s)", strings.Join(nodeNames(nodes), ", "), streamingPoolLabel, streamingPool))
	for _, n := range nodes {
		kubectl(nil, "label", "node", n.Name, streamingPoolLabel+"="+streamingPool, "--overwrite")
	}
	return nodes
}

// unlabelStreamingNodes removes what labelStreamingNodes set, once no
// spec runs any more.
func unlabelStreamingNodes(ctx context.Context) {
	if k8s == nil {
		// The suite's setup failed before it had a client: it labelled
		// nothing, and a panic here would bury why it failed.
		return
	}
	var all corev1.NodeList
	if err := k8s.List(ctx, &all, client.MatchingLabels{streamingPoolLabel: streamingPool}); err != nil {
		return
	}
	for _, n := range all.Items {
		_, _ = kubectlE(nil, "label", "node", n.Name, streamingPoolLabel+"-")
	}
}

// expectThreeNodes fails, naming the fix, unless the pool has the three
// nodes the samples' three brokers (or bookies) need, one each under
// their required anti-affinity.
func expectThreeNodes(nodes []corev1.Node) {
	Expect(len(nodes)).To(BeNumerically(">=", 3),
		"the samples as written run three brokers (Kafka) and three bookies (Pulsar), one per node: this cluster has %d node(s) that take pods (%s); %s",
		len(nodes), strings.Join(nodeNames(nodes), ", "), threeNodesFix)
}

func nodeNames(nodes []corev1.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	return out
}

// nodeInternalIP is the node's InternalIP address, "" without one.
func nodeInternalIP(n corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

// nodesAreThisHost: every node's InternalIP is an address of this host
// (the local cluster: each kubelet on its own bridge here), so pods'
// addresses are reachable from here, and a node's directories are this
// host's.
func nodesAreThisHost(ctx context.Context) bool {
	var nodes corev1.NodeList
	Expect(k8s.List(ctx, &nodes)).To(Succeed())
	addrs, err := net.InterfaceAddrs()
	Expect(err).NotTo(HaveOccurred())
	local := map[string]bool{}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			local[ipn.IP.String()] = true
		}
	}
	if len(nodes.Items) == 0 {
		return false
	}
	for _, n := range nodes.Items {
		if !local[nodeInternalIP(n)] {
			return false
		}
	}
	return true
}

// expectOnePerNode checks that pods (of one component) are replicas
// running on replicas distinct nodes, read from their spec.nodeName, and
// returns the nodes, in the pods' order.
func expectOnePerNode(pods []corev1.Pod, replicas int, what string) []string {
	Expect(pods).To(HaveLen(replicas), "%s pods", what)
	var nodes []string
	for _, p := range pods {
		Expect(p.Spec.NodeName).NotTo(BeEmpty(), "%s pod %s has no node", what, p.Name)
		Expect(nodes).NotTo(ContainElement(p.Spec.NodeName), "%s pods %s share node %s: one per node is required", what, podNames(pods), p.Spec.NodeName)
		nodes = append(nodes, p.Spec.NodeName)
	}
	return nodes
}

func podNames(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// podsOnNodes lists, from each node's kubelet (through the API server's
// node proxy, as `kubectl get --raw /api/v1/nodes/<n>/proxy/pods`), the
// pods of ns matching selector that the kubelet still runs: the API's
// view of a deleted pod ends before its node's does.
func podsOnNodes(nodes []corev1.Node, ns string, selector labels.Selector) []string {
	var out []string
	for _, n := range nodes {
		raw := kubectl(nil, "get", "--raw", "/api/v1/nodes/"+n.Name+"/proxy/pods")
		var pods corev1.PodList
		Expect(json.Unmarshal([]byte(raw), &pods)).To(Succeed(), "the kubelet's pods of %s", n.Name)
		for _, p := range pods.Items {
			if p.Namespace == ns && selector.Matches(labels.Set(p.Labels)) {
				out = append(out, n.Name+"/"+p.Name)
			}
		}
	}
	return out
}

// expectOneMachine checks that the run says its nodes are one machine:
// the suite's clusters (the local cluster's kubelets, kind's node
// containers) are nodes of one host, and a run on them must not present
// its per-node figures as several machines' (status.testbed.machines,
// from the nodes' boot ids).
func expectOneMachine(run *v1alpha1.BenchmarkRun, nodes []string) {
	GinkgoHelper()
	m := run.Status.Testbed.Machines
	Expect(m).NotTo(BeNil(), "status.testbed.machines")
	Expect(m.Machines).To(Equal(int32(1)), "the nodes of the test cluster are one host's: %s", m.Note)
	Expect(m.Nodes).To(BeNumerically(">=", len(nodes)), m.Note)
	Expect(m.Hosts).To(HaveLen(1), m.Note)
	Expect(m.Hosts[0].Nodes).To(ContainElements(nodes), m.Note)
	Expect(m.Hosts[0].By).To(Equal(v1alpha1.HostBootID), m.Note)
	logf("machines: %s", m.Note)
}
