package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/javaruntime"
	"github.com/streambench/streambench-operator/internal/provision/brokerpods"
	"github.com/streambench/streambench-operator/internal/provision/probe"
)

// The brokers' Java is read with the testbed, before the load: a Job runs
// the java of a broker pod's image on that pod's node (probe.JavaJob) and
// leaves its output as its termination message, so the controller needs
// no pods/exec or pods/log permission. The result lands in
// status.testbed.topology (image and java) with the testbed's one
// status write; the coordinator carries it into summary.json's brokers
// section, and compare flags runs on different Java majors. The Job is
// the step's state, named after the run, so a restarted operator finds
// it again. A probe that cannot run (no broker pod, an image without a
// shell, an overdue Job) leaves the Java unknown and says why in the
// testbed's note: it never holds up or fails a run.

// javaProbe is the outcome of the Java probe of a run.
type javaProbe struct {
	runtime *v1alpha1.JavaRuntime
	image   string
	// note says why runtime is nil.
	note string
	done bool
}

// record puts the outcome into a testbed about to be written.
func (j javaProbe) record(tb *v1alpha1.Testbed) {
	if tb.Topology != nil {
		tb.Topology.Image, tb.Topology.Java = j.image, j.runtime
	}
	if j.note != "" {
		tb.Note = strings.TrimPrefix(tb.Note+"; "+j.note, "; ")
	}
}

// brokerJava runs the Java probe of a managed run and reads its result
// once the Job has finished; done is false while it runs. An existing
// cluster has no broker pod the run knows of: nothing is probed.
func (r *BenchmarkRunReconciler) brokerJava(ctx context.Context, run *v1alpha1.BenchmarkRun) (javaProbe, error) {
	if run.Spec.Cluster.Managed == nil {
		return javaProbe{done: true}, nil
	}
	var job batchv1.Job
	err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: probe.JavaJobName(run)}, &job)
	if apierrors.IsNotFound(err) {
		pod, err := r.javaBrokerPod(ctx, run)
		if err != nil {
			return javaProbe{}, err
		}
		if pod == nil {
			return javaProbe{done: true, note: "the brokers' Java version was not read: no scheduled broker pod was found to take the image from"}, nil
		}
		// Not in the cache yet on the next look, possibly: the pass after
		// finds it.
		return javaProbe{}, createOwned(ctx, r.Client, run, probe.JavaJob(run, pod))
	}
	if err != nil {
		return javaProbe{}, err
	}
	if !metav1.IsControlledBy(&job, run) {
		// Someone else's Job of the probe's name: neither its image nor
		// its pods' output is the brokers' Java (issue 58). The probe
		// never fails a run: the Java stays unknown, saying why.
		return javaProbe{done: true, note: fmt.Sprintf(
			"the brokers' Java version was not read: Job %s exists and was not created by this run (it has %s); streambench neither uses nor deletes it",
			job.Name, notControlled(&job))}, nil
	}
	out := javaProbe{image: job.Spec.Template.Spec.Containers[0].Image}
	message, err := r.terminationMessage(ctx, run, &job)
	if err != nil {
		return javaProbe{}, err
	}
	overdue := time.Since(job.CreationTimestamp.Time) > time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second+probeGrace
	failed := jobCondition(&job, batchv1.JobFailed)
	switch {
	case jobCondition(&job, batchv1.JobComplete) != nil:
		rt, err := javaruntime.Parse(message)
		if err != nil {
			out.note = fmt.Sprintf("the brokers' Java version was not read from image %s (Job %s): %v", out.image, job.Name, err)
		} else {
			out.runtime = &rt
		}
	case failed != nil || overdue:
		why := "did not finish within its deadline"
		if failed != nil {
			why = fmt.Sprintf("failed: %s: %s", failed.Reason, failed.Message)
		}
		if m := strings.TrimSpace(message); m != "" {
			why += ": " + lastLines(m, 3)
		}
		out.note = fmt.Sprintf("the brokers' Java version was not read from image %s: Job %s %s", out.image, job.Name, why)
	default:
		return javaProbe{}, nil
	}
	out.done = true
	return out, nil
}

// javaBrokerPod is the broker pod whose image the probe runs: one the
// run's brokers made (brokerPods; a look-alike's image and security
// context must not reach the probe's pod), a running one first (its image
// is on its node), by name, so a retried reconcile picks the same.
func (r *BenchmarkRunReconciler) javaBrokerPod(ctx context.Context, run *v1alpha1.BenchmarkRun) (*corev1.Pod, error) {
	brokers, ok := brokerpods.Brokers(run)
	if !ok {
		return nil, nil
	}
	pods, err := r.brokerPods(ctx, run, brokers)
	if err != nil {
		return nil, err
	}
	var candidates []corev1.Pod
	for _, p := range pods {
		if _, ok := probe.BrokerContainer(&p); ok && p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			candidates = append(candidates, p)
		}
	}
	if len(candidates) == 0 {
		return nil, nil
	}
	sort.SliceStable(candidates, func(i, j int) bool {
		ri, rj := candidates[i].Status.Phase == corev1.PodRunning, candidates[j].Status.Phase == corev1.PodRunning
		if ri != rj {
			return ri
		}
		return candidates[i].Name < candidates[j].Name
	})
	return &candidates[0], nil
}

// terminationMessage is what the container of a Job's pod left as its
// termination message (the last pod's, if there were several): of a pod
// the Job made (controlledPods), not of any pod carrying its job-name
// label.
func (r *BenchmarkRunReconciler) terminationMessage(ctx context.Context, run *v1alpha1.BenchmarkRun, job *batchv1.Job) (string, error) {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(run.Namespace), client.MatchingLabels{jobLabelName: job.Name}); err != nil {
		return "", err
	}
	var message string
	for _, p := range controlledPods(pods.Items, job) {
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && t.Message != "" {
				message = t.Message
			}
		}
	}
	return message, nil
}

// lastLines is the last n lines of s, on one line: a failed probe's
// message ends with what went wrong (sh: java: not found).
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}
