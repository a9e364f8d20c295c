package controllers

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/streambench/streambench-operator/api/v1alpha1"
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
