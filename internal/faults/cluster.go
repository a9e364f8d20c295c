package faults

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// ClusterChecks are the faults the operator cannot do in a cluster yet,
// each naming its field and the fix. Call after Validate.
//
// leader on Pulsar: the coordinator names Kafka's leader at the fault's
// time (leaders.go) from the brokers' metadata; Pulsar's counterpart,
// the broker that owns the topic's bundle, is not looked up.
func ClusterChecks(spec *v1alpha1.BenchmarkRunSpec, fldPath *field.Path) field.ErrorList {
	if spec.System != v1alpha1.SystemPulsar {
		return nil
	}
	var errs field.ErrorList
	for i, f := range spec.Faults {
		if role, _, err := f.Target.Parse(); err == nil && role == v1alpha1.RoleLeader {
			errs = append(errs, field.Invalid(fldPath.Child("faults").Index(i).Child("target"), string(f.Target),
				"leader is looked up for Kafka only (the partition's leader, from the brokers' metadata); on Pulsar name the broker (broker-<n>, ordinals from 0) or a bookie (bookie-<n>)"))
		}
	}
	return errs
}
