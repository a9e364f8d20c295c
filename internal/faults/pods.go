package faults

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// Labels that say a pod's role, where the operator that made it sets
// them: Strimzi's node pools, and the Apache Pulsar chart's components.
const (
	labelStrimziBroker     = "strimzi.io/broker-role"
	labelStrimziController = "strimzi.io/controller-role"
	labelPulsarComponent   = "component"
)

// PodFor picks target's pod among pods: the run's own pods (a managed
// run), or those spec.cluster.existing.faults selects. A pod is
// <role>-<n> when its name ends in -<n> (a StatefulSet's ordinal, a
// Strimzi node id) and its labels give it the role: Strimzi's
// broker/controller role labels, the Pulsar chart's component. Pods
// without either (an existing cluster deployed some other way) have the
// role when their name holds it (…-bookie-1). Never a guess: no pod or
// two pods is an error that says what was looked at. Pure.
func PodFor(target v1alpha1.FaultTarget, pods []corev1.Pod) (*corev1.Pod, error) {
	role, n, err := target.Parse()
	if err != nil {
		return nil, err
	}
	if role == v1alpha1.RoleLeader {
		return nil, fmt.Errorf("target leader names no pod: it is resolved to a broker when the fault comes")
	}
	suffix := "-" + strconv.Itoa(n)
	var match []*corev1.Pod
	var names []string
	for i := range pods {
		p := &pods[i]
		names = append(names, p.Name)
		if strings.HasSuffix(p.Name, suffix) && podHasRole(p, role) {
			match = append(match, p)
		}
	}
	sort.Strings(names)
	switch len(match) {
	case 0:
		if len(names) == 0 {
			return nil, fmt.Errorf("no %s: the run has no pods to choose from (were they deleted?)", target)
		}
		return nil, fmt.Errorf("no pod is %s: none of %s is a %s whose name ends in %s", target, strings.Join(names, ", "), role, suffix)
	case 1:
		if match[0].DeletionTimestamp != nil {
			return nil, fmt.Errorf("pod %s (%s) is being deleted (an earlier fault, or someone else); a fault on it now would measure nothing", match[0].Name, target)
		}
		return match[0], nil
	}
	var got []string
	for _, p := range match {
		got = append(got, p.Name)
	}
	sort.Strings(got)
	return nil, fmt.Errorf("%s is ambiguous: pods %s all are; narrow spec.cluster.existing.faults.podSelector to one cluster", target, strings.Join(got, ", "))
}

func podHasRole(p *corev1.Pod, role v1alpha1.FaultRole) bool {
	l := p.Labels
	_, strimzi := l[labelStrimziBroker]
	if _, c := l[labelStrimziController]; c {
		strimzi = true
	}
	if strimzi {
		switch role {
		case v1alpha1.RoleBroker:
			return l[labelStrimziBroker] == "true"
		case v1alpha1.RoleController:
			return l[labelStrimziController] == "true"
		}
		return false
	}
	if c, ok := l[labelPulsarComponent]; ok {
		return c == string(role)
	}
	return strings.Contains(p.Name, "-"+string(role)+"-")
}

// ContainerIDs are the runtime's ids of the pod's running containers
// (containerd://<id> → <id>), what a signal Job looks for in each host
// process's cgroup. Init containers are done by then and left out.
func ContainerIDs(p *corev1.Pod) []string {
	var ids []string
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil || cs.ContainerID == "" {
			continue
		}
		id := cs.ContainerID
		if i := strings.Index(id, "://"); i >= 0 {
			id = id[i+3:]
		}
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
