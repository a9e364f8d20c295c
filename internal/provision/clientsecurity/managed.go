// Package clientsecurity says what a run's clients read to reach its
// brokers, existing or managed: the Secret keys to mount (RunRefs) and the
// driver's settings (RunResolve). An existing cluster's are
// internal/security's pure translation of spec.cluster.existing; a managed
// cluster's are the Secrets its provisioning makes, or Strimzi makes for
// it, named here beside the builders that name them (internal/provision/
// strimzi and pulsar), so that internal/security needs no provisioning.
package clientsecurity

import (
	"fmt"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/security"
)

// Managed is what the clients of a managed run's secured brokers read:
// Secrets the run makes, or Strimzi makes for it (its cluster CA, a
// KafkaUser's Secret). Each system's provisioning says which
// (managed_kafka.go, managed_pulsar.go), so the names live beside the
// objects that create them.
type Managed struct {
	// CA is the PEM certificate of the CA that signs the brokers'
	// certificates; nil without TLS.
	CA *v1alpha1.SecretKeyRef
	// ServerName, when set, is checked instead of each address's host.
	ServerName string
	// Mechanism is the SASL mechanism or Pulsar's authentication; empty
	// for none or a client certificate alone.
	Mechanism string
	Username  string
	// Password (SCRAM), Token (Pulsar), ClientCert and ClientKey (mutual
	// TLS) are the credentials' keys.
	Password, Token, ClientCert, ClientKey *v1alpha1.SecretKeyRef
}

func managed(run *v1alpha1.BenchmarkRun) (*Managed, error) {
	m := run.Spec.Cluster.Managed
	if m == nil || m.Security == nil || (!m.Security.TLS && m.Security.Authentication == "") {
		return nil, nil
	}
	var ms Managed
	var err error
	switch run.Spec.System {
	case v1alpha1.SystemKafka:
		ms, err = managedKafka(run)
	case v1alpha1.SystemPulsar:
		ms, err = managedPulsar(run)
	default:
		return nil, fmt.Errorf("spec.cluster.managed.security: managed %s brokers cannot be secured by this operator; remove it, or run against an existing cluster with spec.cluster.existing.tls and authentication", run.Spec.System)
	}
	if err != nil {
		return nil, err
	}
	return &ms, nil
}

// RunRefs are the Secret keys a run's clients read, existing or managed.
func RunRefs(run *v1alpha1.BenchmarkRun) ([]security.Ref, error) {
	if run.Spec.Cluster.Managed == nil {
		return security.Refs(&run.Spec), nil
	}
	ms, err := managed(run)
	if ms == nil || err != nil {
		return nil, err
	}
	const f = "spec.cluster.managed.security"
	var refs []security.Ref
	for _, r := range []*v1alpha1.SecretKeyRef{ms.CA, ms.ClientCert, ms.ClientKey, ms.Password, ms.Token} {
		if r != nil {
			refs = append(refs, security.Ref{SecretKeyRef: *r, Field: f})
		}
	}
	return refs, nil
}

// RunResolve is the driver's security for a run, existing or managed; nil
// for plaintext, anonymous brokers.
func RunResolve(run *v1alpha1.BenchmarkRun, path security.PathFunc) (*driver.Security, error) {
	if run.Spec.Cluster.Managed == nil {
		return security.Resolve(&run.Spec, path)
	}
	ms, err := managed(run)
	if ms == nil || err != nil {
		return nil, err
	}
	s := &driver.Security{Mechanism: ms.Mechanism, Username: ms.Username}
	if ms.CA != nil {
		s.TLS = &driver.TLSFiles{CAFile: path(*ms.CA), ServerName: ms.ServerName}
		if ms.ClientCert != nil && ms.ClientKey != nil {
			s.TLS.CertFile, s.TLS.KeyFile = path(*ms.ClientCert), path(*ms.ClientKey)
		}
	}
	if ms.Password != nil {
		s.PasswordFile = path(*ms.Password)
	}
	if ms.Token != nil {
		s.TokenFile = path(*ms.Token)
	}
	return s, nil
}
