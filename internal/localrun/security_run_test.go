package localrun

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/testcerts"
	"github.com/streambench/streambench-operator/internal/testoauth"
)

// TestRunSecuredKafka runs `streambench run --local` against an existing
// Kafka whose only client listener is SASL_SSL (PLAIN and SCRAM-SHA-512,
// certificates of a test CA): once with spec.cluster.existing.tls and
// authentication and the Secrets from --secrets, once with an OMB driver
// file that says the same in the Java client's keys (a JKS trust store the
// JDK's keytool makes, an inline JAAS), and once with a wrong password,
// which must fail in seconds naming the cause. Nothing is lost, the
// results and the report state the security, the Secrets' private
// directory is gone after the run, and no secret is in any output.
func TestRunSecuredKafka(t *testing.T) {
	keytool, err := exec.LookPath("keytool")
	if err != nil {
		// The brokers need the JDK too: without it this test cannot run
		// at all, and localbrokers says so.
		t.Fatalf("keytool (the JDK) is needed for the brokers and the JKS trust store: %v", err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	ca, err := testcerts.NewCA(dir, "sb-localrun")
	if err != nil {
		t.Fatal(err)
	}
	brokerCert, err := ca.Issue("broker", testcerts.Options{Names: []string{"127.0.0.1", "localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	const user, password = "bench", "bench-Secret-9Z4"
	k, err := localbrokers.StartKafka(ctx, localbrokers.KafkaOptions{Brokers: 1, Log: t.Logf, Listeners: []localbrokers.KafkaListener{{
		Name: "SASL", Protocol: localbrokers.ListenerSASLSSL, CertFile: brokerCert.CertFile, KeyFile: brokerCert.KeyFile,
		Mechanisms: []string{localbrokers.MechanismPlain, localbrokers.MechanismSCRAMSHA512},
		Users:      []localbrokers.KafkaUser{{Name: user, Password: password}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := k.Stop(); err != nil {
			t.Errorf("stopping Kafka: %v", err)
		}
	})
	addr, err := k.ListenerBootstrap("SASL")
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(ca.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	runFile := func(name, security string) string {
		p := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(p, []byte(fmt.Sprintf(`apiVersion: streambench.io/v1alpha1
kind: BenchmarkRun
metadata: {name: %s}
spec:
  system: kafka
  durability:
    replication: {replicas: 1, ackReplicas: 1, mode: Sync}
    local: {mode: Async}
  cluster:
    existing:
      bootstrapServers: %q
%s  workers: {count: 2}
`, name, addr, security)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	secrets := func(pw string) string {
		return writeTemp(t, "secrets.yaml", "apiVersion: v1\nkind: Secret\nmetadata: {name: kafka-ca}\ntype: Opaque\ndata:\n  ca.crt: "+
			base64.StdEncoding.EncodeToString(caPEM)+"\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: bench}\nstringData:\n  password: "+pw+"\n")
	}
	const specSecurity = `      tls: {ca: {name: kafka-ca, key: ca.crt}}
      authentication: {mechanism: SCRAM-SHA-512, username: bench, password: {name: bench, key: password}}
`
	privateDir := regexp.MustCompile(`secret material in (\S+), removed at the end`)
	// noSecret reads everything the run left and printed.
	noSecret := func(t *testing.T, lr localRun) {
		t.Helper()
		outputs := lr.stdout.String() + lr.stderr.String()
		if lr.out != nil {
			_ = filepath.Walk(lr.out.Dir, func(p string, fi os.FileInfo, err error) error {
				if err == nil && !fi.IsDir() {
					b, _ := os.ReadFile(p)
					outputs += string(b)
				}
				return nil
			})
		}
		if strings.Contains(outputs, password) {
			t.Error("the password is in the run's output or results")
		}
	}
	check := func(t *testing.T, lr localRun, mechanism string) {
		t.Helper()
		if lr.err != nil {
			t.Fatalf("run: %v", lr.err)
		}
		sum := lr.out.Summary
		if sum == nil || sum.Results.Lost != 0 || sum.Results.Received == 0 || sum.Results.Received != sum.Results.Acked {
			t.Fatalf("summary %+v", sum)
		}
		s := sum.Security
		if s == nil || s.Protocol != "SASL_SSL" || s.Mechanism != mechanism || !strings.HasPrefix(s.TLSVersion, "TLS 1.") || s.Verification != "full" {
			t.Errorf("the results' security %+v, want SASL_SSL, %s, a TLS version, full verification", s, mechanism)
		}
		if page, err := os.ReadFile(lr.out.Report); err != nil || !strings.Contains(string(page), "SASL_SSL · "+mechanism+" · TLS 1.") {
			t.Errorf("the report does not state the security (%v)", err)
		}
		m := privateDir.FindStringSubmatch(lr.stderr.String())
		if m == nil {
			t.Fatal("the run did not say where its secret material was")
		}
		if _, err := os.Stat(m[1]); !os.IsNotExist(err) {
			t.Errorf("the private directory %s outlived the run (%v)", m[1], err)
		}
		noSecret(t, lr)
	}

	t.Run("spec.cluster.existing with --secrets", func(t *testing.T) {
		lr := startRun(t, Options{RunFile: runFile("secrets", specSecurity), WorkloadFile: "testdata/short-latency.yaml", SecretsFile: secrets(password)}).wait()
		check(t, lr, "SCRAM-SHA-512")
		if !strings.Contains(lr.stderr.String(), "clients: SASL_SSL, SCRAM-SHA-512 as bench (secret material in") {
			t.Error("the run did not say how its clients reach the brokers")
		}
	})

	t.Run("OMB driver file with a JKS trust store", func(t *testing.T) {
		jks := filepath.Join(dir, "truststore.jks")
		if out, err := exec.Command(keytool, "-importcert", "-noprompt", "-alias", "ca", "-file", ca.CertFile,
			"-keystore", jks, "-storetype", "JKS", "-storepass", "changeit").CombinedOutput(); err != nil {
			t.Fatalf("keytool: %v\n%s", err, out)
		}
		driverFile := writeTemp(t, "kafka-sasl.yaml", `name: Kafka
driverClass: io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver
replicationFactor: 1
commonConfig: |
  bootstrap.servers=broker:9093
  security.protocol=SASL_SSL
  sasl.mechanism=PLAIN
  sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \
    username="bench" \
    password="`+password+`";
  ssl.truststore.location=`+jks+`
  ssl.truststore.password=changeit
producerConfig: |
  linger.ms=1
`)
		lr := startRun(t, Options{RunFile: runFile("omb", ""), WorkloadFile: "testdata/short-latency.yaml", DriverFile: driverFile}).wait()
		check(t, lr, "PLAIN")
	})

	t.Run("a wrong password fails fast", func(t *testing.T) {
		start := time.Now()
		lr := startRun(t, Options{RunFile: runFile("wrong", specSecurity), WorkloadFile: "testdata/short-latency.yaml", SecretsFile: secrets("not-the-password")}).wait()
		took := time.Since(start)
		if lr.err == nil || !strings.Contains(lr.err.Error(), "login of user bench refused") {
			t.Fatalf("a wrong password: error %v, want one naming the user", lr.err)
		}
		// The private file is gone with the run: the error names the
		// Secret it came from.
		if !strings.Contains(lr.err.Error(), "Secret bench, key password, of --secrets") || strings.Contains(lr.err.Error(), "streambench-secrets-") {
			t.Errorf("the error does not name the Secret the password came from: %v", lr.err)
		}
		// The run's deadline is minutes; a refusal takes seconds. The bound
		// only tells a refusal from a wait on a deadline.
		if took > 90*time.Second {
			t.Errorf("the wrong password took %s to fail", took)
		}
		t.Logf("refused after %s: %v", took.Round(time.Millisecond), lr.err)
		noSecret(t, lr)
	})
}

// TestRunSecuredPulsarDriverFile runs OMB-style Pulsar driver files
// against an existing Pulsar whose only ports are TLS ones with token
// authentication: one in OMB's own keys (tlsTrustCertsFilePath,
// tlsEnableHostnameVerification, authentication.plugin/data with a token
// file), one in the Java client's (authPlugin AuthenticationOAuth2 with
// authParams naming a credentials file, against a test issuer). Nothing
// is lost and the results state pulsar+ssl with the mechanism.
func TestRunSecuredPulsarDriverFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ca, err := testcerts.NewCA(dir, "sb-localrun")
	if err != nil {
		t.Fatal(err)
	}
	brokerCert, err := ca.Issue("pulsar", testcerts.Options{Names: []string{"127.0.0.1", "localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	const clientID, clientSecret = "bench-client", "s3cret-Client-51"
	issuer, err := testoauth.Start(dir, clientID, clientSecret, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = issuer.Close() })
	eff, err := durability.Translate(v1alpha1.SystemPulsar, v1alpha1.DurabilitySpec{
		Replication: &v1alpha1.ReplicationDurability{Mode: v1alpha1.ReplicationSync, Replicas: 1, AckReplicas: 1},
		Local:       &v1alpha1.LocalDurability{Mode: v1alpha1.LocalAsync},
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := localbrokers.StartPulsar(ctx, localbrokers.PulsarOptions{
		Bookies: 1, BrokerConfig: eff.Pulsar.Broker, BookieConfig: eff.Pulsar.Bookie, Log: t.Logf, JVM: localbrokers.PulsarTestJVM,
		Security: &localbrokers.PulsarSecurity{CertFile: brokerCert.CertFile, KeyFile: brokerCert.KeyFile,
			TokenPublicKeyFile: issuer.PublicKeyPEMFile, AdminToken: issuer.Mint("streambench-admin", 24*time.Hour)},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("stopping Pulsar: %v", err)
		}
	})
	runFile := filepath.Join(dir, "run.yaml")
	if err := os.WriteFile(runFile, []byte(fmt.Sprintf(`apiVersion: streambench.io/v1alpha1
kind: BenchmarkRun
metadata: {name: pulsar-omb-secured}
spec:
  system: pulsar
  durability:
    replication: {replicas: 1, ackReplicas: 1, mode: Sync}
    local: {mode: Async}
  cluster:
    existing: {serviceURL: %q, adminURL: %q}
  workers: {count: 2}
`, p.ServiceURLTLS(), p.AdminURLTLS())), 0o644); err != nil {
		t.Fatal(err)
	}
	token := issuer.Mint("bench-user", time.Hour)
	tokenFile := writeTemp(t, "token", token+"\n")
	keyFile := writeTemp(t, "key.json", fmt.Sprintf(`{"type":"client_credentials","client_id":%q,"client_secret":%q}`, clientID, clientSecret))
	files := []struct{ name, mechanism, client string }{
		{"OMB's names, a token file", "Token", `  serviceUrl: pulsar+ssl://broker:6651
  httpUrl: https://broker:8443
  tlsTrustCertsFilePath: ` + ca.CertFile + `
  tlsEnableHostnameVerification: true
  tlsAllowInsecureConnection: false
  authentication:
    plugin: org.apache.pulsar.client.impl.auth.AuthenticationToken
    data: file://` + tokenFile + `
`},
		{"the Java client's names, OAuth2", "OAuth2", `  tlsTrustCertsFilePath: ` + ca.CertFile + `
  tlsHostnameVerificationEnable: true
  authPlugin: org.apache.pulsar.client.impl.auth.oauth2.AuthenticationOAuth2
  authParams: '{"type":"client_credentials","issuerUrl":"` + issuer.Issuer + `","privateKey":"file://` + keyFile + `"}'
`},
	}
	for _, f := range files {
		t.Run(f.name, func(t *testing.T) {
			driverFile := writeTemp(t, "pulsar.yaml", "name: Pulsar\ndriverClass: io.openmessaging.benchmark.driver.pulsar.PulsarBenchmarkDriver\nclient:\n"+f.client+
				"producer:\n  batchingEnabled: true\n  batchingMaxPublishDelayMs: 1\n")
			lr := startRun(t, Options{RunFile: runFile, WorkloadFile: "testdata/short-latency.yaml", DriverFile: driverFile}).wait()
			if lr.err != nil {
				t.Fatalf("run: %v", lr.err)
			}
			sum := lr.out.Summary
			if sum == nil || sum.Results.Lost != 0 || sum.Results.Received == 0 || sum.Results.Received != sum.Results.Acked {
				t.Fatalf("summary %+v", sum)
			}
			if s := sum.Security; s == nil || s.Protocol != "pulsar+ssl" || s.Mechanism != f.mechanism || !strings.HasPrefix(s.TLSVersion, "TLS 1.") || s.Verification != "full" {
				t.Errorf("the results' security %+v, want pulsar+ssl, %s, a TLS version, full verification", s, f.mechanism)
			}
			out := lr.stdout.String() + lr.stderr.String()
			if strings.Contains(out, token) || strings.Contains(out, clientSecret) {
				t.Error("a secret is in the run's output")
			}
		})
	}
}
