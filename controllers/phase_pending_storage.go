package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
)

// StorageClasses are read (and watched) already for the testbed probe
// (phase_provisioning_testbed.go): the rule there covers this check.

// checkMetadataStoreClass judges, before anything is deployed, the class
// a managed Pulsar run's ZooKeeper claims would get
// (pulsar.CheckMetadataStoreClass). Without a class they used to stay
// Pending until the chart's pulsar-init Job gave up and the provisioning
// deadline failed the run, saying only that a StatefulSet was not ready;
// with the bookies' static class they took a bookie's disk. It returns the
// refusal (the run fails with it) and a warning to record as an event
// once the run goes on. An operator that may not list StorageClasses
// runs as before: the check needs them all to know the default.
func (r *BenchmarkRunReconciler) checkMetadataStoreClass(ctx context.Context, run *v1alpha1.BenchmarkRun) (pulsar.MetadataStoreClass, error) {
	m := run.Spec.Cluster.Managed
	if m == nil || run.Spec.System != v1alpha1.SystemPulsar {
		return pulsar.MetadataStoreClass{}, nil
	}
	var classes storagev1.StorageClassList
	if err := r.List(ctx, &classes); apierrors.IsForbidden(err) {
		return pulsar.MetadataStoreClass{}, nil
	} else if err != nil {
		return pulsar.MetadataStoreClass{}, fmt.Errorf("listing StorageClasses to check %s: %w", pulsar.MetadataStoreClassField, err)
	}
	return pulsar.CheckMetadataStoreClass(m, classes.Items), nil
}

// warnMetadataStoreClass records the check's warning where kubectl
// describe shows it.
func (r *BenchmarkRunReconciler) warnMetadataStoreClass(run *v1alpha1.BenchmarkRun, c pulsar.MetadataStoreClass) {
	if c.Warning != "" && r.Recorder != nil {
		r.Recorder.Eventf(run, nil, corev1.EventTypeWarning, v1alpha1.ReasonMetadataStoreOnBookieClass, string(run.Status.Phase), "%s", c.Warning)
	}
}
