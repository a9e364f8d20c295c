package controllers

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/provision/brokerpods"
	"github.com/streambench/streambench-operator/internal/provision/monitoring"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
)

// The Pulsar chart creates these kinds in the run's namespace; Helm acts
// with the manager's permissions.
// +kubebuilder:rbac:groups=apps,resources=statefulsets;deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services;serviceaccounts;secrets;persistentvolumeclaims,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;update;patch;delete
// The teardown deletes a release's claims in one call (the chart's
// StatefulSets leave them behind).
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=deletecollection
// A secured run's CA, certificate, signing key and tokens are the
// operator's own Secrets (brokers_pulsar_secrets.go), read uncached.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;delete
// Helm's release records are Secrets in the operator's own namespace
// (pulsar.InstallerOptions.StorageNamespace), out of the tenants' reach;
// with watchNamespaces the chart grants these verbs there in a Role.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;delete

// pulsarBrokers deploys Pulsar as a Helm release of the Apache Pulsar chart.
// Helm runs in the Installer's goroutines; every call here only starts an
// operation or reads its state, so a reconcile never waits for Helm.
type pulsarBrokers struct {
	client.Client
	// reader reads the run's Secrets from the API server: no Secret is
	// cached in the operator's memory.
	reader     client.Reader
	helm       *pulsar.Installer
	monitoring monitoring.Config
	// owner owns the Secrets made for a secured release: a suite for the
	// clusters it hosts; nil for a run's own (the run).
	owner client.Object
}

func (r *BenchmarkRunReconciler) pulsarBrokers() brokers {
	return pulsarBrokers{Client: r.Client, reader: r.apiReader(), helm: r.Helm, monitoring: r.Monitoring}
}

func (b pulsarBrokers) release(run *v1alpha1.BenchmarkRun) (pulsar.Release, error) {
	eff, err := durability.Translate(run.Spec.System, run.Spec.DurabilityOrDefault())
	if err != nil {
		return pulsar.Release{}, err
	}
	rel, err := pulsar.ReleaseFor(run, eff)
	if err != nil {
		return rel, err
	}
	// The chart's own PodMonitors, where the API server has the CRD (the
	// install would fail on one that does not).
	if ok, err := monitoringAvailable(b.Client); err != nil {
		return rel, err
	} else if ok {
		pulsar.EnablePodMonitors(&rel, b.monitoring.Labels(run))
	}
	return rel, nil
}

// Deploy starts the install unless the release is deployed or an install
// runs; after an operator restart (no result in memory) it starts again,
// which the Installer makes idempotent.
func (b pulsarBrokers) Deploy(ctx context.Context, run *v1alpha1.BenchmarkRun) error {
	if b.helm == nil {
		return permanent(errors.New("the manager has no Helm installer configured for Pulsar"))
	}
	rel, err := b.release(run)
	if err != nil {
		return permanent(err)
	}
	if res, ok := b.helm.Result(rel.Namespace, rel.Name); ok && res.Operation == pulsar.OperationInstall {
		if !res.Done {
			return nil
		}
		if res.Err != nil {
			return permanent(res.Err)
		}
		return nil
	}
	owner, exists, err := b.helm.Owner(ctx, rel.Namespace, rel.Name)
	if err != nil {
		return err
	}
	if exists && owner != rel.Owner {
		return permanent(&pulsar.NotOwnedError{Namespace: rel.Namespace, Name: rel.Name, Owner: owner})
	}
	status, err := b.helm.Status(ctx, rel.Namespace, rel.Name)
	if err != nil {
		return err
	}
	if status == "deployed" {
		return nil
	}
	// The chart mounts them by name: they must exist before its pods.
	if err := b.ensureSecrets(ctx, run); err != nil {
		return err
	}
	b.helm.StartInstall(rel)
	return nil
}

func (b pulsarBrokers) Ready(ctx context.Context, run *v1alpha1.BenchmarkRun) (*v1alpha1.BrokerEndpoints, string, error) {
	if err := b.Deploy(ctx, run); err != nil {
		return nil, "", err
	}
	name := pulsar.ReleaseName(run)
	if res, ok := b.helm.Result(run.Namespace, name); ok && !res.Done {
		return nil, fmt.Sprintf("helm install of release %s is running", name), nil
	}
	var sets appsv1.StatefulSetList
	if err := b.List(ctx, &sets, client.InNamespace(run.Namespace)); err != nil {
		return nil, "", err
	}
	var jobs batchv1.JobList
	if err := b.List(ctx, &jobs, client.InNamespace(run.Namespace)); err != nil {
		return nil, "", err
	}
	ready, reason, err := pulsar.Ready(sets.Items, jobs.Items, name)
	if err != nil {
		return nil, reason, permanent(err) // an init Job failed for good
	}
	if !ready {
		// The chart's StatefulSets say only how many replicas are ready;
		// the scheduler says why a pod has no node (the bookies' and
		// brokers' anti-affinity, a selector, a taint, resources).
		var pods corev1.PodList
		if err := b.List(ctx, &pods, client.InNamespace(run.Namespace), client.MatchingLabels(brokerpods.All(run))); err != nil {
			return nil, "", err
		}
		if why := pulsar.Unschedulable(pods.Items); why != "" {
			reason += "; " + why
		}
		return nil, reason, nil
	}
	ep := pulsar.Endpoints(run)
	return &ep, "", nil
}

// Teardown uninstalls the release and, unless storage.deleteClaim is false,
// deletes its PVCs, which helm uninstall leaves behind; then the Secrets
// made for a secured release (owner references would remove them only
// with the run).
func (b pulsarBrokers) Teardown(ctx context.Context, run *v1alpha1.BenchmarkRun) (bool, error) {
	if b.helm == nil {
		return true, nil
	}
	name := pulsar.ReleaseName(run)
	deleteClaims := true
	if m := run.Spec.Cluster.Managed; m != nil && m.Storage.DeleteClaim != nil {
		deleteClaims = *m.Storage.DeleteClaim
	}
	res, ok := b.helm.Result(run.Namespace, name)
	if !ok || res.Operation != pulsar.OperationUninstall {
		// A release of the run's name that the run did not install is
		// left alone (Deploy refused it).
		owner, exists, err := b.helm.Owner(ctx, run.Namespace, name)
		if err != nil {
			return false, err
		}
		if exists && owner != string(run.UID) {
			return true, nil
		}
	}
	switch {
	case ok && res.Operation == pulsar.OperationUninstall && res.Done && res.Err == nil:
		if gone, err := b.deleteSecrets(ctx, run); err != nil || !gone {
			return false, err
		}
		b.helm.Forget(run.Namespace, name)
		return true, nil
	case ok && !res.Done:
		return false, nil
	case ok && res.Operation == pulsar.OperationUninstall && res.Err != nil:
		// Try again, and let the error's backoff pace the retries.
		b.helm.StartUninstall(run.Namespace, name, deleteClaims)
		return false, res.Err
	}
	b.helm.StartUninstall(run.Namespace, name, deleteClaims)
	return false, nil
}
