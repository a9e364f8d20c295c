package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
)

// The Secrets of a secured managed Pulsar release (pulsar.Secrets): made
// by the operator just before the chart's install, owned by the run (or
// the suite hosting the cluster), removed once the release is. No value
// of theirs is read, logged or kept: the operator reads only their names
// and owners.

func (b pulsarBrokers) secretOwner(run *v1alpha1.BenchmarkRun) client.Object {
	if b.owner != nil {
		return b.owner
	}
	return run
}

// ensureSecrets makes the run's Secrets unless all of them exist. A
// partial set (the operator stopped between two creates) is deleted and
// made again whole: the CA's key is not kept, so a missing certificate
// could not be signed by the CA that exists. They are made before any
// install starts, so no broker reads a set that is replaced. A Secret of
// one of those names that the run did not make fails the run, naming it.
func (b pulsarBrokers) ensureSecrets(ctx context.Context, run *v1alpha1.BenchmarkRun) error {
	names := pulsar.SecretNames(run)
	if len(names) == 0 {
		return nil
	}
	owner := b.secretOwner(run)
	var have []*corev1.Secret
	var haveNames []string
	for _, name := range names {
		var s corev1.Secret
		err := b.reader.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: name}, &s)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("reading Secret %s/%s of the secured Pulsar release: %w", run.Namespace, name, err)
		case !metav1.IsControlledBy(&s, owner):
			return permanent(fmt.Errorf("Secret %s/%s exists already and was not made by this run; the brokers of spec.cluster.managed.security need that name (the Pulsar chart mounts it), and streambench neither uses nor deletes another's Secret: rename the run, or delete that Secret if it is a leftover", run.Namespace, name))
		}
		have, haveNames = append(have, &s), append(haveNames, name)
	}
	if pulsar.SecretsComplete(run, haveNames) {
		return nil
	}
	for _, s := range have {
		err := b.Delete(ctx, s, client.Preconditions{UID: ptr.To(s.UID)})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting Secret %s/%s of an incomplete set before making it whole: %w", s.Namespace, s.Name, err)
		}
	}
	secrets, err := pulsar.Secrets(run, time.Now())
	if err != nil {
		return permanent(fmt.Errorf("making the Secrets of spec.cluster.managed.security: %w", err))
	}
	for _, s := range secrets {
		if err := controllerutil.SetControllerReference(owner, s, b.Scheme()); err != nil {
			return err
		}
		if err := b.Create(ctx, s); err != nil {
			// AlreadyExists included: the next reconcile finds a partial
			// set, or another's Secret, and says so.
			return fmt.Errorf("creating Secret %s/%s for spec.cluster.managed.security: %w", s.Namespace, s.Name, err)
		}
	}
	return nil
}

// deleteSecrets deletes the run's Secrets that it made, and reports
// whether none is left.
func (b pulsarBrokers) deleteSecrets(ctx context.Context, run *v1alpha1.BenchmarkRun) (bool, error) {
	owner := b.secretOwner(run)
	gone := true
	for _, name := range pulsar.SecretNames(run) {
		var s corev1.Secret
		err := b.reader.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: name}, &s)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return false, err
		case !metav1.IsControlledBy(&s, owner):
			continue // not the run's: never touched
		}
		err = b.Delete(ctx, &s, client.Preconditions{UID: ptr.To(s.UID)})
		switch {
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		case err != nil:
			return false, fmt.Errorf("deleting Secret %s/%s: %w", run.Namespace, name, err)
		default:
			gone = false
		}
	}
	return gone, nil
}
