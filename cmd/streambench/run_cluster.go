package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// submitRun creates the BenchmarkRun of file in the cluster, as kubectl
// create would (a run with a name but no generateName gets that name as
// its generateName prefix, so a nightly CronJob makes a new run each
// time), waits until it finished and its results were archived, and fails
// unless it succeeded: what a CronJob's container runs before the gate
// (docs/archive.md, "A nightly benchmark").
func submitRun(ctx context.Context, w io.Writer, cf clusterFlags, file string, timeout time.Duration) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var run v1alpha1.BenchmarkRun
	if err := yaml.UnmarshalStrict(raw, &run); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if run.Kind != "" && run.Kind != "BenchmarkRun" {
		return fmt.Errorf("%s is a %s, not a BenchmarkRun", file, run.Kind)
	}
	c, ns, err := cf.client()
	if err != nil {
		return err
	}
	if cf.namespace != "" || run.Namespace == "" {
		run.Namespace = ns
	}
	if run.GenerateName == "" {
		run.GenerateName = run.Name + "-"
	}
	run.Name = ""
	if err := c.Create(ctx, &run); err != nil {
		return fmt.Errorf("creating the BenchmarkRun of %s in namespace %s: %w", file, run.Namespace, err)
	}
	fmt.Fprintf(w, "benchmarkrun %s/%s created\n", run.Namespace, run.Name)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	phase := v1alpha1.Phase("")
	for {
		var got v1alpha1.BenchmarkRun
		if err := c.Get(ctx, client.ObjectKeyFromObject(&run), &got); err != nil {
			return fmt.Errorf("waiting for BenchmarkRun %s/%s: %w", run.Namespace, run.Name, err)
		}
		if got.Status.Phase != phase {
			phase = got.Status.Phase
			fmt.Fprintf(w, "%s: %s\n", got.Name, phase)
		}
		if (got.Status.Phase == v1alpha1.PhaseSucceeded || got.Status.Phase == v1alpha1.PhaseFailed) && archiveSettled(&got) {
			if a := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionArchived); a != nil {
				fmt.Fprintf(w, "%s: archive: %s\n", got.Name, a.Message)
			}
			if got.Status.Phase != v1alpha1.PhaseSucceeded {
				return fmt.Errorf("BenchmarkRun %s/%s %s: %s", got.Namespace, got.Name, got.Status.Phase, got.Status.Message)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("BenchmarkRun %s/%s still %s after --timeout %s", run.Namespace, run.Name, got.Status.Phase, timeout)
		case <-time.After(2 * time.Second):
		}
	}
}

// archiveSettled reports whether a finished run's archive is done or
// given up, or it has none (no condition Archived once its results are
// recorded and the operator had a moment: a run without an archive never
// gets one).
func archiveSettled(run *v1alpha1.BenchmarkRun) bool {
	a := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionArchived)
	if a != nil {
		return a.Status == "True" || a.Reason == v1alpha1.ReasonArchiveAbandoned
	}
	if run.Status.ResultsRef == "" {
		return true // nothing to archive
	}
	if run.Spec.Results != nil && run.Spec.Results.Archive != nil {
		return false
	}
	// The operator's default archive is not known here: wait a little
	// for its condition.
	return run.Status.CompletionTime == nil || time.Since(run.Status.CompletionTime.Time) > 20*time.Second
}
