package faults

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func pod(name string, labels map[string]string) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func TestPodFor(t *testing.T) {
	broker := map[string]string{labelStrimziBroker: "true", labelStrimziController: "true"}
	kafka := []corev1.Pod{pod("r-broker-454349-0", broker), pod("r-broker-454349-1", broker), pod("r-broker-454349-2", broker), pod("r-entity-operator-1", nil)}
	comp := func(c string) map[string]string { return map[string]string{labelPulsarComponent: c, "release": "r"} }
	pulsar := []corev1.Pod{pod("r-bookie-0", comp("bookie")), pod("r-bookie-1", comp("bookie")), pod("r-broker-0", comp("broker")),
		pod("r-zookeeper-0", comp("zookeeper")), pod("r-recovery-0", comp("recovery"))}
	plain := []corev1.Pod{pod("other-bookie-1", nil), pod("other-broker-1", nil)}
	gone := pod("r-broker-454349-1", broker)
	gone.DeletionTimestamp = &metav1.Time{}
	two := []corev1.Pod{pod("a-bookie-1", nil), pod("b-bookie-1", nil)}

	for _, tc := range []struct {
		target  v1alpha1.FaultTarget
		pods    []corev1.Pod
		want    string
		wantErr string
	}{
		{"broker-1", kafka, "r-broker-454349-1", ""},
		{"controller-2", kafka, "r-broker-454349-2", ""}, // combined pool
		{"broker-3", kafka, "", "none of r-broker-454349-0, r-broker-454349-1, r-broker-454349-2, r-entity-operator-1 is a broker whose name ends in -3"},
		{"bookie-1", pulsar, "r-bookie-1", ""},
		{"broker-0", pulsar, "r-broker-0", ""},
		{"zookeeper-0", pulsar, "r-zookeeper-0", ""},
		{"bookie-2", pulsar, "", "is a bookie whose name ends in -2"},
		{"bookie-1", plain, "other-bookie-1", ""}, // no role labels: the name says it
		{"broker-1", []corev1.Pod{gone}, "", "is being deleted"},
		{"bookie-1", two, "", "ambiguous: pods a-bookie-1, b-bookie-1"},
		{"broker-0", nil, "", "no pods to choose from"},
		{"leader", kafka, "", "resolved to a broker when the fault comes"},
	} {
		got, err := PodFor(tc.target, tc.pods)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err = %v, want %q", tc.target, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.target, err)
		case got.Name != tc.want:
			t.Errorf("%s: pod %s, want %s", tc.target, got.Name, tc.want)
		}
	}
}

func TestContainerIDs(t *testing.T) {
	p := corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
		{Name: "kafka", ContainerID: "containerd://bbb", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
		{Name: "sidecar", ContainerID: "containerd://aaa", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
		{Name: "crashed", ContainerID: "containerd://ccc", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}},
	}}}
	if got := strings.Join(ContainerIDs(&p), ","); got != "aaa,bbb" {
		t.Errorf("ids %s, want aaa,bbb (running ones, without the runtime's prefix)", got)
	}
}
