package controllers

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/tenancy"
)

// consentRefusal is why the run may not reach into the other namespaces
// its spec names (a Strimzi cluster there, faults on its pods), or ""
// when each one's owner agreed (internal/tenancy, docs/security.md). The
// Namespace is read from the API server, not the cache: consent withdrawn
// a moment ago is withdrawn.
func (r *BenchmarkRunReconciler) consentRefusal(ctx context.Context, run *v1alpha1.BenchmarkRun) (string, error) {
	var refusals []string
	for _, ref := range tenancy.References(run.Namespace, &run.Spec) {
		ok, err := r.consents(ctx, ref.Namespace, ref.Needs, run.Namespace)
		if err != nil {
			return "", err
		}
		if !ok {
			refusals = append(refusals, tenancy.Refusal(ref, run.Namespace))
		}
	}
	return strings.Join(refusals, "; "), nil
}

// consents reports whether namespace ns carries consent c for runs of
// namespace from. A namespace that does not exist, or that the operator
// may not read, has given none.
func (r *BenchmarkRunReconciler) consents(ctx context.Context, ns string, c tenancy.Consent, from string) (bool, error) {
	if ns == from {
		return true, nil
	}
	var obj corev1.Namespace
	err := r.apiReader().Get(ctx, types.NamespacedName{Name: ns}, &obj)
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return tenancy.Given(obj.Annotations, c, from), nil
}

// runResults reads the run's results ConfigMap through reader. The
// ConfigMap lives in the run's namespace, where its tenant may write, and
// it steers the operator (the fault clock, the leaders named, page-cache
// requests): one the run does not control (a look-alike of the same name,
// or the one of a deleted run of that name not yet collected) is not the
// run's, and reads as none, with foreign saying whose it is. What the
// run's own ConfigMap says is still the tenant's to write: every reader
// keeps what it takes from it within the run's own reach (docs/security.md).
func runResults(ctx context.Context, reader client.Reader, run *v1alpha1.BenchmarkRun) (cm *corev1.ConfigMap, foreign string, err error) {
	cm = &corev1.ConfigMap{}
	if err := reader.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: workers.ResultsName(run)}, cm); err != nil {
		return nil, "", err
	}
	if !metav1.IsControlledBy(cm, run) {
		by := "no controller"
		if c := metav1.GetControllerOf(cm); c != nil {
			by = fmt.Sprintf("controller %s %s (UID %s)", c.Kind, c.Name, c.UID)
		}
		return nil, fmt.Sprintf("ConfigMap %s is not this run's (%s, not BenchmarkRun %s UID %s), so it is ignored", cm.Name, by, run.Name, run.UID), nil
	}
	return cm, "", nil
}
