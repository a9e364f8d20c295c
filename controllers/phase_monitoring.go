package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/monitoring"
)

// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=podmonitors,verbs=get;list;watch;create;delete

// monitoringAvailable reports whether the API server serves the Prometheus
// Operator's PodMonitor. The client's RESTMapper looks again on a miss, so
// CRDs installed after the operator started are found.
func monitoringAvailable(c client.Client) (bool, error) {
	_, err := c.RESTMapper().RESTMapping(monitoring.PodMonitorGVK.GroupKind(), monitoring.PodMonitorGVK.Version)
	if meta.IsNoMatchError(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("looking up the %s CRD: %w", monitoring.PodMonitorGVK, err)
	}
	return true, nil
}

// reconcileMonitoring runs once the brokers are ready, before the workers
// start: it creates the run's PodMonitors when the Prometheus Operator is
// installed (an event says the run is not monitored when it is not; the
// run goes on) and finds the Prometheus the coordinator reads the
// brokers' resources from. It records both in status.monitoring, which
// the coordinator's Job is built from.
func (r *BenchmarkRunReconciler) reconcileMonitoring(ctx context.Context, run *v1alpha1.BenchmarkRun) error {
	st := &v1alpha1.MonitoringStatus{}
	ok, err := monitoringAvailable(r.Client)
	if err != nil {
		return err
	}
	if ok {
		for _, pm := range monitoring.PodMonitors(run, r.Monitoring) {
			err := createOwned(ctx, r.Client, run, pm)
			if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
				// The CRD went away after the client's RESTMapper saw it
				// (it does not look again on a hit). A PodMonitor of the
				// run's name that the run does not own is not this: that
				// error is permanent and fails the run, naming it.
				ok = false
				st.PodMonitors = nil
				break
			}
			if err != nil {
				return fmt.Errorf("creating PodMonitor %s: %w", pm.GetName(), err)
			}
			st.PodMonitors = append(st.PodMonitors, pm.GetName())
		}
		st.Monitored = ok
	}
	if !ok {
		st.Message = fmt.Sprintf("not monitored: the API server does not serve %s (install kube-prometheus-stack or the Prometheus Operator's CRDs); the run goes on without PodMonitors", monitoring.PodMonitorGVK)
		r.Recorder.Eventf(run, nil, corev1.EventTypeWarning, "NotMonitored", "Monitoring", "%s", st.Message)
	}
	if m := run.Spec.Monitoring; m != nil && m.PrometheusURL != "" {
		st.PrometheusURL = m.PrometheusURL
	} else if u, err := r.findPrometheus(ctx); err != nil {
		return err
	} else {
		st.PrometheusURL = u
	}
	if st.PrometheusURL == "" && st.Message == "" {
		st.Message = "no Prometheus found (no kube-prometheus-stack Prometheus Service labelled release=" + r.Monitoring.Release + ", no spec.monitoring.prometheusURL): the results carry no broker resources"
	}
	run.Status.Monitoring = st
	return nil
}

// findPrometheus is kube-prometheus-stack's Prometheus Service of the
// configured release, in any namespace; empty when there is none.
func (r *BenchmarkRunReconciler) findPrometheus(ctx context.Context) (string, error) {
	var svcs corev1.ServiceList
	if err := r.List(ctx, &svcs, client.MatchingLabels(monitoring.PrometheusServiceLabels(r.Monitoring))); err != nil {
		return "", fmt.Errorf("looking for kube-prometheus-stack's Prometheus Service: %w", err)
	}
	for _, s := range svcs.Items {
		port := int32(monitoring.PrometheusServicePort)
		for _, p := range s.Spec.Ports {
			if p.Name == "http-web" {
				port = p.Port
			}
		}
		return fmt.Sprintf("http://%s.%s.svc:%d", s.Name, s.Namespace, port), nil
	}
	return "", nil
}

// deleteMonitors deletes the run's PodMonitors with its other objects
// (teardown); true once they are gone. Without the CRDs there are none.
func (r *BenchmarkRunReconciler) deleteMonitors(ctx context.Context, run *v1alpha1.BenchmarkRun) (bool, error) {
	var objs []client.Object
	for _, pm := range monitoring.PodMonitors(run, r.Monitoring) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(pm.GroupVersionKind())
		u.SetName(pm.GetName())
		u.SetNamespace(pm.GetNamespace())
		objs = append(objs, u)
	}
	return deleteAll(ctx, r.Client, run, objs...)
}
