package faultjob

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func TestJob(t *testing.T) {
	run := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r1", Namespace: "bench"}}
	target := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "r1-r1-1", Namespace: "bench"}, Spec: corev1.PodSpec{NodeName: "n2"}}
	unplaced := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	const (
		a = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		b = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
	)
	for _, tc := range []struct {
		name     string
		action   v1alpha1.FaultAction
		pause    time.Duration
		pod      *corev1.Pod
		ids      []string
		repeat   int
		wantArgs string
		wantName string
		deadline int64
		wantErr  string
	}{
		{name: "kill", action: v1alpha1.FaultKill, pod: target, ids: []string{a, b},
			wantArgs: "signal-container --container-ids=" + a + "," + b + " --signal=KILL", wantName: "r1-fault3", deadline: Slack},
		{name: "pause", action: v1alpha1.FaultPause, pause: 5 * time.Second, pod: target, ids: []string{a}, repeat: 2,
			wantArgs: "signal-container --container-ids=" + a + " --signal=STOP --pause=5s", wantName: "r1-fault3-r2", deadline: 5 + Slack},
		{name: "pause without duration", action: v1alpha1.FaultPause, pod: target, ids: []string{a}, wantErr: "duration"},
		{name: "delete is the API's", action: v1alpha1.FaultDeletePod, pod: target, ids: []string{a}, wantErr: "not carried out by a signal Job"},
		{name: "no container", action: v1alpha1.FaultKill, pod: target, wantErr: "no running container"},
		{name: "no node", action: v1alpha1.FaultKill, pod: unplaced, ids: []string{a}, wantErr: "on no node"},
		// A pod's status is the kubelet's, but the Job runs as root on the
		// node: nothing but whole ids goes into its arguments.
		{name: "a short id", action: v1alpha1.FaultKill, pod: target, ids: []string{a, a[:12]}, wantErr: "pod r1-r1-1: container id \"0123456789ab\" is 12 characters long"},
		{name: "a prefixed id", action: v1alpha1.FaultKill, pod: target, ids: []string{"containerd://" + a}, wantErr: "64 lowercase hex digits"},
		{name: "a list smuggled into one id", action: v1alpha1.FaultKill, pod: target, ids: []string{a[:31] + "," + a[:32]}, wantErr: "holds ','"},
		{name: "upper case", action: v1alpha1.FaultKill, pod: target, ids: []string{strings.ToUpper(a)}, wantErr: "holds 'A'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := Job(run, "img", 3, tc.repeat, tc.action, tc.pause, tc.pod, tc.ids)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ps := j.Spec.Template.Spec
			c := ps.Containers[0]
			if got := strings.Join(c.Args, " "); got != tc.wantArgs {
				t.Errorf("args %q, want %q", got, tc.wantArgs)
			}
			if j.Name != tc.wantName || *j.Spec.ActiveDeadlineSeconds != tc.deadline {
				t.Errorf("name %s deadline %d, want %s %d", j.Name, *j.Spec.ActiveDeadlineSeconds, tc.wantName, tc.deadline)
			}
			if ps.NodeName != "n2" || !ps.HostPID || !*c.SecurityContext.Privileged || len(ps.Tolerations) != 1 || ps.Tolerations[0].Operator != corev1.TolerationOpExists {
				t.Errorf("want on the target's node, hostPID, privileged, tolerating all: %+v", ps)
			}
			if j.Annotations[AnnotationTarget] != "bench/r1-r1-1" || j.Labels["streambench.io/role"] != Role {
				t.Errorf("annotations %v labels %v", j.Annotations, j.Labels)
			}
			if len(c.Resources.Requests) != 0 {
				t.Errorf("requests %v: a full node must still admit it", c.Resources.Requests)
			}
		})
	}
}
