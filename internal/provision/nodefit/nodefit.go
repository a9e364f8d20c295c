// Package nodefit answers, for a Placement (node selector, affinity,
// tolerations) and a Node, the questions the scheduler would, as far as
// labels and taints go, and words the answers for messages. The worker
// check (internal/provision/workers: can any node take the workers?) and
// the run queue (internal/runqueue: can two runs' brokers share a node?)
// ask the same questions.
package nodefit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// Taints says which of a node's taints a pod must tolerate to be scheduled
// there.
type Taints int

const (
	// AllTaints: every NoSchedule and NoExecute taint, the node's
	// lifecycle ones (node.kubernetes.io/not-ready, unreachable, ...)
	// included: a pod placed now must tolerate what the node says now.
	AllTaints Taints = iota
	// LastingTaints leaves out the node lifecycle taints
	// (node.kubernetes.io/*): a node NotReady for a moment still holds its
	// pods and its local disks.
	LastingTaints
)

// UntoleratedTaint is the first NoSchedule or NoExecute taint of n that
// tolerations do not tolerate, if any.
func UntoleratedTaint(n *corev1.Node, tolerations []corev1.Toleration, which Taints) (corev1.Taint, bool) {
	return v1helper.FindMatchingUntoleratedTaint(logr.Discard(), n.Spec.Taints, tolerations, func(t *corev1.Taint) bool {
		if which == LastingTaints && strings.HasPrefix(t.Key, "node.kubernetes.io/") {
			return false
		}
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, true)
}

// RequiredAffinity is the node-level part of a placement the scheduler
// requires: its nodeSelector (when withSelector) and required node
// affinity.
func RequiredAffinity(p v1alpha1.Placement, withSelector bool) nodeaffinity.RequiredNodeAffinity {
	spec := corev1.PodSpec{Affinity: p.Affinity}
	if withSelector {
		spec.NodeSelector = p.NodeSelector
	}
	return nodeaffinity.GetRequiredNodeAffinity(&corev1.Pod{Spec: spec})
}

// Matches says whether a pod of placement p may be scheduled on node n as
// far as labels and taints go.
func Matches(p v1alpha1.Placement, n *corev1.Node, which Taints) bool {
	if ok, err := RequiredAffinity(p, true).Match(n); err != nil || !ok {
		return false
	}
	_, untolerated := UntoleratedTaint(n, p.Tolerations, which)
	return !untolerated
}

// SelectorText is a node selector as kubectl writes one: k=v,k2=v2, sorted.
func SelectorText(sel map[string]string) string {
	kv := make([]string, 0, len(sel))
	for _, k := range SortedKeys(sel) {
		kv = append(kv, k+"="+sel[k])
	}
	return strings.Join(kv, ",")
}

// SortedKeys are a label map's keys in order.
func SortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Names joins at most five names, then says how many more: a message about
// a large cluster stays readable.
func Names(names []string) string {
	const most = 5
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:most], ", "), len(names)-most)
}
