package workers

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/nodefit"
)

// Where the load pods go (issue 44): spread over the nodes the placement
// allows, checked against the cluster's nodes before anything is deployed,
// and recorded once they ran.

// LabelHostname is the node label the workers are spread over.
const LabelHostname = corev1.LabelHostname

// spread keeps a run's workers apart: one node each while there are
// nodes for them, then as even as the nodes allow (maxSkew 1 on the node's
// hostname, counting the run's worker pods). The coordinator carries the
// same constraint, which it does not match itself, so it goes where the
// fewest workers are.
//
// ScheduleAnyway, not DoNotSchedule: with fewer client nodes than workers
// both schedule them (skew counts the difference between nodes, not the
// pods on one), but DoNotSchedule also counts a client node that has no
// room left (a full node, the last run's workers still draining for up to
// WorkerGrace) as an empty domain the others must not outgrow, and would
// keep workers Pending until the run fails as Unschedulable, after the
// brokers were deployed: the late failure this placement exists to avoid.
// The scheduler then packs instead, and status.testbed.workers says so
// (PlacementOf). nodeTaintsPolicy Honor leaves out nodes the workers do not
// tolerate (a cordoned or NotReady node is tainted too), as nodeSelector
// and required node affinity already are (nodeAffinityPolicy's default).
//
// A placement that says itself how the load pods relate (pod affinity or
// anti-affinity in spec.workers.placement.affinity, e.g. workers kept
// together on purpose) gets no constraint of ours.
func spread(run *v1alpha1.BenchmarkRun) []corev1.TopologySpreadConstraint {
	if OwnPodAffinity(run) {
		return nil
	}
	honor := corev1.NodeInclusionPolicyHonor
	return []corev1.TopologySpreadConstraint{{
		MaxSkew:           1,
		TopologyKey:       LabelHostname,
		WhenUnsatisfiable: corev1.ScheduleAnyway,
		LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{LabelRun: run.Name, LabelRole: RoleWorker}},
		NodeTaintsPolicy:  &honor,
	}}
}

// OwnPodAffinity says whether spec.workers.placement says itself how the
// load pods relate to each other (pod affinity or anti-affinity).
func OwnPodAffinity(run *v1alpha1.BenchmarkRun) bool {
	a := run.Spec.Workers.Placement.Affinity
	return a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil)
}

// NodeFit is what CheckNodes found.
type NodeFit struct {
	// Fit are the nodes that could take a worker, by name.
	Fit []string
	// Total is the number of nodes looked at.
	Total int
	// Message says how many fit or, when none does, what each node lacks
	// and the fix, naming spec.workers.placement.
	Message string
}

// unfitKind is why a node cannot take a worker, in the order checked.
type unfitKind int

const (
	unfitSelector unfitKind = iota
	unfitAffinity
	unfitCordoned
	unfitNotReady
	unfitTaint
)

type unfit struct {
	node   string
	detail string
}

// CheckNodes says which of nodes could take a pod of placement p, as the
// scheduler's filters would before resources: Ready, not cordoned,
// matching nodeSelector and the required node affinity, and every
// NoSchedule or NoExecute taint tolerated. A node with room for none is
// still counted: requests are the scheduler's to weigh, and a node busy
// now may be free when the brokers are up.
func CheckNodes(p v1alpha1.Placement, nodes []corev1.Node) NodeFit {
	out := NodeFit{Total: len(nodes)}
	// nodeSelector is matched apart, to name the labels a node lacks.
	affinity := nodefit.RequiredAffinity(p, false)
	unfits := map[unfitKind][]unfit{}
	sorted := append([]corev1.Node(nil), nodes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for i := range sorted {
		n := &sorted[i]
		if !matchesSelector(p.NodeSelector, n) {
			unfits[unfitSelector] = append(unfits[unfitSelector], unfit{n.Name, selectorValues(p.NodeSelector, n)})
			continue
		}
		if ok, err := affinity.Match(n); err != nil || !ok {
			detail := ""
			if err != nil {
				detail = err.Error()
			}
			unfits[unfitAffinity] = append(unfits[unfitAffinity], unfit{n.Name, detail})
			continue
		}
		if n.Spec.Unschedulable {
			unfits[unfitCordoned] = append(unfits[unfitCordoned], unfit{n.Name, ""})
			continue
		}
		if ready, why := nodeReady(n); !ready {
			unfits[unfitNotReady] = append(unfits[unfitNotReady], unfit{n.Name, why})
			continue
		}
		if t, found := nodefit.UntoleratedTaint(n, p.Tolerations, nodefit.AllTaints); found {
			unfits[unfitTaint] = append(unfits[unfitTaint], unfit{n.Name, t.ToString()})
			continue
		}
		out.Fit = append(out.Fit, n.Name)
	}
	if len(out.Fit) > 0 {
		out.Message = fmt.Sprintf("%d of %d nodes can take the workers under spec.workers.placement (%s)", len(out.Fit), out.Total, nodefit.Names(out.Fit))
		return out
	}
	out.Message = refusal(p, out.Total, unfits)
	return out
}

func matchesSelector(sel map[string]string, n *corev1.Node) bool {
	for k, v := range sel {
		if got, ok := n.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// selectorValues is what node n carries under the selector's keys.
func selectorValues(sel map[string]string, n *corev1.Node) string {
	var kv []string
	for _, k := range nodefit.SortedKeys(sel) {
		if v, ok := n.Labels[k]; ok {
			kv = append(kv, k+"="+v)
		} else {
			kv = append(kv, "no "+k)
		}
	}
	return strings.Join(kv, ", ")
}

func nodeReady(n *corev1.Node) (bool, string) {
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			return true, ""
		}
		why := "Ready=" + string(c.Status)
		if c.Reason != "" {
			why += ": " + c.Reason
		}
		return false, why
	}
	return false, "no Ready condition"
}

// refusal names, for each reason no node fits, the nodes and the fix.
func refusal(p v1alpha1.Placement, total int, unfits map[unfitKind][]unfit) string {
	const scaleFromZero = "a node pool that scales from zero has no node until a pod waits for one: there, start the operator with --worker-node-check=false"
	if total == 0 {
		return "no node can run the workers: the cluster has no nodes; add one that spec.workers.placement allows (" + scaleFromZero + ")"
	}
	var found, fixes []string
	for kind := unfitSelector; kind <= unfitTaint; kind++ {
		us := unfits[kind]
		if len(us) == 0 {
			continue
		}
		var list []string
		for _, u := range us {
			if u.detail != "" {
				list = append(list, u.node+" ("+u.detail+")")
			} else {
				list = append(list, u.node)
			}
		}
		who, verb := nodefit.Names(list), "does"
		if len(us) > 1 {
			verb = "do"
		}
		switch kind {
		case unfitSelector:
			sel := nodefit.SelectorText(p.NodeSelector)
			found = append(found, fmt.Sprintf("%s %s not match spec.workers.placement.nodeSelector %s", who, verb, sel))
			fixes = append(fixes, fmt.Sprintf("label a client node (kubectl label node NODE %s) or change spec.workers.placement.nodeSelector", strings.ReplaceAll(sel, ",", " ")))
		case unfitAffinity:
			found = append(found, fmt.Sprintf("%s %s not match the required terms of spec.workers.placement.affinity.nodeAffinity", who, verb))
			fixes = append(fixes, "label a node to match spec.workers.placement.affinity.nodeAffinity or change it")
		case unfitCordoned:
			found = append(found, fmt.Sprintf("%s %s cordoned (spec.unschedulable)", who, map[bool]string{true: "are", false: "is"}[len(us) > 1]))
			fixes = append(fixes, "uncordon a node (kubectl uncordon NODE)")
		case unfitNotReady:
			found = append(found, fmt.Sprintf("%s %s not Ready", who, map[bool]string{true: "are", false: "is"}[len(us) > 1]))
			fixes = append(fixes, "create the run again once a node is Ready")
		case unfitTaint:
			found = append(found, fmt.Sprintf("%s %s taints that spec.workers.placement.tolerations do not tolerate", who, map[bool]string{true: "have", false: "has"}[len(us) > 1]))
			fixes = append(fixes, fmt.Sprintf("add a toleration to spec.workers.placement.tolerations or remove the taint (kubectl taint node %s %s-)", us[0].node, us[0].detail))
		}
	}
	msg := fmt.Sprintf("no node can run the workers: 0 of %d nodes fit spec.workers.placement: %s. Fix: %s", total, strings.Join(found, "; "), strings.Join(fixes, ", or "))
	if len(unfits[unfitSelector])+len(unfits[unfitAffinity]) == total {
		msg += " (" + scaleFromZero + ")"
	}
	return msg
}

// PlacementOf is where the run's load pods ran, from their pods (the
// worker Job's and the coordinator's); false until every worker and the
// coordinator has a node. Workers that share a node are said to be
// co-located: on purpose when the placement's pod affinity asked for it,
// otherwise because the nodes the placement allows were fewer than the
// workers or had no room (spread prefers, it does not insist).
func PlacementOf(run *v1alpha1.BenchmarkRun, pods []corev1.Pod) (*v1alpha1.WorkerPlacement, bool) {
	want := workerCount(run)
	out := &v1alpha1.WorkerPlacement{Workers: want}
	perNode := map[string]int{}
	coordinator := ""
	for _, p := range pods {
		role := p.Labels[LabelRole]
		if p.Labels[LabelRun] != run.Name || (role != RoleWorker && role != RoleCoord) {
			continue
		}
		if p.Spec.NodeName == "" {
			return nil, false
		}
		out.Pods = append(out.Pods, v1alpha1.PodPlacement{Pod: p.Name, Role: role, Node: p.Spec.NodeName})
		if role == RoleWorker {
			perNode[p.Spec.NodeName]++
		} else {
			coordinator = p.Spec.NodeName
		}
	}
	workers := 0
	for _, n := range perNode {
		workers += n
	}
	if workers < int(want) || coordinator == "" {
		return nil, false
	}
	sort.Slice(out.Pods, func(i, j int) bool { return out.Pods[i].Pod < out.Pods[j].Pod })
	out.WorkerNodes = int32(len(perNode))
	out.CoLocated = workers > len(perNode)
	nodes := make([]string, 0, len(perNode))
	for n := range perNode {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	switch {
	case !out.CoLocated && workers == 1:
		out.Note = "1 worker on " + nodes[0]
	case !out.CoLocated:
		out.Note = fmt.Sprintf("%d workers on %d nodes, one each", workers, len(perNode))
	default:
		var each []string
		for _, n := range nodes {
			each = append(each, fmt.Sprintf("%s runs %d", n, perNode[n]))
		}
		out.Note = fmt.Sprintf("%d workers on %s (co-located: %s)", workers, plural(len(perNode), "node"), strings.Join(each, ", "))
		if OwnPodAffinity(run) {
			out.Note += ", as spec.workers.placement.affinity asks"
		} else {
			out.Note += ": workers that share a node share its CPUs and network, so the client side may bound the results; give spec.workers.placement more nodes for a spread"
		}
	}
	out.Note += "; the coordinator on " + coordinator
	switch perNode[coordinator] {
	case 0:
	case 1:
		out.Note += " (with 1 worker)"
	default:
		out.Note += fmt.Sprintf(" (with %d workers)", perNode[coordinator])
	}
	return out, true
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
