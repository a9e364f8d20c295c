// Package faultjob builds the Job that signals a pod's processes from its
// node: a Pause (SIGSTOP, then SIGCONT) or a Kill (SIGKILL) of
// spec.faults in a cluster. Why a Job and not kubectl exec: see
// internal/faults/signal.go.
package faultjob

import (
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/faults"
	"github.com/streambench/streambench-operator/internal/provision/privileged"
)

// Role is the signal Jobs' streambench.io/role label.
const Role = "fault"

// Annotations on a signal Job: which fault of which repeat it carries
// out, and the pod it aims at, so a restarted operator reads the outcome
// into the right entry of status.faults.
const (
	AnnotationFault  = "streambench.io/fault"
	AnnotationTarget = "streambench.io/fault-pod"
	// AnnotationLeader is who led, for a fault on leader, as the
	// coordinator named it (the operator sets it).
	AnnotationLeader = "streambench.io/fault-leader"
)

// Slack bounds a Job beyond its pause (seconds): the pod's start on a
// node the load keeps busy, and the signals.
const Slack = 120

// Name is the Job of fault index in repeat (0 for a run not repeated),
// in the operator's namespace: <run>-fault<i>[-r<repeat>]-<8 hex digits
// of the run's UID>, so runs of one name in two namespaces never share
// one. At most 40 + 8 + 4 + 9 characters (16 faults, 20 repeats): a
// label value still.
func Name(run *v1alpha1.BenchmarkRun, index, repeat int) string {
	if repeat == 0 {
		return fmt.Sprintf("%s-fault%d-%s", run.Name, index, privileged.Suffix(run))
	}
	return fmt.Sprintf("%s-fault%d-r%d-%s", run.Name, index, repeat, privileged.Suffix(run))
}

// Job signals the containers ids of pod on node: action Kill or Pause
// (for pause). It is made in namespace, the operator's: never the run's
// (internal/provision/privileged says why), and labelled with the run's
// UID, namespace and name instead of an owner reference. Pure.
//
// It is privileged with hostPID: only from the host's PID namespace do
// SIGSTOP and SIGKILL reach a container's init. It is bound to the node
// by spec.nodeName, not the scheduler: it asks for no resources, so a
// node the brokers fill still admits it, and it tolerates every taint
// (it is there for a moment, for one pod of the run's own).
func Job(run *v1alpha1.BenchmarkRun, namespace, image string, index, repeat int, action v1alpha1.FaultAction, pause time.Duration, pod *corev1.Pod, ids []string) (*batchv1.Job, error) {
	args := []string{"signal-container", "--container-ids=" + strings.Join(ids, ",")}
	switch action {
	case v1alpha1.FaultKill:
		args = append(args, "--signal=KILL")
	case v1alpha1.FaultPause:
		if pause <= 0 {
			return nil, fmt.Errorf("a Pause needs a duration above 0")
		}
		args = append(args, "--signal=STOP", "--pause="+pause.String())
	default:
		return nil, fmt.Errorf("action %s is not carried out by a signal Job", action)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("pod %s has no running container to signal", pod.Name)
	}
	for _, id := range ids {
		// The Job signals whatever its arguments name, as root on the
		// node: only a whole id of the target's own containers goes in
		// (signal-container checks again).
		if err := faults.CheckContainerID(id); err != nil {
			return nil, fmt.Errorf("pod %s: %w", pod.Name, err)
		}
	}
	if pod.Spec.NodeName == "" {
		return nil, fmt.Errorf("pod %s is on no node yet", pod.Name)
	}
	if namespace == "" {
		return nil, fmt.Errorf("no namespace for the signal Job: the operator's own (--operator-namespace) is required")
	}
	l := privileged.Labels(run, Role)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: Name(run, index, repeat), Namespace: namespace, Labels: l,
			Annotations: map[string]string{
				AnnotationFault:  fmt.Sprintf("%d/%d", index, repeat),
				AnnotationTarget: pod.Namespace + "/" + pod.Name,
			},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To[int32](0),
			ActiveDeadlineSeconds: ptr.To(int64(pause/time.Second) + Slack),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: privileged.Labels(run, Role)},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					NodeName:      pod.Spec.NodeName,
					HostPID:       true,
					Tolerations:   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					// SIGTERM (the deadline, a deletion) lets a paused
					// target go; it needs a moment, not the default 30 s.
					TerminationGracePeriodSeconds: ptr.To[int64](10),
					Containers: []corev1.Container{{
						Name:                     "signal",
						Image:                    image,
						ImagePullPolicy:          corev1.PullIfNotPresent,
						Args:                     args,
						TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
						SecurityContext: &corev1.SecurityContext{
							Privileged: ptr.To(true),
							RunAsUser:  ptr.To[int64](0),
						},
					}},
				},
			},
		},
	}, nil
}
