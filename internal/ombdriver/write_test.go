package ombdriver

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/internal/driver"
)

// stores are the JDK-made trust and key stores (testdata/stores/make.sh).
func stores(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "stores", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func pemDER(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return out
		}
		out = append(out, blk.Bytes)
	}
}

// writeKafka maps a Kafka driver file's commonConfig and writes its
// security into a private directory.
func writeKafka(t *testing.T, common string) (*driver.Security, string, error) {
	t.Helper()
	f, err := Parse([]byte(kafkaHead + "commonConfig: |\n  " + strings.ReplaceAll(strings.TrimSpace(common), "\n", "\n  ") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := MapSecurity(f)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ds, err := s.Write(dir)
	if err != nil {
		noSecret(t, "the error", err.Error())
	}
	return ds, dir, err
}

// TestWriteStores: the JDK's JKS and PKCS12 stores and PEM files become
// the same PEM CA and client certificate, in files only the owner reads.
func TestWriteStores(t *testing.T) {
	ca := pemDER(t, stores(t, "ca.crt"))
	leaf := pemDER(t, stores(t, "client.crt"))
	if len(ca) != 1 || len(leaf) != 1 {
		t.Fatal("testdata/stores: ca.crt and client.crt must hold one certificate each; run make.sh")
	}
	tests := []struct {
		name, config string
		chain        int // certificates in the client's chain
	}{
		{"JKS trust store and JKS key store (key password apart)", `
security.protocol=SSL
ssl.truststore.location=` + stores(t, "truststore.jks") + `
ssl.truststore.password=changeit
ssl.keystore.location=` + stores(t, "keystore.jks") + `
ssl.keystore.password=storepass
ssl.key.password=keypass`, 2},
		{"PKCS12 trust store and key store (the JDK 17 default: PBES2)", `
security.protocol=SSL
ssl.truststore.location=` + stores(t, "truststore.p12") + `
ssl.truststore.type=PKCS12
ssl.truststore.password=changeit
ssl.keystore.location=` + stores(t, "keystore.p12") + `
ssl.keystore.type=PKCS12
ssl.keystore.password=storepass`, 2},
		{"a PKCS12 store declared JKS, as the JDK reads it", `
security.protocol=SSL
ssl.truststore.location=` + stores(t, "truststore.p12") + `
ssl.truststore.password=changeit`, 0},
		{"PEM files", `
security.protocol=SSL
ssl.truststore.location=` + stores(t, "ca.crt") + `
ssl.truststore.type=PEM`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds, dir, err := writeKafka(t, tt.config)
			if err != nil {
				t.Fatal(err)
			}
			if got := pemDER(t, ds.TLS.CAFile); len(got) != 1 || string(got[0]) != string(ca[0]) {
				t.Errorf("the CA written is not testdata/stores/ca.crt (%d certificates)", len(got))
			}
			if filepath.Dir(ds.TLS.CAFile) != dir {
				t.Errorf("the CA was written to %s, not the private directory %s", ds.TLS.CAFile, dir)
			}
			if tt.chain == 0 {
				if ds.TLS.CertFile != "" {
					t.Errorf("a client certificate from nowhere: %s", ds.TLS.CertFile)
				}
				return
			}
			chain := pemDER(t, ds.TLS.CertFile)
			if len(chain) != tt.chain || string(chain[0]) != string(leaf[0]) || string(chain[1]) != string(ca[0]) {
				t.Errorf("the client's chain has %d certificates, want %d: client.crt then ca.crt", len(chain), tt.chain)
			}
			if _, err := tls.LoadX509KeyPair(ds.TLS.CertFile, ds.TLS.KeyFile); err != nil {
				t.Errorf("the written certificate and key: %v", err)
			}
			for _, p := range []string{ds.TLS.CAFile, ds.TLS.CertFile, ds.TLS.KeyFile} {
				if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("%s: mode %v (%v), want 0600", p, fi.Mode().Perm(), err)
				}
			}
		})
	}

	// The PEM client certificate and key, inline (Kafka's PEM key store).
	keyPEM, err := os.ReadFile(stores(t, "client.key"))
	if err != nil {
		t.Fatal(err)
	}
	certPEM, err := os.ReadFile(stores(t, "client.crt"))
	if err != nil {
		t.Fatal(err)
	}
	s := &Security{Protocol: "SSL", TLS: &TLS{Client: &Store{Key: "commonConfig: ssl.keystore.certificate.chain", Type: "PEM",
		PEM: inline("commonConfig: ssl.keystore.certificate.chain", string(certPEM)), KeyPEM: inline("commonConfig: ssl.keystore.key", string(keyPEM))}}}
	ds, err := s.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.LoadX509KeyPair(ds.TLS.CertFile, ds.TLS.KeyFile); err != nil {
		t.Errorf("inline PEM key store: %v", err)
	}
	if c, err := x509.ParseCertificate(pemDER(t, ds.TLS.CertFile)[0]); err != nil || c.Subject.CommonName != "alice" {
		t.Errorf("inline PEM key store: the certificate %v (%v)", c.Subject, err)
	}
}

// TestWriteRefusesBadStores: each wrong store says which key, what is
// wrong and the fix, and never a password.
func TestWriteRefusesBadStores(t *testing.T) {
	tests := []struct{ name, config, want string }{
		{"a wrong JKS password", "security.protocol=SSL\nssl.truststore.location=" + stores(t, "truststore.jks") + "\nssl.truststore.password=storepass",
			"commonConfig: ssl.truststore.location (" + stores(t, "truststore.jks") + "): the password (commonConfig: ssl.truststore.password) is wrong"},
		{"a wrong PKCS12 password", "security.protocol=SSL\nssl.truststore.location=" + stores(t, "truststore.p12") + "\nssl.truststore.password=keypass",
			"the password (commonConfig: ssl.truststore.password) is wrong"},
		{"a JKS store without its password", "security.protocol=SSL\nssl.truststore.location=" + stores(t, "truststore.jks"),
			"a JKS store needs its password"},
		{"openssl's PKCS12 has no trust anchors", "security.protocol=SSL\nssl.truststore.location=" + stores(t, "openssl-trust.p12") + "\nssl.truststore.type=PKCS12\nssl.truststore.password=changeit",
			"not marked as a trust anchor (a PKCS12 file made by openssl, not keytool); give the CA as PEM"},
		{"a key store given as the trust store", "security.protocol=SSL\nssl.truststore.location=" + stores(t, "keystore.p12") + "\nssl.truststore.type=PKCS12\nssl.truststore.password=storepass",
			"is a key store (it holds a private key), not a trust store"},
		{"a JKS store declared PEM", "security.protocol=SSL\nssl.truststore.location=" + stores(t, "truststore.jks") + "\nssl.truststore.type=PEM",
			"is a JKS file but its type is PEM; set the store's type to JKS or PKCS12"},
		{"a PEM file declared JKS (the default)", "security.protocol=SSL\nssl.truststore.location=" + stores(t, "ca.crt"),
			"is a PEM file but its type is JKS; set the store's type to PEM"},
		{"a missing trust store", "security.protocol=SSL\nssl.truststore.location=/nonexistent/truststore.jks\nssl.truststore.password=changeit",
			"commonConfig: ssl.truststore.location: open /nonexistent/truststore.jks: no such file or directory; give a file of this machine"},
		{"a JKS key whose password differs, without ssl.key.password", "security.protocol=SSL\nssl.keystore.location=" + stores(t, "keystore.jks") + "\nssl.keystore.password=storepass",
			`the private key "client" cannot be opened with commonConfig: ssl.keystore.password: set ssl.key.password`},
		{"a PEM client key that does not pair with the certificate", "security.protocol=SSL\nssl.keystore.type=PEM\nssl.keystore.location=" + stores(t, "ca.crt"),
			"holds no PEM private key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := writeKafka(t, tt.config)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestWriteSecrets: passwords, tokens and client secrets, inline or from
// files (file:// URLs trimmed as the Java clients trim them), land in
// 0600 files of the private directory.
func TestWriteSecrets(t *testing.T) {
	src := t.TempDir()
	token := filepath.Join(src, "token")
	if err := os.WriteFile(token, []byte("eyJhbGciOiJSUzI1NiJ9.payload.sig\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(src, "key.json")
	if err := os.WriteFile(key, []byte(`{"type":"sn_service_account","client_id":"bench","client_secret":"s3cr3t-client","client_email":"bench@example"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", p, fi.Mode().Perm())
		}
		return string(b)
	}
	mapPulsar := func(client string) *Security {
		t.Helper()
		f, err := Parse([]byte(pulsarHead + "client:\n" + client))
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := MapSecurity(f)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	ds, err := mapPulsar("  authPlugin: token\n  authParams: file://" + token + "\n").Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if ds.Mechanism != "Token" || read(ds.TokenFile) != "eyJhbGciOiJSUzI1NiJ9.payload.sig" || ds.TLS != nil {
		t.Errorf("token from a file: %+v", ds)
	}

	ds, err = mapPulsar("  authPlugin: org.apache.pulsar.client.impl.auth.oauth2.AuthenticationOAuth2\n  authParams: '{\"issuerUrl\":\"https://auth.example\",\"privateKey\":\"file://" + key + "\",\"scope\":\"a b\"}'\n").Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if o := ds.OAuth2; o == nil || o.ClientID != "bench" || o.IssuerURL != "https://auth.example" || o.Scope != "a b" || read(o.ClientSecretFile) != "s3cr3t-client" {
		t.Errorf("OAuth2 from a credentials file: %+v", ds.OAuth2)
	}

	ds, err = mapPulsar("  authPlugin: oauth2\n  authParams: '{\"issuerUrl\":\"https://auth.example\",\"privateKey\":\"data:application/json;base64,eyJjbGllbnRfaWQiOiJiZW5jaCIsImNsaWVudF9zZWNyZXQiOiJzM2NyM3QtY2xpZW50In0=\"}'\n").Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if o := ds.OAuth2; o == nil || o.ClientID != "bench" || read(o.ClientSecretFile) != "s3cr3t-client" {
		t.Errorf("OAuth2 from a data: URL: %+v", ds.OAuth2)
	}

	ds, _, err = writeKafka(t, "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\"alice-secret\";")
	if err != nil {
		t.Fatal(err)
	}
	if ds.Mechanism != "SCRAM-SHA-512" || ds.Username != "alice" || read(ds.PasswordFile) != "alice-secret" || ds.TLS != nil {
		t.Errorf("SCRAM: %+v", ds)
	}

	_, err = mapPulsar("  authPlugin: token\n  authParams: file:///nonexistent/token\n").Write(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "client: authParams: open /nonexistent/token") {
		t.Errorf("a missing token file: %v", err)
	}
	bad := filepath.Join(src, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"client_id":"bench"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = mapPulsar("  authPlugin: oauth2\n  authParams: '{\"issuerUrl\":\"https://auth.example\",\"privateKey\":\"file://" + bad + "\"}'\n").Write(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "client: authParams (privateKey): the credentials lack client_secret") {
		t.Errorf("a credentials file without its secret: %v", err)
	}
}
