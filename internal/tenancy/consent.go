// Package tenancy decides what a run may reach outside its own namespace.
//
// The operator acts for whoever may create a BenchmarkRun in a namespace
// (docs/security.md). Inside that namespace it does what an `edit` user
// may do there; outside it, only what the other namespace's owner agreed
// to. That agreement cannot live on the run (its author is the one asking)
// nor on objects a tenant may write: it is an annotation on the other
// Namespace, which only those who may update Namespaces (in practice the
// cluster's administrators, never a namespace's `edit` users) can set.
// This package is pure: the controller reads the Namespaces and asks.
package tenancy

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// Consent is a kind of agreement a Namespace's owner gives to runs of
// other namespaces, as an annotation on the Namespace whose value lists
// those namespaces.
type Consent string

const (
	// AllowRunsFrom lets runs of the listed namespaces name a Strimzi
	// cluster of this namespace (spec.cluster.existing.strimziCluster):
	// the operator reads its Kafka resource (listeners, readiness) for
	// them.
	AllowRunsFrom Consent = "streambench.io/allow-runs-from"
	// AllowFaultsFrom lets runs of the listed namespaces stop, kill or
	// delete the pods of this namespace that their
	// spec.cluster.existing.faults select.
	AllowFaultsFrom Consent = "streambench.io/allow-faults-from"
)

// Everyone is the list entry that consents for every namespace.
const Everyone = "*"

// Given reports whether annotations (a Namespace's) hold consent c for
// runs of namespace from: the annotation's value is a comma-separated
// list of namespaces, or "*". Entries are whole names: "team" does not
// consent for "team-a".
func Given(annotations map[string]string, c Consent, from string) bool {
	v, ok := annotations[string(c)]
	if !ok {
		return false
	}
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e == Everyone || e == from {
			return true
		}
	}
	return false
}

// Reference is a namespace other than the run's that its spec reaches
// into, and the consent that needs.
type Reference struct {
	// Field is the spec field that names the namespace.
	Field *field.Path
	// Namespace is the other namespace.
	Namespace string
	// Needs is the consent its owner must give.
	Needs Consent
	// What says what the operator would do there, for the refusal.
	What string
}

// References are the namespaces other than the run's own that spec
// reaches into: a Strimzi cluster of another namespace, and the pods its
// faults disrupt there. Managed runs reach nothing outside their
// namespace: the operator deploys their brokers in it.
func References(runNamespace string, spec *v1alpha1.BenchmarkRunSpec) []Reference {
	e := spec.Cluster.Existing
	if e == nil {
		return nil
	}
	path := field.NewPath("spec", "cluster", "existing")
	var refs []Reference
	if sc := e.StrimziCluster; sc != nil && sc.Namespace != "" && sc.Namespace != runNamespace {
		refs = append(refs, Reference{
			Field: path.Child("strimziCluster", "namespace"), Namespace: sc.Namespace, Needs: AllowRunsFrom,
			What: fmt.Sprintf("read its Strimzi Kafka %s", sc.Name),
		})
	}
	if f := e.Faults; f != nil && len(spec.Faults) > 0 {
		ns, fld := FaultNamespace(runNamespace, e), path.Child("faults", "namespace")
		if f.Namespace == "" {
			fld = path.Child("strimziCluster", "namespace")
		}
		if ns != runNamespace {
			refs = append(refs, Reference{
				Field: fld, Namespace: ns, Needs: AllowFaultsFrom,
				What: "stop, kill or delete its pods (spec.faults)",
			})
		}
	}
	return refs
}

// FaultNamespace is the namespace whose pods the faults of a run on an
// existing cluster hit: faults.namespace, else strimziCluster's, else the
// run's.
func FaultNamespace(runNamespace string, e *v1alpha1.ExistingCluster) string {
	switch {
	case e.Faults != nil && e.Faults.Namespace != "":
		return e.Faults.Namespace
	case e.StrimziCluster != nil && e.StrimziCluster.Namespace != "":
		return e.StrimziCluster.Namespace
	}
	return runNamespace
}

// Refusal says why ref is refused for a run of runNamespace and how its
// owner consents. A namespace that does not exist is refused with the same
// message, so a refusal does not tell a tenant which namespaces exist.
func Refusal(ref Reference, runNamespace string) string {
	return fmt.Sprintf("%s: namespace %s has not agreed that runs of namespace %s %s: only its owner can agree, by annotating the Namespace (kubectl annotate namespace %s %s=%s; the value lists namespaces, comma-separated, or *)%s",
		ref.Field, ref.Namespace, runNamespace, ref.What, ref.Namespace, ref.Needs, runNamespace, faultsNote(ref))
}

func faultsNote(ref Reference) string {
	if ref.Needs != AllowFaultsFrom {
		return ""
	}
	return "; spec.cluster.existing.faults.allowDisruption is the run author's agreement, not the pods' owner's"
}
