package pulsar

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// rendered is shaped like Helm's rendered manifest: "---" and a
// "# Source:" comment before every document, the broker StatefulSet with
// the chart's anti-affinity term.
const rendered = `---
# Source: pulsar/templates/broker-configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: run-a-pulsar-broker
data:
  managedLedgerDefaultAckQuorum: "2"
---
# Source: pulsar/templates/zookeeper-statefulset.yaml
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: run-a-pulsar-zookeeper
spec:
  template:
    spec:
      containers: [{name: zk, image: zk}]
---
# Source: pulsar/templates/broker-statefulset.yaml
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: run-a-pulsar-broker
spec:
  replicas: 3
  template:
    spec:
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            podAffinityTerm:
              labelSelector:
                matchExpressions:
                - {key: component, operator: In, values: [broker]}
              topologyKey: kubernetes.io/hostname
      containers: [{name: broker, image: broker}]
`

func placementAffinity() *corev1.Affinity {
	return &corev1.Affinity{
		NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: "node.kubernetes.io/instance-type", Operator: corev1.NodeSelectorOpIn, Values: []string{"i3en.2xlarge"},
			}}}},
		}},
		PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"component": "broker"}},
			TopologyKey:   "kubernetes.io/hostname",
		}}},
	}
}

func TestAffinityPostRenderer(t *testing.T) {
	if r := AffinityPostRenderer(rel, nil); r != nil {
		t.Fatalf("AffinityPostRenderer(nil affinity) = %+v, want nil", r)
	}
	r := AffinityPostRenderer(rel, placementAffinity())
	out, err := r.Run(bytes.NewBufferString(rendered))
	if err != nil {
		t.Fatal(err)
	}
	docs := docSeparator.Split(out.String(), -1)[1:]
	in := docSeparator.Split(rendered, -1)[1:]
	if len(docs) != 3 {
		t.Fatalf("got %d documents, want 3:\n%s", len(docs), out)
	}
	// Documents that are not targets pass through unchanged, in order.
	for i := 0; i < 2; i++ {
		if docs[i] != in[i] {
			t.Errorf("document %d changed:\n%s\nwant:\n%s", i, docs[i], in[i])
		}
	}
	if !strings.Contains(docs[2], "# Source: pulsar/templates/broker-statefulset.yaml") {
		t.Errorf("the broker document lost its Source comment:\n%s", docs[2])
	}
	var got appsv1.StatefulSet
	if err := yaml.UnmarshalStrict([]byte(docs[2]), &got); err != nil {
		t.Fatalf("patched StatefulSet does not parse: %v\n%s", err, docs[2])
	}
	want := placementAffinity()
	want.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = []corev1.WeightedPodAffinityTerm{{
		Weight: 100,
		PodAffinityTerm: corev1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: "component", Operator: metav1.LabelSelectorOpIn, Values: []string{"broker"},
			}}},
			TopologyKey: "kubernetes.io/hostname",
		},
	}}
	if diff := cmp.Diff(want, got.Spec.Template.Spec.Affinity); diff != "" {
		t.Errorf("broker affinity (-want +got):\n%s", diff)
	}
	if got.Spec.Replicas == nil || *got.Spec.Replicas != 3 || got.Spec.Template.Spec.Containers[0].Name != "broker" {
		t.Errorf("the rest of the StatefulSet changed: %+v", got.Spec)
	}
}

func TestMergeAffinityKeepsInputs(t *testing.T) {
	chart := &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "kubernetes.io/hostname"}},
	}}
	p := placementAffinity()
	merged := MergeAffinity(chart, p)
	if n := len(merged.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution); n != 2 {
		t.Errorf("merged has %d required anti-affinity terms, want 2 (chart's and placement's)", n)
	}
	if merged.NodeAffinity == nil {
		t.Error("merged lost the placement's node affinity")
	}
	if n := len(chart.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution); n != 1 {
		t.Errorf("MergeAffinity changed the chart's affinity: %d terms", n)
	}
	if n := len(p.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution); n != 1 {
		t.Errorf("MergeAffinity changed the placement: %d terms", n)
	}
}

func TestBrokerRBACRenderer(t *testing.T) {
	in := `---
# Source: pulsar/templates/broker-cluster-role-binding.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: "run-a-pulsar-broker-rolebinding"
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: "run-a-pulsar-broker-role"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: run-a-pulsar-broker
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: run-b-pulsar-broker-role
`
	out, err := NewBrokerRBACRenderer("run-a-pulsar").Run(bytes.NewBufferString(in))
	if err != nil {
		t.Fatal(err)
	}
	docs := docSeparator.Split(out.String(), -1)[1:]
	if len(docs) != 2 || !strings.Contains(docs[0], "kind: ConfigMap") || !strings.Contains(docs[1], "run-b-pulsar-broker-role") {
		t.Fatalf("want the ConfigMap and another release's Role left, got:\n%s", out)
	}
	// The release's whole post-render drops its own RBAC and refuses any
	// other Role (ScopeRenderer): the chart renders none for streambench.
	_, err = releaseRenderer(Release{Name: "run-a-pulsar", Namespace: "bench"}).Run(bytes.NewBufferString(in))
	if err == nil || !strings.Contains(err.Error(), "Role run-b-pulsar-broker-role") || strings.Contains(err.Error(), "run-a-pulsar-broker-role") {
		t.Fatalf("releaseRenderer: %v; want another release's Role refused, and its own dropped before the check", err)
	}
}
