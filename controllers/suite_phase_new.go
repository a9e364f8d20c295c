package controllers

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/suite"
	"github.com/streambench/streambench-operator/internal/workload"
)

// ConditionPlanned is True when the suite's workloads were read and its
// clusters and cells planned (status.clusters, status.cells).
const ConditionPlanned = "Planned"

// reconcileSuiteNew reads the workload files, plans the clusters and cells
// (internal/suite) and starts the suite. A plan that cannot be made (a
// missing ConfigMap, an invalid workload file, two settings that are the
// same cell) fails the suite with a message naming the field: nothing has
// been deployed yet.
func (r *BenchmarkSuiteReconciler) reconcileSuiteNew(ctx context.Context, s *v1alpha1.BenchmarkSuite) (ctrl.Result, error) {
	workloads, msg, err := r.resolveWorkloads(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	var plan suite.Plan
	if msg == "" {
		plan, err = suite.New(s, workloads)
		if err != nil {
			msg = err.Error()
		}
	}
	if msg != "" {
		s.SetCondition(ConditionPlanned, metav1.ConditionFalse, v1alpha1.ReasonInvalid, msg)
		return ctrl.Result{}, r.moveSuiteTo(ctx, s, v1alpha1.PhaseFailed, v1alpha1.ReasonInvalid, msg)
	}

	s.Status.Workloads = workloads
	s.Status.Clusters, s.Status.Cells = suite.Status(plan)
	now := metav1.Now()
	s.Status.StartTime = &now
	s.Status.ResultsRef = suite.ConfigMapName(s.Name)
	planned := fmt.Sprintf("%d cells on %d clusters", len(plan.Cells), len(plan.Clusters))
	s.SetCondition(ConditionPlanned, metav1.ConditionTrue, "Planned", planned)
	return ctrl.Result{RequeueAfter: again}, r.moveSuiteTo(ctx, s, v1alpha1.PhaseRunning, "Planned", planned)
}

// resolveWorkloads is spec.workloads with every ConfigMap file read,
// defaulted and validated as local mode does (workload.Default, Validate).
// A refusal comes back as msg.
func (r *BenchmarkSuiteReconciler) resolveWorkloads(ctx context.Context, s *v1alpha1.BenchmarkSuite) (_ []v1alpha1.ResolvedWorkload, msg string, _ error) {
	files := &BenchmarkRunReconciler{Client: r.Client, APIReader: r.APIReader}
	var out []v1alpha1.ResolvedWorkload
	for i, w := range s.Spec.Workloads {
		fld := field.NewPath("spec", "workloads").Index(i)
		if w.Spec != nil {
			out = append(out, v1alpha1.ResolvedWorkload{Name: w.Name, Spec: *w.Spec.DeepCopy()})
			continue
		}
		create := "kubectl create configmap " + w.ConfigMapRef.Name + " --from-file=workloads/FILE.yaml"
		data, key, refused, err := files.configMapFile(ctx, s.Namespace, *w.ConfigMapRef, "", fld.Child("configMapRef").String(), create)
		if err != nil {
			return nil, "", err
		}
		if refused != nil {
			return nil, refused.message + " (then create the suite again)", nil
		}
		spec, err := workload.Parse(data)
		if err != nil {
			return nil, fmt.Sprintf("%s: ConfigMap %s key %s is not an OMB workload file: %v", fld.Child("configMapRef"), w.ConfigMapRef.Name, key, err), nil
		}
		workload.Default(&spec)
		if errs := workload.Validate(spec, fld.Child("spec")); len(errs) > 0 {
			return nil, fmt.Sprintf("%s: ConfigMap %s key %s: %v", fld.Child("configMapRef"), w.ConfigMapRef.Name, key, errs.ToAggregate()), nil
		}
		if spec.PayloadFile != "" {
			return nil, fmt.Sprintf("%s: ConfigMap %s key %s sets payloadFile, which a suite cannot give its cells; remove payloadFile (a generated payload is used)", fld.Child("configMapRef"), w.ConfigMapRef.Name, key), nil
		}
		out = append(out, v1alpha1.ResolvedWorkload{Name: w.Name, Spec: spec})
	}
	return out, "", nil
}
