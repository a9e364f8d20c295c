// Package privileged holds what the privileged Jobs of a run share: the
// fault signal Job (internal/provision/faultjob: privileged, hostPID,
// root, tolerating every taint) and the page-cache drop Job
// (internal/provision/probe: privileged, root).
//
// They run in the operator's namespace, never the run's (issue 58): in
// the run's namespace anyone allowed pods/exec there could enter a
// privileged hostPID pod on a node, and the tenant's namespace would
// have to admit privileged pods. An owner reference cannot cross
// namespaces, so these Jobs name their run by labels (its UID, namespace
// and name); the operator finds them by name and that UID, reads only
// the pods those Jobs made, and deletes them when done, when the run
// finishes and when it is deleted (controllers, privileged_jobs.go).
package privileged

import (
	"fmt"
	"hash/fnv"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// Labels that name a privileged Job's run (beside workers.LabelRun, its
// name).
const (
	// LabelRunUID is the run's UID: what the operator trusts. A run of
	// the same name made again later has another.
	LabelRunUID = "streambench.io/run-uid"
	// LabelRunNamespace is the run's namespace, for the watch that wakes
	// the run when its Job changes.
	LabelRunNamespace = "streambench.io/run-namespace"
)

// Labels are a privileged Job's and its pod's: the run by UID, namespace
// and name, and the Job's role (workers.LabelRole).
func Labels(run *v1alpha1.BenchmarkRun, role string) map[string]string {
	return map[string]string{
		workers.LabelRun:       run.Name,
		LabelRunNamespace:      run.Namespace,
		LabelRunUID:            string(run.UID),
		workers.LabelRole:      role,
		workers.LabelManagedBy: "streambench",
	}
}

// Of selects run's privileged Jobs and their pods.
func Of(run *v1alpha1.BenchmarkRun) map[string]string {
	return map[string]string{LabelRunUID: string(run.UID)}
}

// Suffix is 8 hex digits of the run's UID and parts (a node's name): the
// operator's namespace holds the Jobs of runs from every namespace, so a
// Job's name cannot be the run's name alone (two namespaces may each
// have a run r1). 8 digits keep a name within a label value's 63
// characters (a run's name has at most 40).
func Suffix(run *v1alpha1.BenchmarkRun, parts ...string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(run.UID))
	for _, p := range parts {
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(p))
	}
	return fmt.Sprintf("%08x", h.Sum32())
}

// LabelPodSecurityEnforce is the namespace label of Pod Security
// admission's enforced level.
const LabelPodSecurityEnforce = "pod-security.kubernetes.io/enforce"

// Allowed says whether the operator's namespace, with these labels,
// admits the privileged Jobs, and if not a message for the cluster's
// admin: the level it enforces and the label that allows them. A
// namespace without the label gets the cluster's default level, which
// is privileged unless the admission configuration says otherwise; such
// a refusal shows up as the Job's failure. The run's own namespace needs
// no privilege, so the message never asks the tenant to label it.
func Allowed(operatorNamespace string, nsLabels map[string]string) (bool, string) {
	level, ok := nsLabels[LabelPodSecurityEnforce]
	if !ok || level == "privileged" {
		return true, ""
	}
	return false, fmt.Sprintf(
		"the operator's namespace %s, where it runs its privileged Jobs, enforces Pod Security level %q (label %s); "+
			"a cluster admin allows them with `kubectl label namespace %s %s=privileged --overwrite` "+
			"(the operator's namespace only: the run's own namespace needs no privilege)",
		operatorNamespace, level, LabelPodSecurityEnforce, operatorNamespace, LabelPodSecurityEnforce)
}
