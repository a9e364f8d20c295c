package localbrokers

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/internal/testcerts"
	"github.com/streambench/streambench-operator/internal/testoauth"
)

// The secured standalone itself runs in internal/coordinator's
// TestPulsarSecurity (TLS and token authentication, workloads and wrong
// configurations); these are the settings it starts with.

func TestPulsarSecurityRefuses(t *testing.T) {
	tok := unsignedJWT(`{"sub":"admin"}`)
	tests := []struct {
		name   string
		s      PulsarSecurity
		broker map[string]string
		want   string
	}{
		{"empty", PulsarSecurity{}, nil, "PulsarSecurity is empty"},
		{"cert without key", PulsarSecurity{CertFile: "c"}, nil, "both CertFile and KeyFile"},
		{"client CA without TLS", PulsarSecurity{ClientCAFile: "ca", TokenPublicKeyFile: "k", AdminToken: tok}, nil, "need the TLS ports"},
		{"client cert required without CA", PulsarSecurity{CertFile: "c", KeyFile: "k", RequireClientCert: true}, nil, "RequireClientCert needs ClientCAFile"},
		{"key without admin token", PulsarSecurity{TokenPublicKeyFile: "k"}, nil, "both TokenPublicKeyFile"},
		{"broker config sets a security key", PulsarSecurity{CertFile: "c", KeyFile: "k"}, map[string]string{"authenticationEnabled": "false"}, "may not set authenticationEnabled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.s.check(tt.broker)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("check = %v; want an error with %q", err, tt.want)
			}
		})
	}
	var none *PulsarSecurity
	if err := none.check(map[string]string{"authenticationEnabled": "true"}); err != nil {
		t.Errorf("no Security: %v", err)
	}
}

func unsignedJWT(claims string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"RS256"}`)) + "." + enc.EncodeToString([]byte(claims)) + "." + enc.EncodeToString([]byte("sig"))
}

// TLS and token settings: the ports, the files, the key as DER (Pulsar's
// tokenPublicKey takes no PEM), the algorithm of the key's type, the admin
// token's subject as the superuser, the broker's own client with the token.
func TestPulsarSecurityConfig(t *testing.T) {
	dir := t.TempDir()
	ca, err := testcerts.NewCA(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Issue("broker", testcerts.Options{Names: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	issuer, err := testoauth.Start(dir, "c", "s", "")
	if err != nil {
		t.Fatal(err)
	}
	defer issuer.Close()
	admin := issuer.Mint("the-admin", time.Hour)
	s := &PulsarSecurity{CertFile: cert.CertFile, KeyFile: cert.KeyFile, ClientCAFile: ca.CertFile, RequireClientCert: true,
		TokenPublicKeyFile: issuer.PublicKeyPEMFile, AdminToken: admin}
	if err := s.check(nil); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	c, err := pulsarSecurityConfig(s, out, 6651, 8443)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(out, "token-public.der")
	tokenFile := filepath.Join(out, "admin.token")
	for k, want := range map[string]string{
		"brokerServicePortTls": "6651", "webServicePortTls": "8443",
		"tlsCertificateFilePath": cert.CertFile, "tlsKeyFilePath": cert.KeyFile, "tlsTrustCertsFilePath": ca.CertFile,
		"tlsRequireTrustedClientCertOnConnect": "true", "tlsAllowInsecureConnection": "false",
		"authenticationEnabled":   "true",
		"authenticationProviders": "org.apache.pulsar.broker.authentication.AuthenticationProviderToken",
		"tokenPublicKey":          "file://" + keyFile, "tokenPublicAlg": "RS256", "superUserRoles": "the-admin",
		"brokerClientAuthenticationPlugin":     "org.apache.pulsar.client.impl.auth.AuthenticationToken",
		"brokerClientAuthenticationParameters": "file://" + tokenFile,
	} {
		if c[k] != want {
			t.Errorf("%s = %q; want %q", k, c[k], want)
		}
	}
	der, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	pemRaw, _ := os.ReadFile(issuer.PublicKeyPEMFile)
	blk, _ := pem.Decode(pemRaw)
	if !bytes.Equal(der, blk.Bytes) {
		t.Error("token-public.der is not the PEM key's DER")
	}
	if got, _ := os.ReadFile(tokenFile); string(got) != admin {
		t.Error("admin.token is not the admin token")
	}
	for _, f := range []string{keyFile, tokenFile} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want 0600", f, err, fi.Mode().Perm())
		}
	}

	// An EC key signs ES256.
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	ecFile := filepath.Join(dir, "ec.pem")
	if err := os.WriteFile(ecFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: ecDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = pulsarSecurityConfig(&PulsarSecurity{TokenPublicKeyFile: ecFile, AdminToken: admin}, t.TempDir(), 0, 0)
	if err != nil || c["tokenPublicAlg"] != "ES256" || c["brokerServicePortTls"] != "" {
		t.Errorf("EC key: %v, %v", err, c)
	}

	for name, bad := range map[string]string{"not a JWT": "abc", "no subject": unsignedJWT(`{"exp":1}`)} {
		if _, err := pulsarSecurityConfig(&PulsarSecurity{TokenPublicKeyFile: ecFile, AdminToken: bad}, t.TempDir(), 0, 0); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Fewer than 3 bookies lower the default persistence so the standalone
// can make its topics; what BrokerConfig says wins.
func TestPulsarQuorumDefaults(t *testing.T) {
	got := pulsarQuorumDefaults(map[string]string{"managedLedgerDefaultAckQuorum": "1", "x": "y"}, 2)
	want := map[string]string{"managedLedgerDefaultEnsembleSize": "2", "managedLedgerDefaultWriteQuorum": "2", "managedLedgerDefaultAckQuorum": "1", "x": "y"}
	if len(got) != len(want) {
		t.Errorf("got %v; want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q; want %q", k, got[k], v)
		}
	}
	if got := pulsarQuorumDefaults(map[string]string{"x": "y"}, 3); len(got) != 1 {
		t.Errorf("3 bookies changed the config: %v", got)
	}
	if got := pulsarQuorumDefaults(nil, 1); got["managedLedgerDefaultAckQuorum"] != "1" {
		t.Errorf("1 bookie: %v", got)
	}
}
