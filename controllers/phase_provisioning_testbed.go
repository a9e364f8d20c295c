package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/machines"
	"github.com/streambench/streambench-operator/internal/pagecache"
	"github.com/streambench/streambench-operator/internal/provision/brokerpods"
	"github.com/streambench/streambench-operator/internal/provision/probe"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
)

// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get;list;watch

// The testbed step sits between "brokers ready" and "workers started":
// the probes measure each broker node's storage, and a Job reads the
// brokers' Java (phase_provisioning_java.go), before any load (unless
// spec.testbed.probe is false, and never on a class whose every volume is
// some broker's disk: probe.PlanFor), and with
// spec.testbed.dropPageCache the page cache of those nodes is dropped last,
// just before the workers start (so before warm-up and the measured phase).
// A backlog written later is dropped again mid-run, before its catch-up
// reads, when the coordinator asks (phase_running_pagecache.go).
// The Jobs are the step's state, named after the nodes, so a restarted
// operator finds them again; status.testbed set means the probes are done,
// status.testbed.pageCacheDropped that the caches were dropped.

// jobLabelName is the label the Job controller puts on a Job's pods.
const jobLabelName = "batch.kubernetes.io/job-name"

// probeGrace is how long after a probe Job's own deadline the controller
// waits for the Job controller to fail it before treating it as failed.
const probeGrace = time.Minute

// reconcileTestbed runs the probes and, when asked, drops the page cache.
// done is false while Jobs are still running (res says when to look again).
func (r *BenchmarkRunReconciler) reconcileTestbed(ctx context.Context, run *v1alpha1.BenchmarkRun) (done bool, res ctrl.Result, err error) {
	nodes, note, err := r.brokerNodes(ctx, run)
	if err != nil {
		return false, ctrl.Result{}, err
	}
	if run.Status.Testbed == nil {
		plan, err := r.probePlan(ctx, run)
		if err != nil {
			return false, ctrl.Result{}, err
		}
		probes, finished, err := r.runProbes(ctx, run, nodes, plan)
		if err != nil {
			return false, ctrl.Result{}, err
		}
		// The brokers' Java, read alongside (phase_provisioning_java.go).
		java, err := r.brokerJava(ctx, run)
		if err != nil || !finished || !java.done {
			return false, ctrl.Result{RequeueAfter: time.Second}, err
		}
		tb := probe.Testbed(run, plan, probes)
		java.record(&tb)
		if t := tb.Topology; t != nil && t.Version == "" {
			// The spec names no version; the Kafka names the one chosen
			// from the installed Strimzi (empty: left to Strimzi).
			t.Version = strimzi.KafkaVersionOf(run)
		}
		if n := r.pulsarVersion(ctx, run, tb.Topology); n != "" {
			tb.Note = strings.TrimPrefix(tb.Note+"; "+n, "; ")
		}
		if note != "" {
			tb.Note = strings.TrimPrefix(tb.Note+"; "+note, "; ")
		}
		if tb.Machines, err = r.machinesOf(ctx, machines.NodesOf(&tb, nodeNames(nodes)...)); err != nil {
			return false, ctrl.Result{}, err
		}
		if _, err := r.patchStatus(ctx, run, setMessage(testbedMessage(&tb)), func(run *v1alpha1.BenchmarkRun) bool {
			if run.Status.Testbed == nil {
				run.Status.Testbed = &tb
			}
			return true
		}); err != nil {
			return false, ctrl.Result{}, err
		}
	}
	if dropPageCache(run) && run.Status.Testbed.PageCacheDropped == nil {
		finished, failure, err := r.dropPageCaches(ctx, run, nodes, 0)
		if err != nil || !finished {
			return false, ctrl.Result{RequeueAfter: time.Second}, err
		}
		if failure != "" {
			_, err := r.fail(ctx, run, "PageCacheNotDropped", failure)
			return false, ctrl.Result{}, err
		}
		now := metav1.Now()
		if _, err := r.patchStatus(ctx, run, func(run *v1alpha1.BenchmarkRun) bool {
			if tb := run.Status.Testbed; tb != nil && tb.PageCacheDropped == nil {
				tb.PageCacheDropped = &now
				tb.PageCacheDrops = append(tb.PageCacheDrops, v1alpha1.PageCacheDrop{
					Seq: 0, Reason: pagecache.ReasonBeforeLoad, At: now, Dropped: true, Nodes: nodeNames(nodes)})
			}
			return true
		}); err != nil {
			return false, ctrl.Result{}, err
		}
	}
	// The testbed's pods are done with; removing them keeps a failed probe
	// pod from being read as a failed worker later, and the privileged
	// drop Jobs from staying in the operator's namespace.
	var jobs []client.Object
	for _, n := range nodes {
		jobs = append(jobs, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: probe.JobName(run, n.name)}})
	}
	jobs = append(jobs, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: probe.WorkerPoolJobName(run)}},
		&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: probe.JavaJobName(run)}})
	if _, err := deleteAll(ctx, r.Client, run, jobs...); err != nil {
		return false, ctrl.Result{}, err
	}
	if _, err := r.deletePrivileged(ctx, run, dropCacheJobNames(run, nodes, 0)...); err != nil {
		return false, ctrl.Result{}, err
	}
	return true, ctrl.Result{}, nil
}

func dropPageCache(run *v1alpha1.BenchmarkRun) bool {
	return run.Spec.Testbed != nil && run.Spec.Testbed.DropPageCache
}

func testbedMessage(tb *v1alpha1.Testbed) string {
	msg := fmt.Sprintf("testbed probed on %d nodes", len(tb.Nodes))
	if len(tb.Nodes) == 0 {
		msg = "testbed not measured"
	}
	if machines.Shared(tb.Machines) {
		msg += " (" + machines.Count(tb.Machines) + ")"
	}
	if tb.SlowestFsyncP99Ms != nil {
		msg += fmt.Sprintf(", slowest write+fdatasync p99 %.3f ms", *tb.SlowestFsyncP99Ms)
	}
	if tb.Note != "" {
		msg += " (" + tb.Note + ")"
	}
	return msg
}

// brokerNode is a node that runs brokers or bookies of the run.
type brokerNode struct {
	name  string
	roles []string
}

// The StrimziPodSet of a run's node pool is read to tell its broker pods
// from look-alikes (brokerWorkload), from the API server: one get per
// look, no cache of every StrimziPodSet of the cluster.
// +kubebuilder:rbac:groups=core.strimzi.io,resources=strimzipodsets,verbs=get

// brokerPods are the pods of sel that the run's brokers are: listed by
// their labels, which anyone who may create a pod in the namespace can
// copy, and kept only when their controller is the workload that made
// them (brokerWorkload), by UID. The probes and the privileged page-cache
// Job go to those pods' nodes and the Java probe runs one's image and
// security context: a look-alike must choose none of them (issue 58).
func (r *BenchmarkRunReconciler) brokerPods(ctx context.Context, run *v1alpha1.BenchmarkRun, sel brokerpods.Group) ([]corev1.Pod, error) {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(run.Namespace), client.MatchingLabels(sel.Labels)); err != nil {
		return nil, err
	}
	if len(pods.Items) == 0 {
		return nil, nil
	}
	owner, err := r.brokerWorkload(ctx, run, sel)
	if err != nil || owner == nil {
		return nil, err
	}
	return controlledPods(pods.Items, owner), nil
}

// brokerWorkload is the object that makes the pods of sel, when it is the
// run's; nil while it does not exist. A Pulsar StatefulSet is the run's
// release's by its name (Deploy refused a release of the run's name that
// the run did not install). A StrimziPodSet is the run's when it is owned
// by the run's KafkaNodePool, by UID: Strimzi names the pool its owner,
// and the run controls the pool (createOwned).
func (r *BenchmarkRunReconciler) brokerWorkload(ctx context.Context, run *v1alpha1.BenchmarkRun, sel brokerpods.Group) (metav1.Object, error) {
	key := types.NamespacedName{Namespace: run.Namespace, Name: sel.OwnerName}
	if sel.Owner != strimzi.PodSetGVK {
		var sts appsv1.StatefulSet
		if err := r.Get(ctx, key, &sts); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		return &sts, nil
	}
	podSet := strimziRef(strimzi.PodSetGVK, run.Namespace, sel.OwnerName)
	if err := r.apiReader().Get(ctx, key, podSet); apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	pool := strimziRef(strimzi.KafkaNodePoolGVK, run.Namespace, strimzi.PoolName(run))
	if err := r.Get(ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(pool, run) || !slices.ContainsFunc(podSet.GetOwnerReferences(), func(o metav1.OwnerReference) bool { return o.UID == pool.GetUID() }) {
		return nil, nil
	}
	return podSet, nil
}

// brokerNodes finds the nodes the run's brokers (Kafka) or bookies and
// brokers (Pulsar) were scheduled to, from their pods. An existing cluster
// has none the run knows of. note says what was not found.
func (r *BenchmarkRunReconciler) brokerNodes(ctx context.Context, run *v1alpha1.BenchmarkRun) ([]brokerNode, string, error) {
	if run.Spec.Cluster.Managed == nil {
		return nil, "", nil
	}
	sels := brokerpods.Groups(run)
	roles := map[string]map[string]bool{}
	for _, s := range sels {
		pods, err := r.brokerPods(ctx, run, s)
		if err != nil {
			return nil, "", err
		}
		for _, p := range pods {
			if p.Spec.NodeName == "" {
				continue
			}
			if roles[p.Spec.NodeName] == nil {
				roles[p.Spec.NodeName] = map[string]bool{}
			}
			roles[p.Spec.NodeName][string(s.Role)] = true
		}
	}
	if len(roles) == 0 {
		var wanted []string
		for _, s := range sels {
			wanted = append(wanted, labelsText(s.Labels))
		}
		return nil, fmt.Sprintf("no broker pods found on any node (labels %s, made by the run's brokers), so no broker node was measured", strings.Join(wanted, " or ")), nil
	}
	var out []brokerNode
	for n, rs := range roles {
		bn := brokerNode{name: n}
		for role := range rs {
			bn.roles = append(bn.roles, role)
		}
		sort.Strings(bn.roles)
		out = append(out, bn)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, "", nil
}

func labelsText(l map[string]string) string {
	var kv []string
	for k, v := range l {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}

// probePlan decides what the probes may claim (probe.PlanFor). The
// StorageClasses are read only for a managed run that is probed: no other
// run claims a volume.
func (r *BenchmarkRunReconciler) probePlan(ctx context.Context, run *v1alpha1.BenchmarkRun) (probe.Plan, error) {
	var classes storagev1.StorageClassList
	if run.Spec.Cluster.Managed != nil && run.Spec.Testbed.ProbeOrDefault() {
		if err := r.List(ctx, &classes); err != nil {
			return probe.Plan{}, fmt.Errorf("listing StorageClasses to decide what the testbed probe may claim: %w", err)
		}
	}
	return probe.PlanFor(run, classes.Items), nil
}

// runProbes creates the probe Jobs the plan asks for (one per broker node;
// one on the workers' pool for an existing cluster; none when the plan
// probes nothing) and collects their results once every Job has finished.
func (r *BenchmarkRunReconciler) runProbes(ctx context.Context, run *v1alpha1.BenchmarkRun, nodes []brokerNode, plan probe.Plan) ([]v1alpha1.NodeProbe, bool, error) {
	if !plan.Probes() {
		return nil, true, nil
	}
	var jobs []*batchv1.Job
	if run.Spec.Cluster.Managed == nil {
		jobs = append(jobs, probe.WorkerPoolJob(run, r.WorkerImage))
	}
	for _, n := range nodes {
		jobs = append(jobs, probe.NodeJob(run, r.WorkerImage, n.name, n.roles, plan.Volumes))
	}
	var out []v1alpha1.NodeProbe
	finished := true
	for _, want := range jobs {
		if err := createOwned(ctx, r.Client, run, want); err != nil {
			return nil, false, err
		}
		var job batchv1.Job
		if err := r.Get(ctx, client.ObjectKeyFromObject(want), &job); err != nil {
			if apierrors.IsNotFound(err) { // not in the cache yet
				finished = false
				continue
			}
			return nil, false, err
		}
		if !metav1.IsControlledBy(&job, run) {
			// Replaced since createOwned saw the run's own: its result
			// is not the node's.
			return nil, false, permanent(fmt.Errorf("probe Job %s/%s was replaced by one this run did not create (it has %s); streambench neither uses nor deletes it: delete it, and create the run again",
				job.Namespace, job.Name, notControlled(&job)))
		}
		res, ok, err := r.probeResult(ctx, run, &job)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			finished = false
			continue
		}
		if len(nodes) > 0 { // a broker node: its roles come with its Job
			res.Roles = probe.DecodeRoles(job.Annotations[probe.AnnotationRoles])
		} else {
			res.Roles = []string{"worker"}
		}
		out = append(out, res)
	}
	return out, finished, nil
}

// probeResult reads one probe Job's result: the JSON its container left as
// termination message, in a pod the Job made (controlledPods: a
// look-alike carrying the Job's label would write the node's figures). A
// failed (or overdue) Job gives a node with the reason in Error, never a
// run that waits forever.
func (r *BenchmarkRunReconciler) probeResult(ctx context.Context, run *v1alpha1.BenchmarkRun, job *batchv1.Job) (v1alpha1.NodeProbe, bool, error) {
	node := job.Annotations[probe.AnnotationNode]
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(run.Namespace), client.MatchingLabels{jobLabelName: job.Name}); err != nil {
		return v1alpha1.NodeProbe{}, false, err
	}
	var message, podNode string
	for _, p := range controlledPods(pods.Items, job) {
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && t.Message != "" {
				message, podNode = t.Message, p.Spec.NodeName
			}
		}
	}
	if node == "" {
		node = podNode
	}
	overdue := time.Since(job.CreationTimestamp.Time) > time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second+probeGrace
	failed := jobCondition(job, batchv1.JobFailed)
	switch {
	case jobCondition(job, batchv1.JobComplete) != nil:
		res, err := probe.ParseResult(message)
		if err != nil {
			return v1alpha1.NodeProbe{Node: node, Error: fmt.Sprintf("Job %s: %v", job.Name, err)}, true, nil
		}
		if res.Node == "" {
			res.Node = node
		}
		return res, true, nil
	case failed != nil || overdue:
		why := "did not finish within its deadline"
		if failed != nil {
			why = fmt.Sprintf("failed: %s: %s", failed.Reason, failed.Message)
		}
		out := v1alpha1.NodeProbe{Node: node}
		if res, err := probe.ParseResult(message); err == nil && res.Error != "" {
			out = res // the probe ran and said what went wrong
			out.Node = node
			why += ": " + res.Error
		}
		out.Error = fmt.Sprintf("probe Job %s %s", job.Name, why)
		return out, true, nil
	}
	return v1alpha1.NodeProbe{}, false, nil
}

func nodeNames(nodes []brokerNode) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.name)
	}
	return out
}

// dropPageCaches runs the privileged page-cache Job on every broker node,
// for the coordinator's request seq (0: before the load); failure says
// which did not succeed. The Jobs run in the operator's namespace
// (privileged_jobs.go); the nodes are those of the run's brokers
// (brokerNodes), never any a request could name.
func (r *BenchmarkRunReconciler) dropPageCaches(ctx context.Context, run *v1alpha1.BenchmarkRun, nodes []brokerNode, seq int32) (finished bool, failure string, err error) {
	if len(nodes) == 0 {
		note := ""
		if run.Status.Testbed != nil {
			note = run.Status.Testbed.Note
		}
		return true, "spec.testbed.dropPageCache: no broker node was found to drop the page cache on (" + note + ")", nil
	}
	if msg, err := r.privilegedRefusal(ctx); err != nil {
		return false, "", err
	} else if msg != "" {
		return true, dropRefused(msg), nil
	}
	finished = true
	var failures []string
	for _, n := range nodes {
		want := probe.DropCacheJobFor(run, r.OperatorNamespace, r.WorkerImage, n.name, seq)
		if err := r.createPrivileged(ctx, run, want); err != nil {
			switch {
			case apierrors.IsForbidden(err):
				return true, dropRefused(r.privilegedForbidden("page-cache Job", want.Name, err)), nil
			case errors.Is(err, errNotRunsJob):
				return true, dropRefused(err.Error()), nil
			}
			return false, "", err
		}
		job, err := r.privilegedJob(ctx, run, want.Name)
		if err != nil {
			if apierrors.IsNotFound(err) { // not in the cache yet
				finished = false
				continue
			}
			return false, "", err
		}
		overdue := time.Since(job.CreationTimestamp.Time) > time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second+probeGrace
		switch c := jobCondition(job, batchv1.JobFailed); {
		case jobCondition(job, batchv1.JobComplete) != nil:
		case c != nil:
			failures = append(failures, fmt.Sprintf("node %s: Job %s/%s failed: %s: %s", n.name, job.Namespace, job.Name, c.Reason, c.Message))
		case overdue:
			failures = append(failures, fmt.Sprintf("node %s: Job %s/%s did not finish within its deadline", n.name, job.Namespace, job.Name))
		default:
			finished = false
		}
	}
	if !finished {
		return false, "", nil
	}
	if len(failures) > 0 {
		return true, "spec.testbed.dropPageCache: the page cache was not dropped on every broker node (" + strings.Join(failures, "; ") +
			"); see the Jobs' pods in the operator's namespace " + r.OperatorNamespace + ", or set dropPageCache to false", nil
	}
	return true, "", nil
}

// dropRefused is the failure of a drop the cluster does not allow.
func dropRefused(why string) string {
	return "spec.testbed.dropPageCache needs a privileged pod on each broker node, and " + why + "; or set spec.testbed.dropPageCache to false"
}

// dropCacheJobNames are the page-cache Jobs of request seq on nodes.
func dropCacheJobNames(run *v1alpha1.BenchmarkRun, nodes []brokerNode, seq int32) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, probe.DropCacheJobNameFor(run, n.name, seq))
	}
	return out
}

// checkPodSecurity fails a run that asks for the privileged page-cache
// Jobs when the operator's namespace, where they run, forbids them,
// before anything is deployed. The run's own namespace is not looked at:
// it needs no privilege.
func (r *BenchmarkRunReconciler) checkPodSecurity(ctx context.Context, run *v1alpha1.BenchmarkRun) (string, error) {
	if !dropPageCache(run) {
		return "", nil
	}
	msg, err := r.privilegedRefusal(ctx)
	if err != nil || msg == "" {
		return "", err
	}
	return dropRefused(msg), nil
}

// pulsarVersion fills in the Pulsar a managed Pulsar run deployed (the
// chart's default when the spec pins none) from the release's own record
// of its chart, and returns a note when the spec's version is not the
// chart's default: a report of a run on 4.0.7 set beside the chart's 4.0.12
// then says which ran and why. A release that cannot be read leaves the
// topology as the spec gave it; the note says so.
func (r *BenchmarkRunReconciler) pulsarVersion(ctx context.Context, run *v1alpha1.BenchmarkRun, t *v1alpha1.Topology) string {
	if run.Spec.System != v1alpha1.SystemPulsar || run.Spec.Cluster.Managed == nil || t == nil || r.Helm == nil {
		return ""
	}
	info, err := r.Helm.ReleaseChart(ctx, run.Namespace, pulsar.ReleaseName(run))
	if err != nil {
		return "the Pulsar release's chart could not be read (" + err.Error() + "): the version is the spec's"
	}
	v, note := pulsar.PulsarVersion(t.Version, info)
	t.Version = v
	return note
}
