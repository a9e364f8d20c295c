package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/suite"
)

// reconcileSuiteRunning takes the first unfinished cell one step: its
// cluster deployed and ready, its child run created, its results recorded
// once the run ends. Only one cell is ever running, so cells do not fight
// over the brokers and workers' nodes; before a cluster is deployed, the
// finished ones are removed (spec.teardown.policy), so one deployed cluster
// stands at a time.
func (r *BenchmarkSuiteReconciler) reconcileSuiteRunning(ctx context.Context, s *v1alpha1.BenchmarkSuite) (ctrl.Result, error) {
	i := nextCell(s)
	if i < 0 {
		return r.finishSuite(ctx, s)
	}
	cell := &s.Status.Cells[i]
	cl := clusterOf(s, cell.Cluster)
	if cl == nil {
		return ctrl.Result{}, r.moveSuiteTo(ctx, s, v1alpha1.PhaseFailed, "Invalid", fmt.Sprintf("status.cells %s names cluster %s, which status.clusters lacks", cell.Name, cell.Cluster))
	}
	if cl.Phase != v1alpha1.ClusterReady {
		if done, err := r.teardownFinishedClusters(ctx, s); err != nil || !done {
			return ctrl.Result{RequeueAfter: time.Second}, err
		}
		return r.reconcileCluster(ctx, s, cl)
	}

	var child v1alpha1.BenchmarkRun
	err := r.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: cell.Name}, &child)
	switch {
	case apierrors.IsNotFound(err) && cell.Phase == v1alpha1.CellRunning:
		r.endCell(s, cell, v1alpha1.CellFailed, "the child BenchmarkRun was deleted before it finished")
		return r.afterCell(ctx, s, cell)
	case apierrors.IsNotFound(err):
		run, err := suite.ChildRun(s, *cell, *cl)
		if err != nil {
			r.endCell(s, cell, v1alpha1.CellFailed, err.Error())
			return r.afterCell(ctx, s, cell)
		}
		if err := createOwned(ctx, r.Client, s, run); err != nil {
			if apierrors.IsInvalid(err) {
				// The API server refused the cell's run (the CRD's rules
				// on, e.g., a workload read from a ConfigMap): retrying
				// cannot help; the cell fails with the server's reason.
				r.endCell(s, cell, v1alpha1.CellFailed, err.Error())
				return r.afterCell(ctx, s, cell)
			}
			return ctrl.Result{}, err
		}
		cell.Phase = v1alpha1.CellRunning
		s.Status.CurrentCell = cell.Name
		s.Status.Message = fmt.Sprintf("running cell %s (%s, level %d, workload %s) against %s", cell.Name, cell.System, cell.RequestedLevel, cell.Workload, cl.Name)
		return ctrl.Result{}, r.updateSuiteStatus(ctx, s, corev1.EventTypeNormal, "CellStarted")
	case err != nil:
		return ctrl.Result{}, err
	}
	if !metav1.IsControlledBy(&child, s) {
		// A run of the cell's name that someone else made (before the
		// suite, or in place of its own): its spec and results are not
		// the cell's (issue 58).
		r.endCell(s, cell, v1alpha1.CellFailed, fmt.Sprintf(
			"BenchmarkRun %s exists and was not created by this suite (it has %s); streambench neither uses nor deletes it: delete it, or create the suite under another name",
			cell.Name, notControlled(&child)))
		return r.afterCell(ctx, s, cell)
	}
	if cell.Phase == v1alpha1.CellWaiting {
		// Created by an operator that stopped before it recorded so.
		cell.Phase = v1alpha1.CellRunning
		s.Status.CurrentCell = cell.Name
		return ctrl.Result{}, r.updateSuiteStatus(ctx, s, corev1.EventTypeNormal, "CellStarted")
	}
	if !child.Status.Phase.Finished() {
		return ctrl.Result{}, nil // the child's change wakes the suite
	}
	if child.Status.Durability != nil {
		cell.AchievedLevel = child.Status.Durability.AchievedLevel
	}
	cell.Results = suite.CellResultsOf(child.Status.Results)
	phase := v1alpha1.CellSucceeded
	if child.Status.Phase == v1alpha1.PhaseFailed {
		phase = v1alpha1.CellFailed
	}
	r.endCell(s, cell, phase, child.Status.Message)
	return r.afterCell(ctx, s, cell)
}

// endCell records a finished cell (suite.EndCell: failurePolicy applied).
func (r *BenchmarkSuiteReconciler) endCell(s *v1alpha1.BenchmarkSuite, cell *v1alpha1.SuiteCell, phase v1alpha1.CellPhase, message string) {
	suite.EndCell(s, cell, phase, message)
}

// afterCell writes the results ConfigMap (every finished cell so far: a
// suite that dies keeps what it measured) and the status.
func (r *BenchmarkSuiteReconciler) afterCell(ctx context.Context, s *v1alpha1.BenchmarkSuite, cell *v1alpha1.SuiteCell) (ctrl.Result, error) {
	if err := r.writeSuiteResults(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	eventType := corev1.EventTypeNormal
	if cell.Phase == v1alpha1.CellFailed {
		eventType = corev1.EventTypeWarning
	}
	return ctrl.Result{RequeueAfter: again}, r.updateSuiteStatus(ctx, s, eventType, "Cell"+string(cell.Phase))
}

// writeSuiteResults builds <suite>-results from the finished cells' own
// results ConfigMaps (a failed cell may have some: results are written as
// measured).
func (r *BenchmarkSuiteReconciler) writeSuiteResults(ctx context.Context, s *v1alpha1.BenchmarkSuite) error {
	summaries := map[string]*results.Summary{}
	for _, c := range s.Status.Cells {
		if c.Phase != v1alpha1.CellSucceeded && c.Phase != v1alpha1.CellFailed {
			continue
		}
		// Only the results of the suite's own run, from the ConfigMap
		// that run controls (runResults): a look-alike of the cell's
		// name reaches no table.
		var run v1alpha1.BenchmarkRun
		if err := r.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: c.Name}, &run); err != nil || !metav1.IsControlledBy(&run, s) {
			continue
		}
		cm, foreign, err := runResults(ctx, r.Client, &run)
		if err != nil || foreign != "" {
			continue // a cell that failed before it measured, or not the run's
		}
		sum, err := results.Read(cm)
		if err != nil {
			continue
		}
		summaries[c.Name] = sum
	}
	cm, err := suite.BuildConfigMap(s, summaries)
	if err != nil {
		return err
	}
	if err := setOwner(s, cm, r.Scheme); err != nil {
		return err
	}
	return results.Write(ctx, r.Client, cm)
}

// reconcileCluster deploys the cluster of the next cell and waits, within
// spec.timeouts.provisioning, for it. A cluster that fails or times out
// fails its cells (they cannot run), and the suite goes on with the next
// cluster unless failurePolicy is Stop.
func (r *BenchmarkSuiteReconciler) reconcileCluster(ctx context.Context, s *v1alpha1.BenchmarkSuite, cl *v1alpha1.SuiteCluster) (ctrl.Result, error) {
	host, b, err := r.hostBrokers(s, *cl)
	if err == nil && cl.Phase == v1alpha1.ClusterWaiting {
		err = b.Deploy(ctx, host)
		if err != nil && !isPermanent(err) {
			return ctrl.Result{}, err // an API hiccup: try again
		}
		if err == nil {
			now := metav1.Now()
			cl.Phase, cl.StartTime, cl.Message = v1alpha1.ClusterProvisioning, &now, "deploying"
			s.Status.Message = fmt.Sprintf("deploying cluster %s", cl.Name)
			return ctrl.Result{RequeueAfter: suitePoll}, r.updateSuiteStatus(ctx, s, corev1.EventTypeNormal, "ClusterDeploying")
		}
	}
	var (
		endpoints *v1alpha1.BrokerEndpoints
		reason    string
	)
	if err == nil {
		// As for a run, an error from Ready is the cluster's failure.
		endpoints, reason, err = b.Ready(ctx, host)
	}
	if err == nil && endpoints == nil {
		timeout := provisioningTimeout(host)
		deadline := cl.StartTime.Add(timeout)
		if time.Now().Before(deadline) {
			if cl.Message != reason && reason != "" {
				cl.Message = reason
				if err := r.updateSuiteStatus(ctx, s, corev1.EventTypeNormal, "ClusterProvisioning"); err != nil {
					return ctrl.Result{}, err
				}
			}
			return ctrl.Result{RequeueAfter: min(suitePoll, time.Until(deadline)+time.Second)}, nil
		}
		err = fmt.Errorf("not ready within spec.timeouts.provisioning (%s): %s", timeout, reason)
	}
	if err != nil {
		cl.Phase, cl.Message = v1alpha1.ClusterFailed, err.Error()
		for j := range s.Status.Cells {
			if c := &s.Status.Cells[j]; c.Cluster == cl.Name && !c.Phase.Finished() {
				r.endCell(s, c, v1alpha1.CellFailed, fmt.Sprintf("cluster %s failed: %v", cl.Name, err))
			}
		}
		s.Status.Message = fmt.Sprintf("cluster %s failed: %v", cl.Name, err)
		if err := r.writeSuiteResults(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: again}, r.updateSuiteStatus(ctx, s, corev1.EventTypeWarning, "ClusterFailed")
	}
	cl.Phase, cl.Endpoints, cl.Message = v1alpha1.ClusterReady, endpoints, brokersMessage(endpoints)
	s.Status.Message = fmt.Sprintf("cluster %s ready: %s", cl.Name, brokersMessage(endpoints))
	return ctrl.Result{RequeueAfter: again}, r.updateSuiteStatus(ctx, s, corev1.EventTypeNormal, "ClusterReady")
}

// hostBrokers is the in-memory host run of a managed cluster and its
// provisioner: the same code that deploys a run's brokers, with the suite
// as the owner of what it creates.
func (r *BenchmarkSuiteReconciler) hostBrokers(s *v1alpha1.BenchmarkSuite, cl v1alpha1.SuiteCluster) (*v1alpha1.BenchmarkRun, brokers, error) {
	host, err := suite.HostRun(s, cl)
	if err != nil {
		return nil, nil, permanent(err)
	}
	// The Helm release is labelled with its owner's UID: the suite's.
	host.UID = s.UID
	if cl.System == v1alpha1.SystemPulsar {
		return host, pulsarBrokers{Client: r.Client, reader: r.apiReader(), helm: r.Helm, owner: s}, nil
	}
	return host, strimziBrokers{Client: r.Client, owner: s}, nil
}

// nextCell is the index of the first unfinished cell, or -1.
func nextCell(s *v1alpha1.BenchmarkSuite) int {
	for i, c := range s.Status.Cells {
		if !c.Phase.Finished() {
			return i
		}
	}
	return -1
}

func clusterOf(s *v1alpha1.BenchmarkSuite, name string) *v1alpha1.SuiteCluster {
	for i := range s.Status.Clusters {
		if s.Status.Clusters[i].Name == name {
			return &s.Status.Clusters[i]
		}
	}
	return nil
}
