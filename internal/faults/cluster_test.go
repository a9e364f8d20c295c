package faults

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func TestClusterChecks(t *testing.T) {
	spec := &v1alpha1.BenchmarkRunSpec{System: v1alpha1.SystemPulsar, Faults: []v1alpha1.Fault{
		{Action: v1alpha1.FaultDeletePod, Target: "bookie-1", At: metav1.Duration{}},
		{Action: v1alpha1.FaultKill, Target: "leader", At: metav1.Duration{}},
	}}
	errs := ClusterChecks(spec, field.NewPath("spec"))
	if len(errs) != 1 || errs[0].Field != "spec.faults[1].target" || !strings.Contains(errs[0].Error(), "name the broker") {
		t.Errorf("Pulsar: errs %v, want one on spec.faults[1].target naming the fix", errs)
	}
	spec.System = v1alpha1.SystemKafka
	spec.Faults[0].Target = "broker-1"
	if errs := ClusterChecks(spec, field.NewPath("spec")); len(errs) != 0 {
		t.Errorf("Kafka's leader is looked up: %v", errs)
	}
}
