package localrun

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/ombdriver"
)

// The secret values of these tests; no error or note may show one.
const (
	testPassword = "pa55-w0rd-7Q"
	testCA       = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
)

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// secretsYAML: kafka-ca with stringData, alice with data (base64 of
// testPassword), in one multi-document file, as kubectl apply takes it.
const secretsYAML = `apiVersion: v1
kind: Secret
metadata: {name: kafka-ca}
stringData:
  ca.crt: |
    -----BEGIN CERTIFICATE-----
    MIIB
    -----END CERTIFICATE-----
---
apiVersion: v1
kind: Secret
metadata: {name: alice, namespace: bench}
type: Opaque
data:
  password: cGE1NS13MHJkLTdR
`

func TestLoadSecrets(t *testing.T) {
	s, err := LoadSecrets(writeTemp(t, "secrets.yaml", secretsYAML))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(s.secrets["alice"].data["password"]); got != testPassword {
		t.Errorf("data is base64: got %d bytes, not the password", len(got))
	}
	if got := string(s.secrets["kafka-ca"].data["ca.crt"]); got != testCA {
		t.Errorf("stringData: got %q", got)
	}
	list := "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: a}\n  stringData: {k: v}\n  data: {k: b2xk}\n"
	if s, err := LoadSecrets(writeTemp(t, "list.yaml", list)); err != nil || string(s.secrets["a"].data["k"]) != "v" {
		t.Errorf("a List whose stringData wins over data: %v", err)
	}

	bad := []struct{ name, file, want string }{
		{"not a Secret", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", "document 1 is v1 ConfigMap, not a v1 Secret"},
		{"a Secret twice", "apiVersion: v1\nkind: Secret\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: a}\n", "document 2: Secret a is given twice"},
		{"a misspelt field", "apiVersion: v1\nkind: Secret\nmetadata: {name: a}\nstringDta: {password: " + testPassword + "}\n", `unknown field "stringDta"`},
		{"data that is not base64", "apiVersion: v1\nkind: Secret\nmetadata: {name: a}\ndata: {password: " + testPassword + "!}\n", "a data value is not base64 (put plain text under stringData instead)"},
		{"no name", "apiVersion: v1\nkind: Secret\nstringData: {k: v}\n", "has no metadata.name"},
		{"empty", "# nothing\n", "holds no Secret"},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			_, err := LoadSecrets(writeTemp(t, "secrets.yaml", b.file))
			if err == nil || !strings.Contains(err.Error(), b.want) {
				t.Fatalf("error %v, want %q", err, b.want)
			}
			if strings.Contains(err.Error(), testPassword) {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

func kafkaRun(t *testing.T, existing string) *v1alpha1.BenchmarkRun {
	t.Helper()
	run, err := decodeRun([]byte(`apiVersion: streambench.io/v1alpha1
kind: BenchmarkRun
metadata: {name: secured, namespace: bench}
spec:
  system: kafka
  cluster:
    existing:
`+existing+`
  workload: {messageSize: 1024}
`), ".", "")
	if err != nil {
		t.Fatal(err)
	}
	return run
}

const scramSpec = `      bootstrapServers: b:9093
      tls: {ca: {name: kafka-ca, key: ca.crt}}
      authentication: {mechanism: SCRAM-SHA-512, username: alice, password: {name: alice, key: password}}`

// TestPrepareSecurity: the Secrets the run names are written to a private
// directory (0700, files 0600) as security.Resolve's paths, and removed by
// cleanup; a missing Secret or key says the field, the Secret, the key and
// the fix, never a value.
func TestPrepareSecurity(t *testing.T) {
	secrets := writeTemp(t, "secrets.yaml", secretsYAML)
	rs, notes, err := prepareSecurity(kafkaRun(t, scramSpec), secrets, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	d := rs.driver
	if d == nil || d.Mechanism != "SCRAM-SHA-512" || d.Username != "alice" || d.TLS == nil || len(notes) != 0 {
		t.Fatalf("security %+v, notes %v", d, notes)
	}
	if fi, err := os.Stat(rs.dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the private directory %s: %v %v, want 0700", rs.dir, fi.Mode().Perm(), err)
	}
	for p, want := range map[string]string{d.PasswordFile: testPassword, d.TLS.CAFile: testCA} {
		b, err := os.ReadFile(p)
		if err != nil || string(b) != want {
			t.Errorf("%s holds %d bytes (%v), not the Secret's key", p, len(b), err)
		}
		if fi, _ := os.Stat(p); filepath.Dir(p) != rs.dir || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: not a 0600 file of %s", p, rs.dir)
		}
	}
	if got := DescribeSecurity(v1alpha1.SystemKafka, d); got != "SASL_SSL, SCRAM-SHA-512 as alice" {
		t.Errorf("described as %q", got)
	}
	rs.cleanup()
	if _, err := os.Stat(rs.dir); !os.IsNotExist(err) {
		t.Errorf("the private directory outlived the run: %v", err)
	}

	// A KafkaUser's Secret as Strimzi writes it (the key password).
	rs, _, err = prepareSecurity(kafkaRun(t, "      bootstrapServers: b:9093\n      tls: {ca: {name: kafka-ca, key: ca.crt}}\n      authentication: {strimziKafkaUser: {secretName: alice, type: scram-sha-512}}"), secrets, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if rs.driver.Username != "alice" || rs.driver.Mechanism != "SCRAM-SHA-512" {
		t.Errorf("a KafkaUser's Secret: %+v", rs.driver)
	}
	rs.cleanup()

	// TLS with the system's CAs names no Secret: no --secrets needed.
	rs, _, err = prepareSecurity(kafkaRun(t, "      bootstrapServers: b:9093\n      tls: {hostnameVerification: false}"), "", nil, "")
	if err != nil || rs.driver == nil || rs.driver.TLS == nil || !rs.driver.TLS.SkipHostnameVerification {
		t.Fatalf("TLS without a CA: %+v %v", rs, err)
	}
	if got := DescribeSecurity(v1alpha1.SystemKafka, rs.driver); got != "SSL, hostname not verified, system CAs" {
		t.Errorf("described as %q", got)
	}
	rs.cleanup()

	// --secrets for a run that names none is a note.
	rs, notes, err = prepareSecurity(kafkaRun(t, "      bootstrapServers: b:9092"), secrets, nil, "")
	if err != nil || rs.driver != nil || len(notes) != 1 || !strings.Contains(notes[0], "the run names no Secret") {
		t.Errorf("an unused --secrets: %+v %v %v", rs, notes, err)
	}

	bad := []struct {
		name, existing, secrets string
		want                    []string
	}{
		{"no --secrets", scramSpec, "", []string{
			"spec.cluster.existing.tls.ca (Secret kafka-ca, key ca.crt); spec.cluster.existing.authentication.password (Secret alice, key password): in local mode give these Secrets with --secrets FILE"}},
		{"a missing Secret", scramSpec, "apiVersion: v1\nkind: Secret\nmetadata: {name: kafka-ca}\nstringData: {ca.crt: x}\n", []string{
			"spec.cluster.existing.authentication.password names Secret alice (key password), which is not in --secrets",
			"add it: kubectl create secret generic alice --from-file=password=FILE --dry-run=client -o yaml >>"}},
		{"a missing key", scramSpec, "apiVersion: v1\nkind: Secret\nmetadata: {name: kafka-ca}\nstringData: {tls.crt: x, tls.key: y}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: alice}\nstringData: {password: " + testPassword + "}\n", []string{
			"spec.cluster.existing.tls.ca names key ca.crt of Secret kafka-ca, which in --secrets", "has only tls.crt, tls.key; add the key under data (base64) or stringData"}},
		{"a Secret of another namespace", scramSpec, "apiVersion: v1\nkind: Secret\nmetadata: {name: kafka-ca, namespace: other}\nstringData: {ca.crt: x}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: alice}\nstringData: {password: " + testPassword + "}\n", []string{
			"gives in namespace other, not the run's namespace bench"}},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			file := ""
			if b.secrets != "" {
				file = writeTemp(t, "secrets.yaml", b.secrets)
			}
			_, _, err := prepareSecurity(kafkaRun(t, b.existing), file, nil, "")
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range b.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), testPassword) {
				t.Errorf("the error shows the password")
			}
		})
	}
}

// TestPrepareDriverFileSecurity: a driver file's security goes to an
// existing cluster, once, and Pulsar's TLS needs the brokers' TLS URLs.
func TestPrepareDriverFileSecurity(t *testing.T) {
	token := writeTemp(t, "token", "eyJ.token.sig\n")
	fileSec := func(system, body string) *ombdriver.Security {
		t.Helper()
		head := "name: K\ndriverClass: io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver\n"
		if system == "pulsar" {
			head = "name: P\ndriverClass: io.openmessaging.benchmark.driver.pulsar.PulsarBenchmarkDriver\n"
		}
		f, err := ombdriver.Parse([]byte(head + body))
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := ombdriver.MapSecurity(f)
		if err != nil || s == nil {
			t.Fatalf("%v %v", s, err)
		}
		return s
	}
	scram := fileSec("kafka", "commonConfig: |\n  security.protocol=SASL_PLAINTEXT\n  sasl.mechanism=SCRAM-SHA-256\n  sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\""+testPassword+"\";\n")
	rs, _, err := prepareSecurity(kafkaRun(t, "      bootstrapServers: b:9092"), "", scram, "kafka-scram.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(rs.driver.PasswordFile); err != nil || string(b) != testPassword || filepath.Dir(rs.driver.PasswordFile) != rs.dir {
		t.Errorf("the driver file's password was not written to the private directory: %v", err)
	}
	if got := DescribeSecurity(v1alpha1.SystemKafka, rs.driver); got != "SASL_PLAINTEXT, SCRAM-SHA-256 as alice" {
		t.Errorf("described as %q", got)
	}
	// A driver's error names the private file, gone after the run; the
	// run's error names where the password came from instead.
	cause := errors.New("wrong password in " + rs.driver.PasswordFile)
	if err := rs.explain(cause); !errors.Is(err, cause) || err.Error() != "wrong password in commonConfig: sasl.jaas.config (password) of --driver kafka-scram.yaml" {
		t.Errorf("explained as %v", err)
	}
	rs.cleanup()

	pulsarRun := func(urls string) *v1alpha1.BenchmarkRun {
		run, err := decodeRun([]byte("apiVersion: streambench.io/v1alpha1\nkind: BenchmarkRun\nmetadata: {name: p}\nspec:\n  system: pulsar\n  cluster: {existing: {"+urls+"}}\n  workload: {messageSize: 1024}\n"), ".", "")
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	pulsarTLS := fileSec("pulsar", "client:\n  tlsTrustCertsFilePath: /nonexistent/ca.pem\n  authPlugin: token\n  authParams: file://"+token+"\n")
	managed, err := decodeRun([]byte("apiVersion: streambench.io/v1alpha1\nkind: BenchmarkRun\nmetadata: {name: m}\nspec:\n  system: kafka\n  cluster: {managed: {brokers: 3}}\n  workload: {messageSize: 1024}\n"), ".", "")
	if err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		name string
		run  *v1alpha1.BenchmarkRun
		sec  *ombdriver.Security
		want string
	}{
		{"managed brokers are plaintext", managed, scram,
			"--driver f.yaml sets security (commonConfig: sasl.jaas.config, commonConfig: sasl.mechanism, commonConfig: security.protocol), but the brokers local mode starts listen in plaintext"},
		{"security twice", kafkaRun(t, scramSpec), scram, "and so does spec.cluster.existing (tls, authentication); give it once"},
		{"Pulsar TLS to a plaintext URL", pulsarRun("serviceURL: 'pulsar://b:6650', adminURL: 'http://b:8080'"), pulsarTLS,
			"asks for TLS (client: authParams, client: authPlugin, client: tlsTrustCertsFilePath), but spec.cluster.existing.serviceURL pulsar://b:6650 and adminURL http://b:8080 are not pulsar+ssl:// and https://"},
		{"a file the driver file names is missing", pulsarRun("serviceURL: 'pulsar+ssl://b:6651', adminURL: 'https://b:8443'"), pulsarTLS,
			"--driver f.yaml: client: tlsTrustCertsFilePath: open /nonexistent/ca.pem: no such file or directory"},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			_, _, err := prepareSecurity(b.run, "", b.sec, "f.yaml")
			if err == nil || !strings.Contains(err.Error(), b.want) {
				t.Fatalf("error %v, want %q", err, b.want)
			}
			if strings.Contains(err.Error(), testPassword) {
				t.Errorf("the error shows the password")
			}
		})
	}
}

// A run whose Secret is missing fails before anything starts: no broker,
// no worker, no results directory, the field and the fix in the error.
func TestRunRefusesMissingSecret(t *testing.T) {
	dir := t.TempDir()
	runFile := writeTemp(t, "run.yaml", `apiVersion: streambench.io/v1alpha1
kind: BenchmarkRun
metadata: {name: secured}
spec:
  system: kafka
  cluster:
    existing:
      bootstrapServers: 127.0.0.1:1
      tls: {ca: {name: kafka-ca, key: ca.crt}}
  workers: {count: 1}
`)
	out, err := Run(context.Background(), Options{
		RunFile: runFile, WorkloadFile: filepath.Join("testdata", "short-latency.yaml"), ResultsDir: dir,
		SecretsFile: writeTemp(t, "secrets.yaml", "apiVersion: v1\nkind: Secret\nmetadata: {name: other}\nstringData: {k: v}\n"),
		Stdout:      &lockedBuffer{}, Stderr: &lockedBuffer{},
	})
	if err == nil || !strings.Contains(err.Error(), "spec.cluster.existing.tls.ca names Secret kafka-ca (key ca.crt), which is not in --secrets") {
		t.Fatalf("want the missing Secret named, got %v", err)
	}
	if out != nil && len(out.BrokerPids) != 0 {
		t.Errorf("brokers started: %v", out.BrokerPids)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the refused run left %d entries in the results directory", len(entries))
	}
}
