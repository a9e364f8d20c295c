package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/testcerts"
)

// The secured listeners of --secure, and what a run names to use them.
const (
	secureUser       = "bench"
	secureSecretName = "local-kafka"
	listenerSSL      = "SSL"
	listenerSASL     = "SASL"
)

// secureKafka is a CA, the brokers' certificate and a SCRAM user made for
// one local cluster under <dir>/tls: test credentials for local runs (the
// password is random and stays in the cluster's directory).
type secureKafka struct {
	dir      string
	ca       *testcerts.CA
	broker   testcerts.Pair
	password string
}

func newSecureKafka(dir string) (*secureKafka, error) {
	tlsDir := filepath.Join(dir, "tls")
	if err := os.MkdirAll(tlsDir, 0o700); err != nil {
		return nil, err
	}
	ca, err := testcerts.NewCA(tlsDir, "local-kafka")
	if err != nil {
		return nil, err
	}
	broker, err := ca.Issue("broker", testcerts.Options{Names: []string{"127.0.0.1", "localhost"}})
	if err != nil {
		return nil, err
	}
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return &secureKafka{dir: dir, ca: ca, broker: broker, password: hex.EncodeToString(b)}, nil
}

// listeners are an SSL listener (encryption only) and a SASL_SSL one with
// SCRAM-SHA-512, the two steps of "what does security cost".
func (s *secureKafka) listeners() []localbrokers.KafkaListener {
	return []localbrokers.KafkaListener{
		{Name: listenerSSL, Protocol: localbrokers.ListenerSSL, CertFile: s.broker.CertFile, KeyFile: s.broker.KeyFile},
		{Name: listenerSASL, Protocol: localbrokers.ListenerSASLSSL, CertFile: s.broker.CertFile, KeyFile: s.broker.KeyFile,
			Mechanisms: []string{localbrokers.MechanismSCRAMSHA512},
			Users:      []localbrokers.KafkaUser{{Name: secureUser, Password: s.password}}},
	}
}

// endpoints adds the secured listeners' addresses and writes
// <dir>/secrets.yaml, the Secret (CA and password) a run names as
// spec.cluster.existing.tls.ca and authentication.password.
func (s *secureKafka) endpoints(k *localbrokers.Kafka, eps map[string]string) error {
	for name, l := range map[string]string{"bootstrap-ssl": listenerSSL, "bootstrap-sasl-ssl": listenerSASL} {
		addr, err := k.ListenerBootstrap(l)
		if err != nil {
			return err
		}
		eps[name] = addr
	}
	ca, err := os.ReadFile(s.ca.CertFile)
	if err != nil {
		return err
	}
	secret := corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: secureSecretName},
		StringData: map[string]string{"ca.crt": string(ca), "password": s.password},
	}
	y, err := yaml.Marshal(secret)
	if err != nil {
		return err
	}
	path := filepath.Join(s.dir, "secrets.yaml")
	if err := os.WriteFile(path, y, 0o600); err != nil {
		return err
	}
	eps["secrets"] = path
	eps["scram-user"] = secureUser
	fmt.Fprintf(os.Stderr, "secured listeners: SSL and SASL_SSL (SCRAM-SHA-512, user %s); the Secret %s (keys ca.crt, password) is in %s\n", secureUser, secureSecretName, path)
	return nil
}
