package faults

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// LocalChecks are the faults local mode cannot do as a cluster would,
// each naming its field and the fix: there are no pods; the Pulsar
// standalone is one JVM (its broker, bookies and ZooKeeper would stop
// together, whatever the target says); the local Kafka has one KRaft
// controller (with faults a JVM of its own, kafka-controller:
// internal/localbrokers' SeparateController); and an existing cluster's
// processes are not known. leader is allowed: local mode asks the brokers
// who leads the first topic's partition 0 when the fault comes
// (internal/localrun/faults.go). Call after Validate.
func LocalChecks(spec *v1alpha1.BenchmarkRunSpec, fldPath *field.Path) field.ErrorList {
	if len(spec.Faults) == 0 {
		return nil
	}
	fp := fldPath.Child("faults")
	if spec.Cluster.Managed == nil {
		return field.ErrorList{field.Forbidden(fp,
			"local mode cannot find the processes of spec.cluster.existing; run the faults on brokers local mode starts (spec.cluster.managed), or in a cluster")}
	}
	var errs field.ErrorList
	for i, f := range spec.Faults {
		p := fp.Index(i)
		if f.Action == v1alpha1.FaultDeletePod {
			errs = append(errs, field.Invalid(p.Child("action"), string(f.Action),
				"local mode runs the brokers as processes, not pods; use Pause or Kill, or run it in a cluster"))
		}
		role, n, err := f.Target.Parse()
		if spec.System == v1alpha1.SystemPulsar {
			// A run with faults starts each bookie as a JVM of its own
			// (localbrokers.PulsarOptions.BookieProcesses); the broker
			// and ZooKeeper stay one standalone JVM.
			if err == nil && role != v1alpha1.RoleBookie {
				errs = append(errs, field.Invalid(p.Child("target"), string(f.Target),
					"local mode's Pulsar broker and ZooKeeper are one standalone JVM, and a fault on it would stop the whole system; target a bookie (bookie-<n>: each is a JVM of its own in a run with faults), or run it in a cluster"))
			}
			continue
		}
		if err == nil && role == v1alpha1.RoleController && n > 0 {
			errs = append(errs, field.Invalid(p.Child("target"), string(f.Target),
				"local mode's Kafka has one KRaft controller, controller-0 (a JVM of its own beside the brokers, kafka-controller); target controller-0, or run it in a cluster, where every broker is a controller"))
		}
	}
	return errs
}
