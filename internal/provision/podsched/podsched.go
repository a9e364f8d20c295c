// Package podsched reads, from the pods of a run's brokers, which ones the
// scheduler could not place and the scheduler's own words for why. Strimzi
// and the Pulsar chart say only that they wait for their pods; the pods'
// PodScheduled condition says why (a required anti-affinity on too few
// nodes, a selector no node matches, a taint, resources). Both systems'
// readiness messages are built on it, so the two say the same thing the
// same way.
package podsched

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Stuck is a pod the scheduler marked Unschedulable, with its message
// (e.g. "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity
// rules.").
type Stuck struct {
	Pod     string
	Message string
	// Labels are the pod's, for a caller that words the fix per component.
	Labels map[string]string
}

// Unschedulable returns the pods whose PodScheduled condition is False
// with reason Unschedulable, sorted by name. A pod still waiting for its
// first scheduling attempt (no condition) is not stuck yet.
func Unschedulable(pods []corev1.Pod) []Stuck {
	var out []Stuck
	for _, p := range pods {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				out = append(out, Stuck{Pod: p.Name, Message: c.Message, Labels: p.Labels})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pod < out[j].Pod })
	return out
}

// List words stuck pods as "<pod>: <message>; <pod>: <message>".
func List(stuck []Stuck) string {
	parts := make([]string, len(stuck))
	for i, s := range stuck {
		parts[i] = fmt.Sprintf("%s: %s", s.Pod, s.Message)
	}
	return strings.Join(parts, "; ")
}
