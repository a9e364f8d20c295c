package clientsecurity

import (
	"fmt"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
)

// managedPulsar: a managed Pulsar run's clients read two Secrets the
// operator makes before the chart's install (pulsar.Secrets): the CA that
// signed the brokers' certificate, and the token of the benchmark's own
// role. The signing key and the brokers' tokens stay with the brokers.
func managedPulsar(run *v1alpha1.BenchmarkRun) (Managed, error) {
	s := run.Spec.Cluster.Managed.Security
	rel := pulsar.ReleaseName(run)
	var m Managed
	if s.TLS {
		// No ServerName: each address is checked against the brokers'
		// certificate, which names the Service and every broker pod.
		m.CA = &v1alpha1.SecretKeyRef{Name: pulsar.CASecretName(rel), Key: pulsar.KeyCA}
	}
	switch s.Authentication {
	case "":
	case v1alpha1.ManagedAuthToken:
		m.Mechanism = string(v1alpha1.AuthToken)
		m.Token = &v1alpha1.SecretKeyRef{Name: pulsar.TokenSecretName(rel, pulsar.SubjectBenchmark), Key: pulsar.KeyToken}
	default:
		return Managed{}, fmt.Errorf("spec.cluster.managed.security.authentication %q is a Kafka user's (Strimzi KafkaUser); a managed Pulsar takes token, or none", s.Authentication)
	}
	return m, nil
}
