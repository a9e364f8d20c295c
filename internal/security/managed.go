package security

import (
	"fmt"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
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

// managedFor gives a managed run's Managed, per system; the systems'
// files register themselves. A system absent here cannot secure its
// managed brokers yet, and a run that asks is refused.
var managedFor = map[v1alpha1.System]func(*v1alpha1.BenchmarkRun) (Managed, error){}

func managed(run *v1alpha1.BenchmarkRun) (*Managed, error) {
	m := run.Spec.Cluster.Managed
	if m == nil || m.Security == nil || (!m.Security.TLS && m.Security.Authentication == "") {
		return nil, nil
	}
	f, ok := managedFor[run.Spec.System]
	if !ok {
		return nil, fmt.Errorf("spec.cluster.managed.security: managed %s brokers cannot be secured by this operator; remove it, or run against an existing cluster with spec.cluster.existing.tls and authentication", run.Spec.System)
	}
	ms, err := f(run)
	if err != nil {
		return nil, err
	}
	return &ms, nil
}

// RunRefs are the Secret keys a run's clients read, existing or managed.
func RunRefs(run *v1alpha1.BenchmarkRun) ([]Ref, error) {
	if run.Spec.Cluster.Managed == nil {
		return Refs(&run.Spec), nil
	}
	ms, err := managed(run)
	if ms == nil || err != nil {
		return nil, err
	}
	const f = "spec.cluster.managed.security"
	var refs []Ref
	for _, r := range []*v1alpha1.SecretKeyRef{ms.CA, ms.ClientCert, ms.ClientKey, ms.Password, ms.Token} {
		if r != nil {
			refs = append(refs, Ref{SecretKeyRef: *r, Field: f})
		}
	}
	return refs, nil
}

// RunResolve is the driver's security for a run, existing or managed; nil
// for plaintext, anonymous brokers.
func RunResolve(run *v1alpha1.BenchmarkRun, path PathFunc) (*driver.Security, error) {
	if run.Spec.Cluster.Managed == nil {
		return Resolve(&run.Spec, path)
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
