package localbrokers

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A local Pulsar's TLS ports and token authentication. The plaintext ports
// stay open beside the TLS ones: the standalone's own clients (the broker
// talking to itself for its system topics, the sample namespace it
// creates, StartPulsar's readiness check) use them, so a broken
// certificate fails the clients of the TLS ports, not the start. With
// token authentication on, every port asks for a token, the plaintext ones
// too.

// PulsarSecurity secures the standalone.
type PulsarSecurity struct {
	// CertFile and KeyFile are the broker's PEM certificate (chain) and
	// its unencrypted PKCS#8 PEM key (RSA or EC). Set, the standalone
	// opens brokerServicePortTls and webServicePortTls (Pulsar.ServiceURLTLS
	// and AdminURLTLS). The certificate must name the host (127.0.0.1).
	CertFile, KeyFile string
	// ClientCAFile is a PEM bundle of the CAs whose client certificates the
	// TLS ports trust (tlsTrustCertsFilePath).
	ClientCAFile string
	// RequireClientCert makes the TLS ports refuse a client without a
	// certificate ClientCAFile trusts (tlsRequireTrustedClientCertOnConnect:
	// mutual TLS). It needs ClientCAFile.
	RequireClientCert bool
	// TokenPublicKeyFile, set, turns on token authentication
	// (AuthenticationProviderToken): a PEM public key ("PUBLIC KEY",
	// PKIX), RSA (tokens signed RS256) or EC (ES256), e.g. an OAuth2
	// issuer's (testoauth's PublicKeyPEMFile), whose access tokens the
	// brokers then accept as tokens.
	TokenPublicKeyFile string
	// AdminToken is a JWT signed by that key for the standalone's own
	// clients (brokerClientAuthenticationParameters) and the readiness
	// check; its subject becomes the only superuser role. Required with
	// TokenPublicKeyFile. A test credential: it is written to a 0600
	// file under Dir.
	AdminToken string
}

// pulsarSecurityKeys are the settings PulsarSecurity owns: BrokerConfig may
// not set them while Security is set.
var pulsarSecurityKeys = []string{
	"tlsCertificateFilePath", "tlsKeyFilePath", "tlsTrustCertsFilePath", "tlsRequireTrustedClientCertOnConnect",
	"tlsAllowInsecureConnection", "authenticationEnabled", "authenticationProviders", "tokenPublicKey",
	"tokenPublicAlg", "tokenSecretKey", "superUserRoles", "brokerClientAuthenticationPlugin",
	"brokerClientAuthenticationParameters", "anonymousUserRole",
}

// check refuses incomplete security before anything is fetched or started.
func (s *PulsarSecurity) check(broker map[string]string) error {
	if s == nil {
		return nil
	}
	for _, k := range pulsarSecurityKeys {
		if _, ok := broker[k]; ok {
			return fmt.Errorf("localbrokers: PulsarOptions.BrokerConfig may not set %s while PulsarOptions.Security is set; Security sets it", k)
		}
	}
	if (s.CertFile == "") != (s.KeyFile == "") {
		return errors.New("localbrokers: PulsarSecurity needs both CertFile and KeyFile (the broker's certificate and its key), or neither")
	}
	if s.CertFile == "" && (s.ClientCAFile != "" || s.RequireClientCert) {
		return errors.New("localbrokers: PulsarSecurity.ClientCAFile and RequireClientCert need the TLS ports: set CertFile and KeyFile")
	}
	if s.RequireClientCert && s.ClientCAFile == "" {
		return errors.New("localbrokers: PulsarSecurity.RequireClientCert needs ClientCAFile (the CAs whose client certificates the brokers trust)")
	}
	if (s.TokenPublicKeyFile == "") != (s.AdminToken == "") {
		return errors.New("localbrokers: PulsarSecurity token authentication needs both TokenPublicKeyFile (the key that verifies tokens) and AdminToken (a token it verifies, for the standalone's own clients)")
	}
	if s.CertFile == "" && s.TokenPublicKeyFile == "" {
		return errors.New("localbrokers: PulsarSecurity is empty; set CertFile and KeyFile (TLS), TokenPublicKeyFile and AdminToken (token authentication), or both")
	}
	return nil
}

func (s *PulsarSecurity) tls() bool { return s != nil && s.CertFile != "" }

// pulsarSecurityConfig is the broker settings of s, writing the key and
// token files they point at under dir. tlsBroker and tlsWeb are the TLS
// ports (used when s has a certificate).
func pulsarSecurityConfig(s *PulsarSecurity, dir string, tlsBroker, tlsWeb int) (map[string]string, error) {
	c := map[string]string{}
	if s == nil {
		return c, nil
	}
	if s.tls() {
		// The standalone runs in its Dir: relative paths would move.
		cert, err := filepath.Abs(s.CertFile)
		if err != nil {
			return nil, err
		}
		key, err := filepath.Abs(s.KeyFile)
		if err != nil {
			return nil, err
		}
		c["brokerServicePortTls"] = strconv.Itoa(tlsBroker)
		c["webServicePortTls"] = strconv.Itoa(tlsWeb)
		c["tlsCertificateFilePath"] = cert
		c["tlsKeyFilePath"] = key
		c["tlsAllowInsecureConnection"] = "false"
		if s.ClientCAFile != "" {
			ca, err := filepath.Abs(s.ClientCAFile)
			if err != nil {
				return nil, err
			}
			c["tlsTrustCertsFilePath"] = ca
		}
		c["tlsRequireTrustedClientCertOnConnect"] = strconv.FormatBool(s.RequireClientCert)
	}
	if s.TokenPublicKeyFile != "" {
		der, alg, err := pulsarTokenKey(s.TokenPublicKeyFile)
		if err != nil {
			return nil, err
		}
		role, err := tokenSubject(s.AdminToken)
		if err != nil {
			return nil, err
		}
		// Pulsar reads tokenPublicKey as DER (AuthTokenUtils.decodePublicKey
		// takes an X509EncodedKeySpec), not PEM.
		keyFile := filepath.Join(dir, "token-public.der")
		if err := os.WriteFile(keyFile, der, 0o600); err != nil {
			return nil, err
		}
		tokenFile := filepath.Join(dir, "admin.token")
		if err := os.WriteFile(tokenFile, []byte(s.AdminToken), 0o600); err != nil {
			return nil, err
		}
		c["authenticationEnabled"] = "true"
		c["authenticationProviders"] = "org.apache.pulsar.broker.authentication.AuthenticationProviderToken"
		c["tokenPublicKey"] = "file://" + keyFile
		c["tokenPublicAlg"] = alg
		c["superUserRoles"] = role
		// The broker's own client (system topics, the standalone's sample
		// namespace) authenticates too.
		c["brokerClientAuthenticationPlugin"] = "org.apache.pulsar.client.impl.auth.AuthenticationToken"
		c["brokerClientAuthenticationParameters"] = "file://" + tokenFile
	}
	return c, nil
}

// pulsarTokenKey reads a PEM public key as DER and names its JWT algorithm.
func pulsarTokenKey(file string) (der []byte, alg string, err error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, "", fmt.Errorf("localbrokers: PulsarSecurity.TokenPublicKeyFile: %w", err)
	}
	blk, _ := pem.Decode(raw)
	if blk == nil || blk.Type != "PUBLIC KEY" {
		return nil, "", fmt.Errorf("localbrokers: PulsarSecurity.TokenPublicKeyFile %s holds no PEM \"PUBLIC KEY\" block", file)
	}
	pub, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, "", fmt.Errorf("localbrokers: PulsarSecurity.TokenPublicKeyFile %s: %w", file, err)
	}
	switch pub.(type) {
	case *rsa.PublicKey:
		return blk.Bytes, "RS256", nil
	case *ecdsa.PublicKey:
		return blk.Bytes, "ES256", nil
	}
	return nil, "", fmt.Errorf("localbrokers: PulsarSecurity.TokenPublicKeyFile %s is a %T; Pulsar's token keys are RSA or EC", file, pub)
}

// tokenSubject is a JWT's sub claim (unverified: the brokers verify).
func tokenSubject(jwt string) (string, error) {
	parts := strings.Split(strings.TrimSpace(jwt), ".")
	if len(parts) != 3 {
		return "", errors.New("localbrokers: PulsarSecurity.AdminToken is not a JWT (header.payload.signature)")
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return "", fmt.Errorf("localbrokers: PulsarSecurity.AdminToken's payload: %w", err)
	}
	var claims struct {
		Sub string `json:"sub"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.Sub == "" {
		return "", errors.New("localbrokers: PulsarSecurity.AdminToken has no sub claim (the role it authenticates)")
	}
	return claims.Sub, nil
}

// ServiceURLTLS is the TLS binary protocol endpoint (pulsar+ssl://), when
// Security has a certificate; empty otherwise.
func (p *Pulsar) ServiceURLTLS() string {
	if p.TLSBrokerPort == 0 {
		return ""
	}
	return fmt.Sprintf("pulsar+ssl://%s:%d", p.hostname(), p.TLSBrokerPort)
}

// AdminURLTLS is the TLS admin REST endpoint (https://), when Security has
// a certificate; empty otherwise.
func (p *Pulsar) AdminURLTLS() string {
	if p.TLSWebPort == 0 {
		return ""
	}
	return fmt.Sprintf("https://%s:%d", p.hostname(), p.TLSWebPort)
}

// authorize adds the admin token to StartPulsar's own admin requests.
func (p *Pulsar) authorize(r *http.Request) {
	if p.adminToken != "" {
		r.Header.Set("Authorization", "Bearer "+p.adminToken)
	}
}
