package coordinator

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/driver/kafka"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/testcerts"
	"github.com/streambench/streambench-operator/internal/worker"
)

// TestKafkaSecured runs a short workload through the coordinator and two
// workers over each good security configuration of one 1-broker cluster
// (a SASL_SSL listener with PLAIN and SCRAM, an SSL listener that wants a
// client certificate): nothing lost, and every worker's driver says what
// it negotiated.
func TestKafkaSecured(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ca, err := testcerts.NewCA(dir, "sb-test")
	if err != nil {
		t.Fatal(err)
	}
	brokerCert, err := ca.Issue("broker", testcerts.Options{Names: []string{"127.0.0.1", "localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	clientCert, err := ca.Issue("client", testcerts.Options{Client: true})
	if err != nil {
		t.Fatal(err)
	}
	const user, password = "bench", "bench-secret-4F7"
	passwordFile := filepath.Join(dir, "password")
	if err := os.WriteFile(passwordFile, []byte(password), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := localbrokers.StartKafka(ctx, localbrokers.KafkaOptions{Brokers: 1, Log: t.Logf, Listeners: []localbrokers.KafkaListener{
		{
			Name: "SASL", Protocol: localbrokers.ListenerSASLSSL, CertFile: brokerCert.CertFile, KeyFile: brokerCert.KeyFile,
			Mechanisms: []string{localbrokers.MechanismPlain, localbrokers.MechanismSCRAMSHA256, localbrokers.MechanismSCRAMSHA512},
			Users:      []localbrokers.KafkaUser{{Name: user, Password: password}},
		},
		{
			Name: "MTLS", Protocol: localbrokers.ListenerSSL, CertFile: brokerCert.CertFile, KeyFile: brokerCert.KeyFile,
			ClientCAFile: ca.CertFile, RequireClientCert: true,
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := k.Stop(); err != nil {
			t.Errorf("stopping Kafka: %v", err)
		}
	})
	saslAddr, err := k.ListenerBootstrap("SASL")
	if err != nil {
		t.Fatal(err)
	}
	mtlsAddr, err := k.ListenerBootstrap("MTLS")
	if err != nil {
		t.Fatal(err)
	}

	// The workers' drivers, as worker.DefaultDrivers makes them, each
	// recording what it negotiated.
	var mu sync.Mutex
	var infos []v1alpha1.SecurityInfo
	urls := startWorkers(t, 2, map[v1alpha1.System]worker.DriverFactory{
		v1alpha1.SystemKafka: func(ctx context.Context, cfg driver.Config) (driver.Driver, error) {
			d, err := kafka.New(ctx, cfg)
			if err == nil {
				mu.Lock()
				infos = append(infos, d.SecurityInfo())
				mu.Unlock()
			}
			return d, err
		},
	})
	eff, err := durability.Translate(v1alpha1.SystemKafka, v1alpha1.DurabilitySpec{
		Replication: &v1alpha1.ReplicationDurability{Mode: v1alpha1.ReplicationSync, Replicas: 1, AckReplicas: 1},
		Local:       &v1alpha1.LocalDurability{Mode: v1alpha1.LocalAsync},
	})
	if err != nil {
		t.Fatal(err)
	}
	trust := func() *driver.TLSFiles { return &driver.TLSFiles{CAFile: ca.CertFile} }
	scram := func(m v1alpha1.AuthMechanism) *driver.Security {
		return &driver.Security{TLS: trust(), Mechanism: string(m), Username: user, PasswordFile: passwordFile}
	}
	tests := []struct {
		name, bootstrap string
		sec             *driver.Security
		want            v1alpha1.SecurityInfo
	}{
		{"SASL_SSL SCRAM-SHA-512", saslAddr, scram(v1alpha1.AuthScramSHA512),
			v1alpha1.SecurityInfo{Protocol: "SASL_SSL", Mechanism: "SCRAM-SHA-512", TLSVersion: "TLS 1.3", Verification: "full"}},
		{"SASL_SSL PLAIN", saslAddr, scram(v1alpha1.AuthPlain),
			v1alpha1.SecurityInfo{Protocol: "SASL_SSL", Mechanism: "PLAIN", TLSVersion: "TLS 1.3", Verification: "full"}},
		{"SASL_SSL SCRAM-SHA-256", saslAddr, scram(v1alpha1.AuthScramSHA256),
			v1alpha1.SecurityInfo{Protocol: "SASL_SSL", Mechanism: "SCRAM-SHA-256", TLSVersion: "TLS 1.3", Verification: "full"}},
		{"SSL mutual TLS", mtlsAddr, &driver.Security{TLS: &driver.TLSFiles{CAFile: ca.CertFile, CertFile: clientCert.CertFile, KeyFile: clientCert.KeyFile}},
			v1alpha1.SecurityInfo{Protocol: "SSL", Mechanism: "TLS", TLSVersion: "TLS 1.3", ClientCertificate: true, Verification: "full"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			infos = nil
			mu.Unlock()
			cfg := driver.Config{System: v1alpha1.SystemKafka, Brokers: v1alpha1.BrokerEndpoints{BootstrapServers: tt.bootstrap}, Durability: eff, RunID: "ksec", Security: tt.sec}
			// ReadDurability: the coordinator's own read of the brokers'
			// settings (an existing cluster's) goes through the same
			// security.
			res := runCase(t, urls, cfg, shortWorkload("secured", 1000, 4), Options{ReadDurability: true})
			if res.Security == nil || *res.Security != tt.want {
				t.Errorf("the run's security (from the workers' initialize answers) = %+v, want %+v", res.Security, tt.want)
			}
			for _, n := range res.Notes {
				if strings.Contains(n, "could not be read") {
					t.Errorf("the brokers' durability was not read through %s: %s", tt.name, n)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(infos) != 2 {
				t.Fatalf("%d drivers made; want one per worker (2)", len(infos))
			}
			for i, got := range infos {
				if got != tt.want {
					t.Errorf("worker %d's driver: SecurityInfo() = %+v, want %+v", i, got, tt.want)
				}
			}
		})
	}
}
