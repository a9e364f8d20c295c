package faults

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// ClusterChecks are the faults the operator cannot do in a cluster yet,
// each naming its field and the fix. Call after Validate.
//
// leader: the operator reaches the brokers' pods, not their metadata
// (the coordinator's driver does, inside the run's network and
// security), so it cannot tell which broker leads a partition at the
// fault's time. Local mode can, and does.
func ClusterChecks(spec *v1alpha1.BenchmarkRunSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, f := range spec.Faults {
		if role, _, err := f.Target.Parse(); err == nil && role == v1alpha1.RoleLeader {
			errs = append(errs, field.Invalid(fldPath.Child("faults").Index(i).Child("target"), string(f.Target),
				"the operator does not look up partition leaders in a cluster yet; name the broker (broker-<n>, ordinals from 0), or run the fault in local mode (streambench run), which does"))
		}
	}
	return errs
}
