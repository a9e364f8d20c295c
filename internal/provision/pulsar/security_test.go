package pulsar

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func secured(tls bool, auth v1alpha1.ManagedAuthentication) func(*v1alpha1.BenchmarkRun) {
	return func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Cluster.Managed.Security = &v1alpha1.ManagedSecurity{TLS: tls, Authentication: auth}
	}
}

func TestSecurityValues(t *testing.T) {
	tlsValues := `
tls: {enabled: true, broker: {enabled: true}}
certs:
  internal_issuer: {enabled: false}
  issuers: {ca: {name: run-a-pulsar-ca-tls, secretName: run-a-pulsar-ca-tls}}
`
	tokenValues := `
auth: {authentication: {enabled: true, jwt: {enabled: true, usingSecretKey: true}}}
`
	tests := []struct {
		name    string
		run     *v1alpha1.BenchmarkRun
		want    string // the tls, certs and auth sections, YAML
		wantSec Security
	}{
		{"none", newRun(), `{}`, Security{}},
		{"empty security", newRun(func(r *v1alpha1.BenchmarkRun) { r.Spec.Cluster.Managed.Security = &v1alpha1.ManagedSecurity{} }), `{}`, Security{}},
		{"TLS", newRun(secured(true, "")), tlsValues, Security{TLS: true}},
		{"token over plaintext", newRun(secured(false, v1alpha1.ManagedAuthToken)), tokenValues, Security{Token: true}},
		{"TLS and token", newRun(secured(true, v1alpha1.ManagedAuthToken)), tlsValues + tokenValues, Security{TLS: true, Token: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SecurityOf(tt.run); got != tt.wantSec {
				t.Errorf("SecurityOf = %+v, want %+v", got, tt.wantSec)
			}
			vals, err := Values(tt.run, translate(t, tt.run))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]any{}
			for _, k := range []string{"tls", "certs", "auth"} {
				if v, ok := vals[k]; ok {
					got[k] = v
				}
			}
			if diff := cmp.Diff(fromYAML(t, tt.want), generic(t, got)); diff != "" {
				t.Errorf("security values (-want +got):\n%s", diff)
			}
			rel, err := ReleaseFor(tt.run, translate(t, tt.run))
			if err != nil {
				t.Fatal(err)
			}
			if rel.TLS != tt.wantSec.TLS {
				t.Errorf("Release.TLS = %v, want %v (the Certificate left out with TLS)", rel.TLS, tt.wantSec.TLS)
			}
		})
	}
}

func TestSecurityValuesErrors(t *testing.T) {
	tests := []struct {
		name string
		run  *v1alpha1.BenchmarkRun
		want []string
	}{
		{"a Kafka user's authentication", newRun(secured(true, v1alpha1.ManagedAuthScramSHA512)),
			[]string{`spec.cluster.managed.security.authentication "scram-sha-512"`, "takes token, or none"}},
		{"brokerConfig undoing the security", newRun(secured(true, v1alpha1.ManagedAuthToken), func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Cluster.Managed.BrokerConfig = map[string]string{"authenticationEnabled": "false", "PULSAR_PREFIX_tlsCertificateFilePath": "/x"}
		}), []string{"brokerConfig sets authenticationEnabled, which spec.cluster.managed.security sets; remove it", "brokerConfig sets PULSAR_PREFIX_tlsCertificateFilePath"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Values(tt.run, translate(t, tt.run))
			if err == nil {
				t.Fatal("Values took it")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	// The same keys without security are the user's to set.
	run := newRun(func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Cluster.Managed.BrokerConfig = map[string]string{"authenticationEnabled": "false"}
	})
	if _, err := Values(run, translate(t, run)); err != nil {
		t.Errorf("brokerConfig without security: %v", err)
	}
}

func TestSecrets(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		run  *v1alpha1.BenchmarkRun
		want []string // name type keys...
	}{
		{"none", newRun(), nil},
		{"TLS", newRun(secured(true, "")), []string{
			"run-a-pulsar-ca-tls Opaque ca.crt",
			"run-a-pulsar-tls-broker kubernetes.io/tls ca.crt tls.crt tls.key",
		}},
		{"token", newRun(secured(false, v1alpha1.ManagedAuthToken)), []string{
			"run-a-pulsar-token-symmetric-key Opaque SECRETKEY",
			"run-a-pulsar-token-broker-admin Opaque TOKEN",
			"run-a-pulsar-token-proxy-admin Opaque TOKEN",
			"run-a-pulsar-token-admin Opaque TOKEN",
			"run-a-pulsar-token-streambench Opaque TOKEN",
		}},
		{"TLS and token", newRun(secured(true, v1alpha1.ManagedAuthToken)), []string{
			"run-a-pulsar-ca-tls Opaque ca.crt",
			"run-a-pulsar-tls-broker kubernetes.io/tls ca.crt tls.crt tls.key",
			"run-a-pulsar-token-symmetric-key Opaque SECRETKEY",
			"run-a-pulsar-token-broker-admin Opaque TOKEN",
			"run-a-pulsar-token-proxy-admin Opaque TOKEN",
			"run-a-pulsar-token-admin Opaque TOKEN",
			"run-a-pulsar-token-streambench Opaque TOKEN",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secrets, err := Secrets(tt.run, now)
			if err != nil {
				t.Fatal(err)
			}
			var got, names []string
			byName := map[string]*corev1.Secret{}
			for _, s := range secrets {
				keys := slices.Sorted(func(yield func(string) bool) {
					for k := range s.Data {
						if !yield(k) {
							return
						}
					}
				})
				got = append(got, strings.Join(append([]string{s.Name, string(s.Type)}, keys...), " "))
				names = append(names, s.Name)
				byName[s.Name] = s
				if s.Namespace != "bench" || s.Labels[LabelRun] != "run-a" || s.Labels[LabelManagedBy] != "streambench" {
					t.Errorf("Secret %s: namespace %q, labels %v; want bench and the run's labels", s.Name, s.Namespace, s.Labels)
				}
				for k, v := range s.Data {
					if len(v) == 0 {
						t.Errorf("Secret %s key %s is empty", s.Name, k)
					}
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Secrets (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(SecretNames(tt.run), names); diff != "" {
				t.Errorf("SecretNames differs from what Secrets makes (-names +made):\n%s", diff)
			}
			if !SecretsComplete(tt.run, names) {
				t.Error("SecretsComplete is false for the whole set")
			}
			if len(names) > 0 && SecretsComplete(tt.run, names[1:]) {
				t.Error("SecretsComplete is true without the first Secret")
			}
			if ca := byName["run-a-pulsar-ca-tls"]; ca != nil {
				checkBrokerCertificate(t, ca, byName["run-a-pulsar-tls-broker"], now)
			}
			if key := byName["run-a-pulsar-token-symmetric-key"]; key != nil {
				k := key.Data[KeySecretKey]
				if len(k) != 32 {
					t.Errorf("signing key of %d bytes, want 32 (HS256)", len(k))
				}
				for _, s := range tokenSubjects {
					checkToken(t, k, byName[TokenSecretName("run-a-pulsar", s)].Data[KeyToken], s)
				}
			}
		})
	}

	// Each call makes new keys: a run's Secrets are its own.
	run := newRun(secured(true, v1alpha1.ManagedAuthToken))
	a, err := Secrets(run, now)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Secrets(run, now)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		for k := range a[i].Data {
			if bytes.Equal(a[i].Data[k], b[i].Data[k]) {
				t.Errorf("Secret %s key %s is the same in two calls", a[i].Name, k)
			}
		}
	}
}

// checkBrokerCertificate: the brokers' certificate chains to the CA for
// every name a client reaches a broker by, and its key is its own; the
// CA's Secret holds no key.
func checkBrokerCertificate(t *testing.T, caSecret, cert *corev1.Secret, now time.Time) {
	t.Helper()
	if cert == nil {
		t.Fatal("no Secret run-a-pulsar-tls-broker, the chart's name for the brokers' certificate")
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caSecret.Data[KeyCA]) {
		t.Fatal("ca.crt holds no PEM certificate")
	}
	if !bytes.Equal(caSecret.Data[KeyCA], cert.Data[KeyCA]) {
		t.Error("the brokers' Secret's ca.crt is not the CA's")
	}
	pair, err := tls.X509KeyPair(cert.Data[KeyTLSCert], cert.Data[KeyTLSKey])
	if err != nil {
		t.Fatalf("tls.crt and tls.key: %v", err)
	}
	if blk, _ := pem.Decode(cert.Data[KeyTLSKey]); blk == nil || blk.Type != "PRIVATE KEY" {
		t.Error("tls.key is not a PKCS#8 PEM key (PRIVATE KEY), which Pulsar reads")
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		"run-a-pulsar-broker.bench.svc",                                              // the workers' URLs
		"run-a-pulsar-broker.bench.svc.cluster.local",                                // the chart's cluster URLs
		"run-a-pulsar-broker-0.run-a-pulsar-broker-headless.bench.svc.cluster.local", // a broker's advertised address
		"run-a-pulsar-broker-2.run-a-pulsar-broker-headless.bench.svc",
	} {
		_, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		if err != nil {
			t.Errorf("the brokers' certificate for %s: %v", name, err)
		}
	}
	for _, name := range []string{"run-b-pulsar-broker.bench.svc", "run-a-pulsar-broker.other.svc", "run-a-pulsar-bookie-0.run-a-pulsar-bookie.bench.svc"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, CurrentTime: now}); err == nil {
			t.Errorf("the brokers' certificate is valid for %s, which is not theirs", name)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now.Add(certValidity + time.Hour)}); err == nil {
		t.Error("the certificate is valid after certValidity")
	}
	for k, v := range caSecret.Data {
		if strings.Contains(string(v), "PRIVATE KEY") {
			t.Errorf("the CA's Secret holds a private key in %s; the CA's key must not be kept", k)
		}
	}
}

// checkToken: token is a JWT signed HS256 by key for subject.
func checkToken(t *testing.T, key, token []byte, subject string) {
	t.Helper()
	parts := strings.Split(string(token), ".")
	if len(parts) != 3 {
		t.Fatalf("token of %s is not a JWT", subject)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(parts[0] + "." + parts[1]))
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || !hmac.Equal(sig, mac.Sum(nil)) {
		t.Errorf("token of %s: signature does not verify with the signing key", subject)
	}
	var header, claims map[string]any
	for i, v := range []*map[string]any{&header, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	if header["alg"] != "HS256" || claims["sub"] != subject || len(claims) != 1 {
		t.Errorf("token of %s: header %v, claims %v; want HS256 and sub %s alone", subject, header, claims, subject)
	}
}

// TestChartMountsTheSecrets renders the upstream chart with security on:
// every Secret a pod of the release mounts (the chart's names, keys and
// paths) is one Secrets makes, with the keys mounted; the chart's
// cert-manager Certificate names the Secret Secrets makes, and the
// post-render leaves it out; the broker listens on the TLS ports Endpoints
// gives the clients, and reads the token key and its own token where the
// chart mounts them.
func TestChartMountsTheSecrets(t *testing.T) {
	for _, sec := range []*v1alpha1.ManagedSecurity{
		{TLS: true},
		{Authentication: v1alpha1.ManagedAuthToken},
		{TLS: true, Authentication: v1alpha1.ManagedAuthToken},
	} {
		t.Run(strings.TrimSpace(strings.Join([]string{map[bool]string{true: "tls"}[sec.TLS], string(sec.Authentication)}, " ")), func(t *testing.T) {
			run := newRun(func(r *v1alpha1.BenchmarkRun) { r.Spec.Cluster.Managed.Security = sec })
			secrets, err := Secrets(run, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			made := map[string]*corev1.Secret{}
			for _, s := range secrets {
				made[s.Name] = s
			}

			var certs []string
			for _, doc := range renderChartWith(t, run, false) {
				if doc["kind"] == "Certificate" {
					spec, _ := doc["spec"].(map[string]any)
					certs = append(certs, spec["secretName"].(string))
				}
			}
			var want []string
			if sec.TLS {
				want = []string{BrokerCertSecretName("run-a-pulsar")}
			}
			if diff := cmp.Diff(want, certs); diff != "" {
				t.Errorf("the chart's Certificates' Secrets (-want +got):\n%s", diff)
			}

			mounted := map[string]bool{}
			var brokerConfig map[string]any
			var brokerPorts []int
			for _, doc := range renderChart(t, run) {
				kind, _ := doc["kind"].(string)
				name, _ := doc["metadata"].(map[string]any)["name"].(string)
				switch {
				case kind == "Certificate":
					t.Errorf("Certificate %s survived the post-render", name)
				case kind == "Job" && strings.HasSuffix(name, "jwt-secret-init"):
					t.Errorf("the chart's token hook %s renders: generateSecrets must stay off", name)
				case kind == "ConfigMap" && name == "run-a-pulsar-broker":
					brokerConfig, _ = doc["data"].(map[string]any)
				case kind == "Service" && name == "run-a-pulsar-broker":
					for _, p := range doc["spec"].(map[string]any)["ports"].([]any) {
						brokerPorts = append(brokerPorts, int(p.(map[string]any)["port"].(float64)))
					}
				}
				if kind != "StatefulSet" && kind != "Job" {
					continue
				}
				spec := doc["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
				vols, _ := spec["volumes"].([]any)
				for _, v := range vols {
					s, ok := v.(map[string]any)["secret"].(map[string]any)
					if !ok {
						continue
					}
					sname := s["secretName"].(string)
					mounted[sname] = true
					secret := made[sname]
					if secret == nil {
						t.Errorf("%s %s mounts Secret %s, which Secrets does not make", kind, name, sname)
						continue
					}
					items, _ := s["items"].([]any)
					for _, it := range items {
						k := it.(map[string]any)["key"].(string)
						if _, ok := secret.Data[k]; !ok {
							t.Errorf("%s %s mounts key %s of Secret %s, which Secrets does not write", kind, name, k, sname)
						}
					}
				}
			}
			for _, n := range []string{CASecretName("run-a-pulsar"), BrokerCertSecretName("run-a-pulsar"), TokenKeySecretName("run-a-pulsar"), TokenSecretName("run-a-pulsar", SubjectBroker)} {
				if made[n] != nil && !mounted[n] {
					t.Errorf("Secret %s is made but no pod mounts it", n)
				}
			}

			ep := Endpoints(run)
			if sec.TLS {
				for _, p := range []int{BrokerServicePortTLS, BrokerHTTPSPort} {
					if !slices.Contains(brokerPorts, p) {
						t.Errorf("the broker Service has ports %v, not %d", brokerPorts, p)
					}
				}
				for k, v := range map[string]string{"brokerServicePortTls": "6651", "webServicePortTls": "8443", "tlsCertificateFilePath": "/pulsar/certs/broker/tls.crt", "tlsKeyFilePath": "/pulsar/certs/broker/tls.key"} {
					if brokerConfig[k] != v {
						t.Errorf("broker %s = %v, want %s", k, brokerConfig[k], v)
					}
				}
				if ep.ServiceURL != "pulsar+ssl://run-a-pulsar-broker.bench.svc:6651" || ep.AdminURL != "https://run-a-pulsar-broker.bench.svc:8443" {
					t.Errorf("Endpoints = %+v, want the TLS ports", ep)
				}
			} else if ep.ServiceURL != ServiceURL("run-a-pulsar", "bench") || ep.AdminURL != AdminURL("run-a-pulsar", "bench") {
				t.Errorf("Endpoints = %+v, want the plaintext ports", ep)
			}
			if sec.Authentication == v1alpha1.ManagedAuthToken {
				for k, v := range map[string]string{
					"authenticationEnabled":                "true",
					"authenticationProviders":              "org.apache.pulsar.broker.authentication.AuthenticationProviderToken",
					"tokenSecretKey":                       "file:///pulsar/keys/token/secret.key",
					"brokerClientAuthenticationParameters": "file:///pulsar/tokens/broker/token",
				} {
					if brokerConfig[k] != v {
						t.Errorf("broker %s = %v, want %s", k, brokerConfig[k], v)
					}
				}
			}
		})
	}
}

func TestCertificateRenderer(t *testing.T) {
	in := `---
# Source: pulsar/templates/tls-certs-internal.yaml
apiVersion: "cert-manager.io/v1"
kind: Certificate
metadata:
  name: "run-a-pulsar-tls-broker"
---
apiVersion: example.com/v1
kind: Certificate
metadata:
  name: someone-elses
---
apiVersion: v1
kind: Service
metadata:
  name: run-a-pulsar-broker
`
	out, err := CertificateRenderer{}.Run(bytes.NewBufferString(in))
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.Contains(got, "run-a-pulsar-tls-broker") {
		t.Errorf("the cert-manager Certificate was kept:\n%s", got)
	}
	for _, keep := range []string{"someone-elses", "kind: Service"} {
		if !strings.Contains(got, keep) {
			t.Errorf("post-render dropped %q:\n%s", keep, got)
		}
	}
}
