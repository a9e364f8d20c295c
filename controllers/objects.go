package controllers

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// permanentError marks a failure that retrying cannot fix (a missing CRD, a
// spec the builders reject): the run fails with it instead of requeueing.
type permanentError struct{ error }

func (e permanentError) Unwrap() error { return e.error }

func permanent(err error) error { return permanentError{err} }

func isPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}

// createOwned creates obj with owner (a run, or a suite) as its controller owner. An object
// that exists already (a restarted operator, a retried reconcile) is left as
// it is: the spec it was built from is immutable.
func createOwned(ctx context.Context, c client.Client, owner client.Object, obj client.Object) error {
	if err := controllerutil.SetControllerReference(owner, obj, c.Scheme()); err != nil {
		return err
	}
	err := c.Create(ctx, obj)
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if meta.IsNoMatchError(err) {
		return permanent(err)
	}
	return err
}

// deleteAll deletes objs in the background and reports whether all of them
// are gone.
func deleteAll(ctx context.Context, c client.Client, objs ...client.Object) (bool, error) {
	gone := true
	for _, obj := range objs {
		err := c.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground))
		switch {
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		case err != nil:
			return false, err
		default:
			gone = false
		}
	}
	return gone, nil
}
