package clientsecurity

import (
	"fmt"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
	"github.com/streambench/streambench-operator/internal/security"
)

// managedKafka is what the clients of a managed Kafka read, all written by
// Strimzi in the run's namespace: the cluster CA's certificate (Strimzi
// signs the brokers' certificates with it; its Secret exists once the
// Kafka is Ready), and the run's KafkaUser's Secret, which the User
// Operator writes before it marks the KafkaUser Ready: the SCRAM password
// (the user name is the KafkaUser's), or the client certificate and key
// issued by the clients CA (the brokers trust that CA on the tls listener).
// The brokers' certificates name the bootstrap Service and every broker's
// address, so each address's own host is verified (no ServerName).
func managedKafka(run *v1alpha1.BenchmarkRun) (Managed, error) {
	s := run.Spec.Cluster.Managed.Security
	var m Managed
	if s.TLS {
		m.CA = &v1alpha1.SecretKeyRef{Name: security.StrimziCASecret(strimzi.ClusterName(run)), Key: security.StrimziCAKey}
	}
	user := strimzi.UserName(run)
	switch s.Authentication {
	case "":
	case v1alpha1.ManagedAuthScramSHA512:
		m.Mechanism = string(v1alpha1.AuthScramSHA512)
		m.Username = user
		m.Password = &v1alpha1.SecretKeyRef{Name: user, Key: security.StrimziPasswordKey}
	case v1alpha1.ManagedAuthTLS:
		if !s.TLS {
			return Managed{}, fmt.Errorf("spec.cluster.managed.security.authentication tls is mutual TLS: set spec.cluster.managed.security.tls: true")
		}
		m.ClientCert = &v1alpha1.SecretKeyRef{Name: user, Key: security.StrimziUserCertKey}
		m.ClientKey = &v1alpha1.SecretKeyRef{Name: user, Key: security.StrimziUserKeyKey}
	default:
		return Managed{}, fmt.Errorf("spec.cluster.managed.security.authentication %q is not for Kafka: use scram-sha-512 (SCRAM over the listener) or tls (client certificates, with tls: true)", s.Authentication)
	}
	return m, nil
}
