package controllers

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
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

// createOwned creates obj with owner (a run, or a suite) as its controller
// owner. An object of that name that owner controls already (a restarted
// operator, a retried reconcile) is left as it is: the spec it was built
// from is immutable. One that owner does not control is someone else's: it
// is never adopted (teardown would delete it), and the run fails at once,
// naming it.
func createOwned(ctx context.Context, c client.Client, owner client.Object, obj client.Object) error {
	if err := controllerutil.SetControllerReference(owner, obj, c.Scheme()); err != nil {
		return err
	}
	err := c.Create(ctx, obj)
	if apierrors.IsAlreadyExists(err) {
		return checkOwned(ctx, c, owner, obj)
	}
	if meta.IsNoMatchError(err) {
		return permanent(err)
	}
	return err
}

// checkOwned fails permanently when the existing object named like obj is
// not controlled by owner.
func checkOwned(ctx context.Context, c client.Client, owner client.Object, obj client.Object) error {
	existing, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("%T is not a client.Object", obj)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		if apierrors.IsNotFound(err) {
			// Deleted in between: the next reconcile creates it.
			return fmt.Errorf("%s %s/%s was deleted while it was created; trying again", kindOf(c, obj), obj.GetNamespace(), obj.GetName())
		}
		return err
	}
	if metav1.IsControlledBy(existing, owner) {
		return nil
	}
	return permanent(fmt.Errorf("%s %s/%s exists already and was not created by this run (it has %s); streambench neither uses nor deletes it: rename the run, or delete that object if it is a leftover",
		kindOf(c, obj), obj.GetNamespace(), obj.GetName(), notControlled(existing)))
}

// deleteAll deletes those of objs that owner controls, in the background,
// and reports whether all of them are gone. An object of the same name that
// owner does not control was never the run's (createOwned refused it) and
// is left alone.
func deleteAll(ctx context.Context, c client.Client, owner client.Object, objs ...client.Object) (bool, error) {
	gone := true
	for _, obj := range objs {
		existing, ok := obj.DeepCopyObject().(client.Object)
		if !ok {
			return false, fmt.Errorf("%T is not a client.Object", obj)
		}
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), existing)
		switch {
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			continue
		case err != nil:
			return false, err
		case !metav1.IsControlledBy(existing, owner):
			continue
		}
		// The UID precondition keeps a delete from hitting an object that
		// replaced the one just read.
		err = c.Delete(ctx, existing, client.PropagationPolicy(metav1.DeletePropagationBackground),
			client.Preconditions{UID: ptr.To(existing.GetUID())})
		switch {
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err) || apierrors.IsConflict(err):
		case err != nil:
			return false, err
		default:
			gone = false
		}
	}
	return gone, nil
}

// controlledPods keeps the pods whose controller is one of owners, by
// UID. What the operator reads back from a pod (its phase, its
// termination message, its node, its image) is taken only from pods its
// own Jobs (or the run's brokers' workloads) made: a pod's name and labels
// are anyone's to copy who may create pods in the namespace, and a
// look-alike must neither fail a run, nor fill in its results, nor choose
// where or what the operator runs next (issue 58). A pod made to name
// owner's UID as its controller passes; the Job controller would count
// such a pod as its own too.
func controlledPods(pods []corev1.Pod, owners ...metav1.Object) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		for _, o := range owners {
			if o != nil && metav1.IsControlledBy(&p, o) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// notControlled says, for a message, who controls obj instead of owner.
func notControlled(obj metav1.Object) string {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		return fmt.Sprintf("controller %s %s", ref.Kind, ref.Name)
	}
	return "no controller"
}

// kindOf names obj's kind for a message.
func kindOf(c client.Client, obj client.Object) string {
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	if gvk, err := c.GroupVersionKindFor(obj); err == nil {
		return gvk.Kind
	}
	return fmt.Sprintf("%T", obj)
}
