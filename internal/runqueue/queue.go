// Package runqueue decides which managed runs may deploy their brokers now
// and which must wait for another run on the same nodes (issue 44). Its
// functions are pure: the controller lists the runs, nodes, volumes and
// classes and asks; nothing here calls the API server.
//
// Why a queue at all: `kubectl apply -k config/samples` creates nine
// managed runs at once, all pinned to node-pool=streaming. Kafka's
// anti-affinity is per cluster, so the clusters of different runs share
// nodes (and measure each other's load) or sit Pending for want of room
// and fail at their provisioning deadline; and each run's teardown leaves
// the static local volumes Released, so the next run's claims cannot bind.
// One run at a time per set of nodes, in creation order, is what makes the
// samples run one after another.
package runqueue

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/nodefit"
)

// Ref names a run.
type Ref struct {
	Namespace, Name string
}

func (r Ref) String() string { return r.Namespace + "/" + r.Name }

// RefOf names run.
func RefOf(run *v1alpha1.BenchmarkRun) Ref { return Ref{Namespace: run.Namespace, Name: run.Name} }

// Nodes is what the controller could read of the cluster's Nodes.
type Nodes struct {
	// Known is false when the Nodes could not be read (no permission):
	// then two placements are compared by their node selectors alone.
	Known bool
	// Items are every Node of the cluster.
	Items []corev1.Node
}

// Holder is a run another one waits for.
type Holder struct {
	Run Ref
	// Phase is the holder's phase ("" for a run not looked at yet).
	Phase v1alpha1.Phase
	// Why says what the holder does on which nodes, e.g.
	// "Provisioning on the same nodes: node-pool=streaming".
	Why string
	// Earlier is true when the holder waits itself and is only ahead by
	// creation order; false when it holds the nodes now.
	Earlier bool
}

// Wait is what Ahead found.
type Wait struct {
	// Ahead are the runs the run waits for, the ones holding the nodes
	// first, then the ones queued before it in creation order; empty when
	// it may go.
	Ahead []Holder
	// Kept are finished runs on the same nodes whose brokers stay
	// (spec.teardown.policy Never, or OnSuccess after a failure): waiting
	// for them would be waiting forever, so the run goes, and says so.
	Kept []Ref
}

// Waiting reports whether the run must wait.
func (w Wait) Waiting() bool { return len(w.Ahead) > 0 }

// Message says whom the run waits for, or, when it may go, what it found.
func (w Wait) Message() string {
	var b strings.Builder
	if len(w.Ahead) > 0 {
		h := w.Ahead[0]
		fmt.Fprintf(&b, "waiting for run %s (%s)", h.Run, h.Why)
		if len(w.Ahead) > 1 {
			rest := make([]string, 0, len(w.Ahead)-1)
			for _, o := range w.Ahead[1:] {
				rest = append(rest, o.Run.String())
			}
			fmt.Fprintf(&b, "; also ahead of it: %s", nodefit.Names(rest))
		}
	} else {
		b.WriteString("no other run holds or waits for the brokers' nodes")
	}
	if len(w.Kept) > 0 {
		kept := make([]string, len(w.Kept))
		for i, k := range w.Kept {
			kept[i] = k.String()
		}
		fmt.Fprintf(&b, "; finished run(s) %s keep their brokers on the same nodes (spec.teardown.policy): delete them to free the nodes", nodefit.Names(kept))
	}
	return b.String()
}

// Ahead says which runs run must wait for before it deploys its brokers.
// others are the BenchmarkRuns of every namespace (run among them or not).
//
// Only managed runs pinned to nodes queue (Pinned): an existing cluster's
// run deploys no brokers, and an unpinned one asked for no nodes of its own.
// Two managed runs conflict when their broker placements can select the
// same node (Overlap). Another run O is ahead of run when they conflict and
//   - O holds the nodes: it left the queue (Admitted) and has not
//     finished, or it finished and its teardown, which its policy asks
//     for, is not done (condition TornDown), or it is being deleted (its
//     finalizer is removing its brokers); or
//   - O waits itself and was created earlier (creationTimestamp, then
//     namespace/name), so runs leave the queue in creation order.
//
// A run being deleted that never left the queue holds nothing and is not
// waited for; a deleted run is not in others at all.
func Ahead(run *v1alpha1.BenchmarkRun, others []v1alpha1.BenchmarkRun, nodes Nodes) Wait {
	var w Wait
	if run.Spec.Cluster.Managed == nil || !Pinned(run.Spec.Cluster.Managed.Placement) {
		return w
	}
	me := RefOf(run)
	for i := range others {
		o := &others[i]
		if RefOf(o) == me || o.Spec.Cluster.Managed == nil || !Pinned(o.Spec.Cluster.Managed.Placement) {
			continue
		}
		overlap, where := Overlap(run.Spec.Cluster.Managed.Placement, o.Spec.Cluster.Managed.Placement, nodes)
		if !overlap {
			continue
		}
		h := Holder{Run: RefOf(o), Phase: o.Status.Phase}
		switch {
		case !o.DeletionTimestamp.IsZero():
			if !Admitted(o) {
				continue
			}
			h.Why = "being deleted, its brokers going, on " + where
		case o.Status.Phase.Finished():
			if !o.WantsTeardown() {
				w.Kept = append(w.Kept, h.Run)
				continue
			}
			if meta.IsStatusConditionTrue(o.Status.Conditions, v1alpha1.ConditionTornDown) {
				continue
			}
			h.Why = fmt.Sprintf("%s, being torn down, on %s", o.Status.Phase, where)
		case Admitted(o):
			h.Why = fmt.Sprintf("%s on %s", o.Status.Phase, where)
		case Before(o, run):
			h.Earlier = true
			h.Why = fmt.Sprintf("created earlier, %s on %s", phaseName(o.Status.Phase), where)
		default:
			continue
		}
		w.Ahead = append(w.Ahead, h)
	}
	byRun := map[Ref]*v1alpha1.BenchmarkRun{}
	for i := range others {
		byRun[RefOf(&others[i])] = &others[i]
	}
	sort.SliceStable(w.Ahead, func(i, j int) bool {
		a, b := w.Ahead[i], w.Ahead[j]
		if a.Earlier != b.Earlier {
			return !a.Earlier
		}
		return Before(byRun[a.Run], byRun[b.Run])
	})
	sort.Slice(w.Kept, func(i, j int) bool { return Before(byRun[w.Kept[i]], byRun[w.Kept[j]]) })
	return w
}

// Pinned reports whether a broker placement asks for particular nodes: a
// nodeSelector or required node affinity terms. Only pinned runs queue.
// An unpinned run goes wherever the scheduler puts it, beside whatever
// else runs there (workers, other runs, other applications): there is no
// pool to hand it alone, and on the README's pool, which is tainted, it
// never lands at all. (It also keeps envtest's specs apart: their runs are
// unpinned, and many are left mid-flight on one API server.)
func Pinned(p v1alpha1.Placement) bool {
	if len(p.NodeSelector) > 0 {
		return true
	}
	a := p.Affinity
	return a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil &&
		len(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) > 0
}

// Admitted reports whether run has left the queue: its Queued condition
// is False, or it is past Pending and Queued (a run from before the queue
// existed, or one that never needed it).
func Admitted(run *v1alpha1.BenchmarkRun) bool {
	switch run.Status.Phase {
	case "", v1alpha1.PhasePending, v1alpha1.PhaseQueued:
		return meta.IsStatusConditionFalse(run.Status.Conditions, v1alpha1.ConditionQueued)
	}
	return true
}

// Before orders runs by creation: creationTimestamp, then namespace and
// name (a timestamp has whole seconds, and kubectl apply -k creates nine
// runs within one).
func Before(a, b *v1alpha1.BenchmarkRun) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

func phaseName(p v1alpha1.Phase) string {
	if p == "" {
		return "new"
	}
	return string(p)
}

// Overlap reports whether brokers placed by a and by b can land on the
// same node, and names where.
//
// With the Nodes known, it is exact for the cluster as it is: the two
// placements conflict when some Node matches both (nodeSelector, required
// node affinity, NoSchedule/NoExecute taints tolerated). Readiness and
// cordoning are left out on purpose: a NotReady or cordoned node of the
// pool still holds the pods and the local volumes of the run placed there,
// and comes back with them, so the taints the node lifecycle controller
// sets for those states (node.kubernetes.io/...) are ignored too. A
// cluster without Nodes (an API server alone, as envtest's) has nothing
// to collide on, and nothing queues. What this misses: a node pool that
// scales from zero has no Node until a pod waits for one, so two runs
// pinned to it do not queue; with such a pool, pin the runs to a label
// that also exists on a standing node, or run them one at a time.
//
// Without the Nodes (no permission to list them) the node selectors are
// compared: the same key with different values cannot select the same
// node; anything else (equal selectors, one a subset of the other, keys
// of their own, affinity terms, none at all) may.
func Overlap(a, b v1alpha1.Placement, nodes Nodes) (bool, string) {
	if !nodes.Known {
		for k, va := range a.NodeSelector {
			if vb, ok := b.NodeSelector[k]; ok && va != vb {
				return false, ""
			}
		}
		merged := map[string]string{}
		for k, v := range a.NodeSelector {
			merged[k] = v
		}
		for k, v := range b.NodeSelector {
			merged[k] = v
		}
		if len(merged) == 0 {
			return true, "any node (no spec.cluster.managed.placement.nodeSelector)"
		}
		return true, "the same nodes: " + nodefit.SelectorText(merged)
	}
	var shared []string
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if Matches(a, n) && Matches(b, n) {
			shared = append(shared, n.Name)
		}
	}
	if len(shared) == 0 {
		return false, ""
	}
	sort.Strings(shared)
	return true, "the same nodes: " + nodefit.Names(shared)
}

// Matches reports whether a pod of placement p may be scheduled on node n
// as far as labels and taints go (see Overlap for what is left out).
func Matches(p v1alpha1.Placement, n *corev1.Node) bool {
	return nodefit.Matches(p, n, nodefit.LastingTaints)
}
