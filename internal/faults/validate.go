// Package faults checks a run's fault schedule (spec.faults) against the
// rest of its spec: the measured phase it must fall in, the brokers it
// may hit. Pure: no client, no clock.
//
// The CRD checks each fault alone (the action's enum, the target's
// pattern, the duration format, a Pause's duration) and refuses faults on
// an existing cluster without consent; what needs the workload and the
// topology is checked here, by the controller when a run starts (the run
// fails at once, before anything is deployed) and by local mode after
// admission. Validate repeats the CRD's per-fault checks, so a spec built
// in Go gets the same answers.
package faults

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/workload"
)

// Roles are the roles a system's brokers have, leader included.
func Roles(system v1alpha1.System) []v1alpha1.FaultRole {
	switch system {
	case v1alpha1.SystemKafka:
		return []v1alpha1.FaultRole{v1alpha1.RoleBroker, v1alpha1.RoleController, v1alpha1.RoleLeader}
	case v1alpha1.SystemPulsar:
		return []v1alpha1.FaultRole{v1alpha1.RoleBroker, v1alpha1.RoleBookie, v1alpha1.RoleZooKeeper, v1alpha1.RoleLeader}
	}
	return nil
}

// Topology is how many pods of each role a run's brokers have.
type Topology map[v1alpha1.FaultRole]int32

// TopologyOf is the topology of a managed run's brokers, with the
// defaults of absent counts; false for an existing cluster, whose
// topology is known only when its pods are listed at the fault's time.
// Kafka's managed nodes are brokers and KRaft controllers at once
// (internal/provision/strimzi/nodepool.go), so both roles count them all.
func TopologyOf(spec *v1alpha1.BenchmarkRunSpec) (Topology, bool) {
	m := spec.Cluster.Managed
	if m == nil {
		return nil, false
	}
	switch spec.System {
	case v1alpha1.SystemKafka:
		return Topology{v1alpha1.RoleBroker: m.BrokersOrDefault(), v1alpha1.RoleController: m.BrokersOrDefault()}, true
	case v1alpha1.SystemPulsar:
		return Topology{
			v1alpha1.RoleBroker:    m.BrokersOrDefault(),
			v1alpha1.RoleBookie:    m.BookiesOrDefault(),
			v1alpha1.RoleZooKeeper: m.MetadataStoreReplicasOrDefault(),
		}, true
	}
	return nil, false
}

// countField is the spec field that sets how many pods of a role a
// managed run has, for the fix in a message.
func countField(role v1alpha1.FaultRole) string {
	switch {
	case role == v1alpha1.RoleBookie:
		return "spec.cluster.managed.bookies"
	case role == v1alpha1.RoleZooKeeper:
		return "spec.cluster.managed.metadataStoreReplicas"
	}
	return "spec.cluster.managed.brokers"
}

// Validate returns every problem of spec.faults, each naming its field
// under fldPath (the spec's path) and the fix. No faults: no problems.
func Validate(spec *v1alpha1.BenchmarkRunSpec, fldPath *field.Path) field.ErrorList {
	if len(spec.Faults) == 0 {
		return nil
	}
	var errs field.ErrorList
	fp := fldPath.Child("faults")
	errs = append(errs, consent(spec, fldPath)...)

	phase := workload.TestDuration(spec.Workload)
	topo, known := TopologyOf(spec)
	for i, f := range spec.Faults {
		p := fp.Index(i)
		errs = append(errs, checkAction(f, p)...)
		errs = append(errs, checkTarget(spec.System, topo, known, f.Target, p.Child("target"))...)
		errs = append(errs, checkTiming(f, phase, p)...)
	}
	return append(errs, overlaps(spec.Faults, fp)...)
}

// consent: brokers the run did not deploy are hit only when their owner
// said so (the CRD refuses the same; here for specs built in Go), and
// only when their pods can be found.
func consent(spec *v1alpha1.BenchmarkRunSpec, fldPath *field.Path) field.ErrorList {
	e := spec.Cluster.Existing
	if e == nil {
		return nil
	}
	if e.Faults == nil || !e.Faults.AllowDisruption {
		return field.ErrorList{field.Forbidden(fldPath.Child("faults"),
			"would stop, kill or delete pods of spec.cluster.existing, brokers this run did not deploy and others may use; to do it anyway set spec.cluster.existing.faults.allowDisruption: true (and its podSelector, unless strimziCluster names the cluster), or remove spec.faults")}
	}
	if e.Faults.PodSelector == nil && e.StrimziCluster == nil {
		what := "bootstrapServers"
		if spec.System == v1alpha1.SystemPulsar {
			what = "serviceURL"
		}
		return field.ErrorList{field.Required(fldPath.Child("cluster", "existing", "faults", "podSelector"),
			fmt.Sprintf("nothing says which pods serve %s, so no fault target could be found; select the cluster's pods (e.g. matchLabels: {app: pulsar} for the Apache Pulsar chart's release), or name a Strimzi cluster with strimziCluster", what))}
	}
	return nil
}

func checkAction(f v1alpha1.Fault, p *field.Path) field.ErrorList {
	switch f.Action {
	case v1alpha1.FaultPause:
		if f.Duration == nil {
			return field.ErrorList{field.Required(p.Child("duration"),
				"a Pause needs duration: how long the target stays stopped (SIGSTOP, then SIGCONT), e.g. duration: 30s")}
		}
		if f.Duration.Duration <= 0 {
			return field.ErrorList{field.Invalid(p.Child("duration"), f.Duration.Duration.String(),
				"must be more than 0: how long the target stays stopped, e.g. 30s")}
		}
	case v1alpha1.FaultKill, v1alpha1.FaultDeletePod:
		if f.Duration != nil {
			return field.ErrorList{field.Forbidden(p.Child("duration"),
				fmt.Sprintf("applies to Pause only: a %s has no end of its own (the process or pod comes back when Kubernetes restarts it); remove duration", f.Action))}
		}
	default:
		return field.ErrorList{field.NotSupported(p.Child("action"), f.Action, v1alpha1.FaultActions)}
	}
	return nil
}

// checkTarget: a role the system has, an ordinal its brokers have (when
// the run deploys them; an existing cluster's pods are looked up at the
// fault's time).
func checkTarget(system v1alpha1.System, topo Topology, known bool, t v1alpha1.FaultTarget, p *field.Path) field.ErrorList {
	role, n, err := t.Parse()
	if err != nil {
		return field.ErrorList{field.Invalid(p, string(t), err.Error())}
	}
	if !hasRole(system, role) {
		return field.ErrorList{field.Invalid(p, string(t), wrongRole(system, role))}
	}
	if role == v1alpha1.RoleLeader || !known {
		return nil
	}
	count := topo[role]
	if int32(n) < count {
		return nil
	}
	what := fmt.Sprintf("%s is %d, so the %ss are %s-0 to %s-%d", countField(role), count, role, role, role, count-1)
	if count == 1 {
		what = fmt.Sprintf("%s is 1, so the only %s is %s-0", countField(role), role, role)
	}
	if system == v1alpha1.SystemKafka && role == v1alpha1.RoleController {
		what += " (every broker is a KRaft controller too)"
	}
	return field.ErrorList{field.Invalid(p, string(t),
		fmt.Sprintf("the run has no %s: %s; target one of them, or raise %s", t, what, countField(role)))}
}

func hasRole(system v1alpha1.System, role v1alpha1.FaultRole) bool {
	for _, r := range Roles(system) {
		if r == role {
			return true
		}
	}
	return false
}

// wrongRole names the role the user likely meant on the other system.
func wrongRole(system v1alpha1.System, role v1alpha1.FaultRole) string {
	switch {
	case system == v1alpha1.SystemKafka && role == v1alpha1.RoleZooKeeper:
		return "Kafka runs KRaft, without ZooKeeper: its metadata quorum is the controllers; use controller-<n>"
	case system == v1alpha1.SystemKafka && role == v1alpha1.RoleBookie:
		return "Kafka has no bookies: a broker keeps its partitions' data; use broker-<n>"
	case system == v1alpha1.SystemPulsar && role == v1alpha1.RoleController:
		return "Pulsar's metadata store is ZooKeeper, not KRaft controllers; use zookeeper-<n>"
	}
	roles := make([]string, 0, 4)
	for _, r := range Roles(system) {
		if r == v1alpha1.RoleLeader {
			roles = append(roles, string(r))
			continue
		}
		roles = append(roles, string(r)+"-<n>")
	}
	return fmt.Sprintf("%s has no role %s; its targets are %s", system, role, strings.Join(roles, ", "))
}

// checkTiming: the fault, and a pause's end, inside the measured phase,
// where the results can see it and its recovery.
func checkTiming(f v1alpha1.Fault, phase time.Duration, p *field.Path) field.ErrorList {
	at := f.At.Duration
	if at < 0 {
		return field.ErrorList{field.Invalid(p.Child("at"), at.String(),
			"must be at least 0: the time after the start of the measured phase, e.g. 2m")}
	}
	if at >= phase {
		return field.ErrorList{field.Invalid(p.Child("at"), at.String(),
			fmt.Sprintf("is not inside the measured phase, which lasts %s (spec.workload.testDurationMinutes); set at below %s, or lengthen the phase", phase, phase))}
	}
	if f.Action != v1alpha1.FaultPause || f.Duration == nil || f.Duration.Duration <= 0 {
		return nil
	}
	if end := at + f.Duration.Duration; end > phase {
		return field.ErrorList{field.Invalid(p.Child("duration"), f.Duration.Duration.String(),
			fmt.Sprintf("the pause would end at %s, after the measured phase (%s, spec.workload.testDurationMinutes); shorten duration to at most %s, set at earlier, or lengthen the phase", end, phase, phase-at))}
	}
	return nil
}

// overlaps refuses a fault on a target another fault is still pausing: it
// would hit a stopped process (a second SIGSTOP does nothing, a SIGKILL
// ends the pause early), and neither fault's figures would be its own.
// A Kill's or DeletePod's end is not known in advance (until the process
// or pod is back), so only pauses are checked; leader is resolved at the
// fault's time, so it is not either.
func overlaps(faults []v1alpha1.Fault, fp *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, f := range faults {
		for j, g := range faults {
			if i == j || f.Target != g.Target || g.Action != v1alpha1.FaultPause || g.Duration == nil || f.Target == v1alpha1.FaultTarget(v1alpha1.RoleLeader) {
				continue
			}
			start, end := g.At.Duration, g.At.Duration+g.Duration.Duration
			// Equal times: the later one in the list is refused, once.
			if f.At.Duration < start || f.At.Duration >= end || (f.At.Duration == start && i < j) {
				continue
			}
			errs = append(errs, field.Invalid(fp.Index(i).Child("at"), f.At.Duration.String(),
				fmt.Sprintf("%s is still paused then by spec.faults[%d] (%s to %s); set at to %s or later, or target another", f.Target, j, start, end, end)))
			break
		}
	}
	return errs
}
