package clientsecurity

import (
	"fmt"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// ExistingFor is how a client reaches the secured brokers of host, a
// managed run, as an existing cluster: spec.cluster.existing.tls and
// authentication naming the very Secrets and keys host's own clients
// read (managed). A BenchmarkSuite deploys a cluster from a host run and
// runs each cell in existing mode against it, so a cell mounts the same
// keys and its driver reads the same files as a run that deployed those
// brokers itself (RunRefs and RunResolve agree). Nil, nil for plaintext,
// anonymous brokers.
func ExistingFor(host *v1alpha1.BenchmarkRun) (*v1alpha1.ClientTLS, *v1alpha1.ClientAuthentication, error) {
	ms, err := managed(host)
	if ms == nil || err != nil {
		return nil, nil, err
	}
	var tls *v1alpha1.ClientTLS
	if ms.CA != nil {
		ca := *ms.CA
		tls = &v1alpha1.ClientTLS{CA: &ca, ServerName: ms.ServerName}
	}
	if ms.ClientCert != nil || ms.ClientKey != nil {
		// An existing cluster's client certificate is one Secret with both
		// keys, as Strimzi writes a KafkaUser's.
		switch {
		case tls == nil:
			return nil, nil, fmt.Errorf("spec.cluster.managed.security of %s: a client certificate without TLS; set tls: true", host.Name)
		case ms.ClientCert == nil || ms.ClientKey == nil || ms.ClientCert.Name != ms.ClientKey.Name:
			return nil, nil, fmt.Errorf("spec.cluster.managed.security of %s: the client certificate and its key must be keys of one Secret", host.Name)
		}
		tls.ClientCertificate = &v1alpha1.ClientCertificate{
			SecretName: ms.ClientCert.Name, CertificateKey: ms.ClientCert.Key, PrivateKeyKey: ms.ClientKey.Key,
		}
	}
	var auth *v1alpha1.ClientAuthentication
	switch {
	case ms.Password != nil:
		p := *ms.Password
		auth = &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthMechanism(ms.Mechanism), Username: ms.Username, Password: &p}
	case ms.Token != nil:
		tok := *ms.Token
		auth = &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthMechanism(ms.Mechanism), Token: &tok}
	case ms.Mechanism != "":
		return nil, nil, fmt.Errorf("spec.cluster.managed.security of %s: mechanism %s without credentials", host.Name, ms.Mechanism)
	}
	return tls, auth, nil
}
