package pulsar

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// A managed Pulsar run's TLS and token authentication
// (spec.cluster.managed.security), through the chart's own switches: TLS
// for the brokers (tls.enabled, tls.broker.enabled; the proxy is off, and
// ZooKeeper's and the bookies' TLS stay off: the clients under test talk
// to the brokers only) and JWT authentication with a symmetric key
// (auth.authentication.jwt, usingSecretKey).
//
// The chart expects cert-manager to write the certificate Secrets and a
// pre-install hook (a kubectl image, and a Role the operator would have to
// grant) to write the token Secrets. Neither is assumed here: the operator
// makes every Secret itself, before the install, under the names and keys
// the chart mounts (Secrets), and the post-render leaves out the chart's
// cert-manager Certificate (CertificateRenderer).

// Security is what a managed Pulsar run's brokers are asked for.
type Security struct {
	// TLS opens the brokers' TLS ports (6651, 8443), which the clients use.
	TLS bool
	// Token turns on the brokers' JWT authentication; the clients present
	// a token of their own role.
	Token bool
}

// On says whether any of it is asked for.
func (s Security) On() bool { return s.TLS || s.Token }

// SecurityOf is the run's Security; the zero value for an existing cluster
// or a managed one without spec.cluster.managed.security.
func SecurityOf(run *v1alpha1.BenchmarkRun) Security {
	m := run.Spec.Cluster.Managed
	if m == nil || m.Security == nil {
		return Security{}
	}
	return Security{TLS: m.Security.TLS, Token: m.Security.Authentication == v1alpha1.ManagedAuthToken}
}

// checkSecurity refuses what the chart's Pulsar cannot be asked for.
func checkSecurity(m *v1alpha1.ManagedCluster) error {
	if m.Security == nil {
		return nil
	}
	switch a := m.Security.Authentication; a {
	case "", v1alpha1.ManagedAuthToken:
		return nil
	default:
		return fmt.Errorf("spec.cluster.managed.security.authentication %q is a Kafka user's (Strimzi KafkaUser); a managed Pulsar takes token, or none", a)
	}
}

// Ports of the brokers' TLS listeners (the chart's broker.ports.pulsarssl
// and https defaults).
const (
	BrokerServicePortTLS = 6651
	BrokerHTTPSPort      = 8443
)

// ClusterDomain is the chart's clusterDomain, which Values leaves at its
// default; the brokers' certificate names their pods' addresses in it.
const ClusterDomain = "cluster.local"

// Names of the Secrets, as the chart (4.7.0) mounts them.
const (
	// brokerCertName is the chart's tls.broker.cert_name default: the
	// brokers mount Secret <release>-tls-broker (tls.crt, tls.key).
	brokerCertName = "tls-broker"
	// caSuffix is the chart's tls.ca_suffix: with cert-manager the CA's
	// Secret is <release>-ca-tls. Values names it in
	// certs.issuers.ca.secretName, which every component's "ca" volume
	// mounts (key ca.crt).
	caSuffix = "ca-tls"
)

// Keys of the Secrets: those the chart mounts, and those cert-manager
// writes into a certificate's Secret.
const (
	KeyCA        = "ca.crt"
	KeyTLSCert   = corev1.TLSCertKey       // tls.crt
	KeyTLSKey    = corev1.TLSPrivateKeyKey // tls.key
	KeySecretKey = "SECRETKEY"
	KeyToken     = "TOKEN"
)

// Token subjects (roles). The broker's, the proxy's and the admin client's
// are the chart's auth.superUsers defaults, whose tokens the chart mounts
// as Secret <release>-token-<subject> (the broker's into every broker, for
// its own client; the proxy's and the admin's into the proxy and the
// toolset, both off here, made all the same so that a pulsar-admin in a
// broker pod has a token at hand). The benchmark's clients get a role of
// their own.
const (
	SubjectBroker    = "broker-admin"
	SubjectProxy     = "proxy-admin"
	SubjectAdmin     = "admin"
	SubjectBenchmark = "streambench"
)

// CASecretName holds the CA's certificate (ca.crt), which the brokers'
// certificate chains to and the clients trust.
func CASecretName(release string) string { return release + "-" + caSuffix }

// BrokerCertSecretName holds the brokers' certificate and key.
func BrokerCertSecretName(release string) string { return release + "-" + brokerCertName }

// TokenKeySecretName holds the key that signs and verifies the tokens (the
// chart's usingSecretKey).
func TokenKeySecretName(release string) string { return release + "-token-symmetric-key" }

// TokenSecretName holds the token of subject.
func TokenSecretName(release, subject string) string { return release + "-token-" + subject }

// SecretNames are the names of the Secrets Secrets makes for the run, in
// the order it makes them.
func SecretNames(run *v1alpha1.BenchmarkRun) []string {
	sec, rel := SecurityOf(run), ReleaseName(run)
	var names []string
	if sec.TLS {
		names = append(names, CASecretName(rel), BrokerCertSecretName(rel))
	}
	if sec.Token {
		names = append(names, TokenKeySecretName(rel))
		for _, s := range tokenSubjects {
			names = append(names, TokenSecretName(rel, s))
		}
	}
	return names
}

var tokenSubjects = []string{SubjectBroker, SubjectProxy, SubjectAdmin, SubjectBenchmark}

// Labels on the Secrets a run makes.
const (
	LabelRun       = "streambench.io/run"
	LabelManagedBy = "app.kubernetes.io/managed-by"
)

// certValidity is how long the certificates are valid. The CA's key is
// thrown away once the brokers' certificate is signed, and every Secret
// goes with the run, so the span only has to outlast the longest run.
const certValidity = 365 * 24 * time.Hour

// securityValues are the chart values of sec for release.
func securityValues(sec Security, release string) map[string]any {
	vals := map[string]any{}
	if sec.TLS {
		vals["tls"] = map[string]any{
			"enabled": true,
			"broker":  map[string]any{"enabled": true},
		}
		vals["certs"] = map[string]any{
			// No cert-manager: the operator writes the Secrets.
			"internal_issuer": map[string]any{"enabled": false},
			"issuers": map[string]any{"ca": map[string]any{
				// The chart fails without an issuer name; it appears only
				// in the Certificate the post-render leaves out.
				"name":       CASecretName(release),
				"secretName": CASecretName(release),
			}},
		}
	}
	if sec.Token {
		// auth.authentication.provider is refused by chart 4.x (its
		// _values_validation.tpl): jwt.enabled is the switch.
		// Authorization stays off, as the chart's default: any client
		// with a valid token may produce and consume, and the benchmark's
		// role needs no grant.
		vals["auth"] = map[string]any{"authentication": map[string]any{
			"enabled": true,
			"jwt":     map[string]any{"enabled": true, "usingSecretKey": true},
		}}
	}
	return vals
}

// brokerSecurityKeys are the broker settings the chart's tls and auth
// values write; spec.cluster.managed.brokerConfig may not set them while
// spec.cluster.managed.security is set, since the overlay would undo
// them without a word.
var brokerSecurityKeys = []string{
	"brokerServicePortTls", "webServicePortTls", "tlsCertificateFilePath", "tlsKeyFilePath", "tlsTrustCertsFilePath",
	"authenticationEnabled", "authenticationProviders", "authorizationEnabled", "superUserRoles", "proxyRoles",
	"brokerClientAuthenticationPlugin", "brokerClientAuthenticationParameters", "tokenSecretKey", "tokenPublicKey",
	"brokerServicePort", "webServicePort", "anonymousUserRole", "tlsAllowInsecureConnection",
}

func checkSecurityOverlay(sec Security, overlay map[string]string) error {
	if !sec.On() {
		return nil
	}
	var errs []error
	for _, k := range brokerSecurityKeys {
		for _, key := range []string{k, PulsarPrefix + k} {
			if _, ok := overlay[key]; ok {
				errs = append(errs, fmt.Errorf("spec.cluster.managed.brokerConfig sets %s, which spec.cluster.managed.security sets; remove it from brokerConfig", key))
			}
		}
	}
	return errors.Join(errs...)
}

// Secrets are the Secrets a secured managed Pulsar run's brokers and
// clients read, made fresh (new keys) each call, owned by nobody yet (the
// caller sets the owner): with TLS a CA (ca.crt) and the brokers'
// certificate (kubernetes.io/tls: tls.crt, tls.key and ca.crt, as
// cert-manager writes a certificate's Secret), named and keyed as the
// chart mounts them; with token authentication the signing key
// (SECRETKEY) and a token (TOKEN) for each subject. nil without security.
//
// The brokers' certificate names every address a client may be sent to:
// the broker Service (the workers' service and admin URLs), and each
// broker pod under the headless Service (the address a topic lookup
// returns: the broker advertises its pod's name), with and without the
// cluster domain. The keys are ECDSA P-256 (PKCS#8, which Pulsar reads):
// quick to make in a reconcile, and the handshake costs less than RSA's
// 4096 bits the chart's cert-manager setup defaults to; a benchmark's few
// connections per client make that difference small either way.
func Secrets(run *v1alpha1.BenchmarkRun, now time.Time) ([]*corev1.Secret, error) {
	sec := SecurityOf(run)
	if !sec.On() {
		return nil, nil
	}
	rel := ReleaseName(run)
	secret := func(name string, typ corev1.SecretType, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: run.Namespace,
				Labels: map[string]string{LabelRun: run.Name, LabelManagedBy: "streambench"},
			},
			Type: typ,
			Data: data,
		}
	}
	var out []*corev1.Secret
	if sec.TLS {
		caPEM, certPEM, keyPEM, err := brokerCertificate(rel, run.Namespace, now)
		if err != nil {
			return nil, fmt.Errorf("the brokers' certificate: %w", err)
		}
		out = append(out,
			secret(CASecretName(rel), corev1.SecretTypeOpaque, map[string][]byte{KeyCA: caPEM}),
			secret(BrokerCertSecretName(rel), corev1.SecretTypeTLS, map[string][]byte{KeyTLSCert: certPEM, KeyTLSKey: keyPEM, KeyCA: caPEM}))
	}
	if sec.Token {
		// 256 bits: what HS256 needs (Pulsar's bin/pulsar tokens
		// create-secret-key makes the same), read raw from the file.
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		out = append(out, secret(TokenKeySecretName(rel), corev1.SecretTypeOpaque, map[string][]byte{KeySecretKey: key}))
		for _, s := range tokenSubjects {
			out = append(out, secret(TokenSecretName(rel, s), corev1.SecretTypeOpaque, map[string][]byte{KeyToken: []byte(SignHS256(key, s))}))
		}
	}
	return out, nil
}

// BrokerDNSNames are the names the brokers' certificate is valid for.
func BrokerDNSNames(release, namespace string) []string {
	svc := release + "-" + ComponentBroker
	headless := svc + "-headless"
	var names []string
	for _, suffix := range []string{".svc", ".svc." + ClusterDomain} {
		names = append(names,
			svc+"."+namespace+suffix,
			headless+"."+namespace+suffix,
			"*."+headless+"."+namespace+suffix)
	}
	return append(names, svc, svc+"."+namespace)
}

// brokerCertificate makes a CA and the brokers' certificate signed by it,
// in PEM; the CA's key is not kept.
func brokerCertificate(release, namespace string, now time.Time) (caPEM, certPEM, keyPEM []byte, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serialNumber(),
		Subject:               pkix.Name{CommonName: release + " CA", Organization: []string{"streambench"}},
		NotBefore:             now.Add(-time.Hour), // clocks of other nodes may lag
		NotAfter:              now.Add(certValidity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serialNumber(),
		Subject:      pkix.Name{CommonName: release + "-" + ComponentBroker, Organization: []string{"streambench"}},
		DNSNames:     BrokerDNSNames(release, namespace),
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		// As the chart's Certificate: server auth, and client auth for a
		// broker that talks TLS to another.
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), nil
}

func serialNumber() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}

// SignHS256 is a JWT for subject signed with key (HS256), as Pulsar's
// bin/pulsar tokens create --secret-key makes one: the sub claim, no
// expiry (the key, and with it every token, goes with the run).
func SignHS256(key []byte, subject string) string {
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	claims, _ := json.Marshal(map[string]string{"sub": subject}) // a string map always marshals
	signing := header + "." + enc.EncodeToString(claims)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(signing))
	return signing + "." + enc.EncodeToString(mac.Sum(nil))
}

// SecretsComplete says whether have (the names of the run's Secrets that
// exist) holds every Secret the run needs. A partial set (an operator
// that stopped between two creates) is made again whole: the CA's key is
// gone, so a missing certificate cannot be signed by the CA that exists.
func SecretsComplete(run *v1alpha1.BenchmarkRun, have []string) bool {
	for _, n := range SecretNames(run) {
		if !slices.Contains(have, n) {
			return false
		}
	}
	return true
}
