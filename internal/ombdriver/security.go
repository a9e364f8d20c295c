package ombdriver

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// Security is what an OMB driver file says about reaching a secured
// cluster: the Java Kafka client's security.protocol, sasl.* and ssl.*
// keys, or the Pulsar client's TLS and authentication keys (OMB's own
// names and the Java client's). It holds the secret material as the file
// gives it (inline values, and files of the machine the file was written
// for), never printed: Write puts each piece into a private directory and
// returns the driver's settings with those paths.
//
// A cluster run never takes it (Map refuses security keys): a ConfigMap is
// not a Secret, and the OMB machine's paths do not exist in the pods.
type Security struct {
	// Keys are the file's keys that set it ("commonConfig: sasl.jaas.config"),
	// sorted; the values are not in them.
	Keys []string
	// Protocol is Kafka's security.protocol (PLAINTEXT, SSL,
	// SASL_PLAINTEXT, SASL_SSL) or Pulsar's scheme (pulsar, pulsar+ssl).
	Protocol string
	// TLS, when set, encrypts the connections.
	TLS *TLS
	// Mechanism is driver.Security's: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512,
	// OAUTHBEARER, Token, OAuth2; empty for none (or a client certificate
	// alone).
	Mechanism string
	// Username of PLAIN and SCRAM (not a secret).
	Username string
	// Password of PLAIN and SCRAM, Token of Pulsar's token.
	Password Secret
	Token    Secret
	// OAuth2 is the client-credentials grant of OAUTHBEARER and OAuth2.
	OAuth2 *OAuth2
}

// TLS is the TLS a driver file asks for.
type TLS struct {
	// Trust is the CAs to trust; nil means the system's (the Java
	// clients' default: the JDK's cacerts).
	Trust *Store
	// Client is the client's certificate and key, for mutual TLS.
	Client *Store
	// SkipHostnameVerification checks the chain but not the name
	// (Kafka's empty ssl.endpoint.identification.algorithm, Pulsar's
	// hostname verification off, its default).
	SkipHostnameVerification bool
	// InsecureSkipVerify accepts any certificate
	// (tlsAllowInsecureConnection).
	InsecureSkipVerify bool
}

// Store is a trust store or key store as a driver file names it: a file
// (PEM, JKS or PKCS12), or PEM written inline.
type Store struct {
	// Key is the file's key that names it.
	Key string
	// Path is a file of this machine; Type its declared type (PEM, JKS,
	// PKCS12; empty: sniffed).
	Path string
	Type string
	// PEM is inline PEM (Kafka's ssl.truststore.certificates,
	// ssl.keystore.certificate.chain).
	PEM Secret
	// KeyPEM is the private key apart from the certificate: inline
	// (ssl.keystore.key) or a file (Pulsar's tlsKeyFilePath).
	KeyPEM Secret
	// Password opens a JKS or PKCS12 store; KeyPassword its private key
	// when it differs (ssl.key.password).
	Password    Secret
	KeyPassword Secret
}

// OAuth2 is a client-credentials grant as a driver file gives it.
type OAuth2 struct {
	TokenEndpoint string
	IssuerURL     string
	// ClientID is given (Kafka's JAAS clientId), or read from KeyFile.
	ClientID     string
	ClientSecret Secret
	// KeyFile is Pulsar's privateKey: a JSON credentials file
	// (client_id, client_secret), as file:// or data: URL.
	KeyFile  Secret
	Scope    string
	Audience string
}

// Secret is one piece of secret material: a value written in the driver
// file, or the path of a file that holds it. It never prints its value
// (%v, %+v, %#v, %s all give the key it came from).
type Secret struct {
	// From is the file's key that gives it.
	From  string
	Path  string
	value string
}

// Set reports whether the file gave it.
func (s Secret) Set() bool { return s.From != "" }

// Format keeps the value out of every print.
func (s Secret) Format(f fmt.State, _ rune) {
	switch {
	case !s.Set():
		fmt.Fprint(f, "<unset>")
	case s.Path != "":
		fmt.Fprintf(f, "<secret in %s, from %s>", s.Path, s.From)
	default:
		fmt.Fprintf(f, "<secret from %s>", s.From)
	}
}

func inline(from, v string) Secret { return Secret{From: from, value: v} }

func inFile(from, p string) Secret { return Secret{From: from, Path: p} }

// fixInCluster is what a cluster run says about a driver file's security.
const fixInCluster = "a driver file's security settings are not read in a cluster: a ConfigMap is not a Secret, and the paths of the machine the file was written for do not exist in the pods; " +
	"remove them and set spec.cluster.existing.tls and spec.cluster.existing.authentication, whose keys come from Secrets " +
	"(streambench run --local --driver maps them on this machine)"

// refuseSecurity is Map's refusal of a file with security keys.
func refuseSecurity(f File) error {
	sec, _, err := MapSecurity(f)
	switch {
	case err != nil:
		return fmt.Errorf("%w\n%s", err, fixInCluster)
	case sec != nil && len(sec.Keys) > 0:
		return fmt.Errorf("%s: %s", strings.Join(sec.Keys, ", "), fixInCluster)
	}
	return nil
}

// MapSecurity reads the security a driver file asks for: nil for a
// plaintext, anonymous client. Keys the Java client would ignore (ssl.*
// under PLAINTEXT, Kerberos keys with another mechanism) or that only tune
// the Java client's login are returned as dropped, with the reason; a key
// that changes the security and cannot be honoured is an error naming it.
// It reads no file: Write does.
func MapSecurity(f File) (*Security, []Dropped, error) {
	switch f.System {
	case "kafka":
		return kafkaSecurity(f)
	case "pulsar":
		return pulsarSecurity(f)
	}
	return nil, nil, nil
}

// isSecurityKey: the key is one MapSecurity reads (not a client setting).
func isSecurityKey(system, section, k string) bool {
	if system == "kafka" {
		return k == "security.protocol" || strings.HasPrefix(k, "sasl.") || strings.HasPrefix(k, "ssl.")
	}
	if section != "client" {
		return false
	}
	return slices.Contains(pulsarSecurityKeys, k) || strings.HasPrefix(k, "authentication.") || strings.HasPrefix(k, "authParamMap.")
}

func merge[M ~map[K]V, K comparable, V any](a, b M) M {
	out := maps.Clone(a)
	if out == nil {
		out = M{}
	}
	maps.Copy(out, b)
	return out
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// fileURL is the path of a file: URL (file:///path, file:/path) or a
// plain path.
func fileURL(s string) (string, error) {
	if !strings.HasPrefix(s, "file:") {
		if strings.Contains(s, "://") {
			return "", fmt.Errorf("%s: want a file:///path (or a path)", strings.SplitN(s, "://", 2)[0]+"://")
		}
		return s, nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Path == "" || (u.Host != "" && u.Host != "localhost") {
		return "", errors.New("want file:///absolute/path")
	}
	return u.Path, nil
}
