package faultjob

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/privileged"
)

func TestJob(t *testing.T) {
	run := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r1", Namespace: "bench", UID: "7a1c0de5-0000-4000-8000-000000000001"}}
	suffix := privileged.Suffix(run)
	target := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "r1-broker-82f3e9-1", Namespace: "bench"}, Spec: corev1.PodSpec{NodeName: "n2"}}
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
		ns       string // the operator's namespace; "" for streambench-system
		wantArgs string
		wantName string
		deadline int64
		wantErr  string
	}{
		{name: "kill", action: v1alpha1.FaultKill, pod: target, ids: []string{a, b},
			wantArgs: "signal-container --container-ids=" + a + "," + b + " --signal=KILL", wantName: "r1-fault3-" + suffix, deadline: Slack},
		{name: "pause", action: v1alpha1.FaultPause, pause: 5 * time.Second, pod: target, ids: []string{a}, repeat: 2,
			wantArgs: "signal-container --container-ids=" + a + " --signal=STOP --pause=5s", wantName: "r1-fault3-r2-" + suffix, deadline: 5 + Slack},
		{name: "pause without duration", action: v1alpha1.FaultPause, pod: target, ids: []string{a}, wantErr: "duration"},
		{name: "delete is the API's", action: v1alpha1.FaultDeletePod, pod: target, ids: []string{a}, wantErr: "not carried out by a signal Job"},
		{name: "no container", action: v1alpha1.FaultKill, pod: target, wantErr: "no running container"},
		{name: "no node", action: v1alpha1.FaultKill, pod: unplaced, ids: []string{a}, wantErr: "on no node"},
		// A pod's status is the kubelet's, but the Job runs as root on the
		// node: nothing but whole ids goes into its arguments.
		{name: "a short id", action: v1alpha1.FaultKill, pod: target, ids: []string{a, a[:12]}, wantErr: "pod r1-broker-82f3e9-1: container id \"0123456789ab\" is 12 characters long"},
		{name: "a prefixed id", action: v1alpha1.FaultKill, pod: target, ids: []string{"containerd://" + a}, wantErr: "64 lowercase hex digits"},
		{name: "a list smuggled into one id", action: v1alpha1.FaultKill, pod: target, ids: []string{a[:31] + "," + a[:32]}, wantErr: "holds ','"},
		{name: "no operator namespace", action: v1alpha1.FaultKill, pod: target, ids: []string{a}, ns: "-", wantErr: "--operator-namespace"},
		{name: "upper case", action: v1alpha1.FaultKill, pod: target, ids: []string{strings.ToUpper(a)}, wantErr: "holds 'A'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := "streambench-system"
			switch tc.ns {
			case "-":
				ns = ""
			case "":
			default:
				ns = tc.ns
			}
			j, err := Job(run, ns, "img", 3, tc.repeat, tc.action, tc.pause, tc.pod, tc.ids)
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
			if j.Annotations[AnnotationTarget] != "bench/r1-broker-82f3e9-1" || j.Labels["streambench.io/role"] != Role {
				t.Errorf("annotations %v labels %v", j.Annotations, j.Labels)
			}
			// In the operator's namespace, never the run's; no owner
			// reference can cross to the run, its labels name it.
			if j.Namespace != "streambench-system" || len(j.OwnerReferences) != 0 {
				t.Errorf("Job in %q with owners %v, want the operator's namespace and none", j.Namespace, j.OwnerReferences)
			}
			for _, l := range []map[string]string{j.Labels, j.Spec.Template.Labels} {
				if l[privileged.LabelRunUID] != string(run.UID) || l[privileged.LabelRunNamespace] != "bench" || l["streambench.io/run"] != "r1" {
					t.Errorf("labels %v do not name the run by UID, namespace and name", l)
				}
			}
			if len(j.Name) > 63 {
				t.Errorf("name %s is longer than a label value", j.Name)
			}
			if len(c.Resources.Requests) != 0 {
				t.Errorf("requests %v: a full node must still admit it", c.Resources.Requests)
			}
		})
	}
}

// The longest run name, the last of 16 faults and of 20 repeats: a name
// still fit for the job-name label of the Job's pod; and runs of one name
// in two namespaces never share a Job in the operator's namespace.
func TestName(t *testing.T) {
	long := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("r", 40), UID: "u-1"}}
	if n := Name(long, 15, 19); len(n) > 63 {
		t.Errorf("%s: %d characters, more than a label value's 63", n, len(n))
	}
	a := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r1", Namespace: "team-a", UID: "u-a"}}
	b := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r1", Namespace: "team-b", UID: "u-b"}}
	if Name(a, 0, 0) == Name(b, 0, 0) {
		t.Errorf("runs r1 of team-a and team-b share the Job %s", Name(a, 0, 0))
	}
}
