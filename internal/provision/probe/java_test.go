package probe

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/javaruntime"
)

func TestBrokerContainer(t *testing.T) {
	c := func(names ...string) *corev1.Pod {
		p := &corev1.Pod{}
		for _, n := range names {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: n, Image: n + ":1"})
		}
		return p
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"Strimzi", c("kafka"), "kafka"},
		{"the Pulsar chart, behind a sidecar", c("log-shipper", "bench-pulsar-broker"), "bench-pulsar-broker"},
		{"anything else: the first", c("main", "sidecar"), "main"},
		{"no container", c(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := BrokerContainer(tt.pod)
			if got.Name != tt.want || ok != (tt.want != "") {
				t.Errorf("got %q (%v), want %q", got.Name, ok, tt.want)
			}
		})
	}
}

// TestJavaJob: the probe runs the broker pod's image on its node, as the
// broker runs, with nothing of the broker's but what it needs to start.
func TestJavaJob(t *testing.T) {
	taint := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "streaming", Effect: corev1.TaintEffectNoSchedule}
	broker := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-kafka-brokers-0", Namespace: "bench"},
		Spec: corev1.PodSpec{
			NodeName:           "node-b",
			Tolerations:        []corev1.Toleration{taint},
			ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "registry"}},
			ServiceAccountName: "bench-kafka",
			SecurityContext:    &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), FSGroup: ptr.To[int64](0)},
			Containers: []corev1.Container{{
				Name: "kafka", Image: "quay.io/strimzi/kafka:0.47.0-kafka-4.0.0",
				Env:             []corev1.EnvVar{{Name: "KAFKA_HEAP_OPTS", Value: "-Xmx2g"}},
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true)},
				VolumeMounts:    []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/kafka"}},
			}},
		},
	}
	j := JavaJob(run(v1alpha1.SystemKafka, nil), broker)
	if j.Name != "run-a-java" || j.Namespace != "bench" || j.Labels["streambench.io/role"] != RoleJava || j.Spec.Template.Labels["streambench.io/role"] != RoleJava {
		t.Errorf("name %s/%s, labels %v", j.Namespace, j.Name, j.Labels)
	}
	if *j.Spec.ActiveDeadlineSeconds != JavaDeadline || *j.Spec.BackoffLimit != 0 {
		t.Errorf("deadline %d, backoff %d", *j.Spec.ActiveDeadlineSeconds, *j.Spec.BackoffLimit)
	}
	if j.Annotations[AnnotationNode] != "node-b" || j.Annotations[AnnotationBrokerPod] != "bench-kafka-brokers-0" {
		t.Errorf("annotations %v", j.Annotations)
	}
	p := j.Spec.Template.Spec
	if got := p.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values; !reflect.DeepEqual(got, []string{"node-b"}) {
		t.Errorf("pinned to %v, want the broker's node", got)
	}
	if !reflect.DeepEqual(p.Tolerations, broker.Spec.Tolerations) || !reflect.DeepEqual(p.ImagePullSecrets, broker.Spec.ImagePullSecrets) ||
		!reflect.DeepEqual(p.SecurityContext, broker.Spec.SecurityContext) || p.SecurityContext == broker.Spec.SecurityContext {
		t.Errorf("tolerations %v, pull secrets %v, pod security %+v: want copies of the broker's", p.Tolerations, p.ImagePullSecrets, p.SecurityContext)
	}
	if p.ServiceAccountName != "" || p.AutomountServiceAccountToken == nil || *p.AutomountServiceAccountToken || len(p.Volumes) != 0 {
		t.Errorf("service account %q (token %v), volumes %v: want none of the broker's", p.ServiceAccountName, p.AutomountServiceAccountToken, p.Volumes)
	}
	if len(p.Containers) != 1 {
		t.Fatalf("%d containers", len(p.Containers))
	}
	c := p.Containers[0]
	if c.Image != "quay.io/strimzi/kafka:0.47.0-kafka-4.0.0" || len(c.Env) != 0 || len(c.VolumeMounts) != 0 ||
		!reflect.DeepEqual(c.SecurityContext, broker.Spec.Containers[0].SecurityContext) {
		t.Errorf("container %+v: want the broker's image and security context, nothing else of it", c)
	}
	if !reflect.DeepEqual(c.Command[:2], []string{"/bin/sh", "-c"}) || !strings.Contains(c.Command[2], "-XshowSettings:properties -version 2>/dev/termination-log") {
		t.Errorf("command %q", c.Command)
	}
	if c.TerminationMessagePath != "" && c.TerminationMessagePath != corev1.TerminationMessagePathDefault {
		t.Errorf("termination message path %q: the script writes the default", c.TerminationMessagePath)
	}
}

// The probe's script, run here with sh and this machine's java (the
// termination message path moved to a temporary file): with JAVA_HOME the
// java under it, without it java on PATH; what it leaves parses.
func TestJavaScript(t *testing.T) {
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("no java on PATH")
	}
	real, err := filepath.EvalSymlinks(java)
	if err != nil {
		t.Fatal(err)
	}
	for _, home := range []string{"", filepath.Dir(filepath.Dir(real))} {
		msg := filepath.Join(t.TempDir(), "termination-log")
		cmd := exec.Command("/bin/sh", "-c", strings.ReplaceAll(javaScript, corev1.TerminationMessagePathDefault, msg))
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		if home != "" {
			// PATH without java: only JAVA_HOME finds it.
			cmd.Env = []string{"PATH=/nonexistent", "JAVA_HOME=" + home}
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("JAVA_HOME=%q: %v: %s", home, err, out)
		}
		b, err := os.ReadFile(msg)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 4096 {
			t.Errorf("JAVA_HOME=%q: %d bytes, more than a termination message keeps", home, len(b))
		}
		if rt, err := javaruntime.Parse(string(b)); err != nil || rt.Major < 8 {
			t.Errorf("JAVA_HOME=%q: %+v, %v", home, rt, err)
		}
	}
}
