package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/security"
)

// The operator answers page-cache drop requests only in the run's results
// ConfigMap; without one the coordinator refuses before any load, rather
// than waiting for an answer that cannot come.
func TestDropPageCacheNeedsTheResultsConfigMap(t *testing.T) {
	_, err := configMapDropper(coordinatorFlags{dropPageCache: true})
	if err == nil || !strings.Contains(err.Error(), "--drop-page-cache needs --results-configmap") {
		t.Errorf("configMapDropper without --results-configmap: %v", err)
	}
}

// What the operator puts in --security-json is what the coordinator hands
// the drivers (paths of the mounted Secret keys); a field it does not know
// is refused, not dropped.
func TestSecurityFlag(t *testing.T) {
	run := &v1alpha1.BenchmarkRun{Spec: v1alpha1.BenchmarkRunSpec{
		System: v1alpha1.SystemKafka,
		Cluster: v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{
			BootstrapServers: "kafka.example:9093",
			TLS:              &v1alpha1.ClientTLS{CA: &v1alpha1.SecretKeyRef{Name: "kafka-ca", Key: "ca.crt"}},
			Authentication: &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthScramSHA512, Username: "alice",
				Password: &v1alpha1.SecretKeyRef{Name: "alice", Key: "password"}},
		}},
		Workload: v1alpha1.WorkloadSpec{MessageSize: 1024, ProducerRate: 1000},
	}}
	job, err := workers.CoordinatorJob(run, "img", v1alpha1.BrokerEndpoints{BootstrapServers: "kafka.example:9093"})
	if err != nil {
		t.Fatal(err)
	}
	var flag string
	for _, a := range job.Spec.Template.Spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(a, "--security-json="); ok {
			flag = v
		}
	}
	got, err := securityFlag(flag)
	if err != nil {
		t.Fatal(err)
	}
	want, err := security.Resolve(&run.Spec, workers.SecretPath)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("securityFlag(%s) = %+v, want %+v", flag, got, want)
	}
	if got.PasswordFile != "/etc/streambench/secrets/alice/password" || got.TLS.CAFile != "/etc/streambench/secrets/kafka-ca/ca.crt" {
		t.Errorf("paths: %+v %+v", got, got.TLS)
	}

	if sec, err := securityFlag(""); sec != nil || err != nil {
		t.Errorf(`securityFlag("") = %v, %v; want nil, nil`, sec, err)
	}
	_, err = securityFlag(`{"mechanism":"PLAIN","passwd":"x"}`)
	if err == nil || !strings.Contains(err.Error(), `--security-json: json: unknown field "passwd"`) {
		t.Errorf("an unknown field: %v", err)
	}
}
