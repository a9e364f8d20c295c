package pulsar

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/apache/pulsar-client-go/pulsar/auth"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
)

// Spec fields named by errors, so a message says what to fix where the user
// wrote it (local mode maps the same fields to files).
const (
	fieldTLS          = "spec.cluster.existing.tls"
	fieldCA           = "spec.cluster.existing.tls.ca"
	fieldAuth         = "spec.cluster.existing.authentication"
	fieldToken        = "spec.cluster.existing.authentication.token"
	fieldOAuth2       = "spec.cluster.existing.authentication.oauth2"
	fieldClientSecret = "spec.cluster.existing.authentication.oauth2.clientSecret"
	fieldServiceURL   = "spec.cluster.existing.serviceURL"
	fieldAdminURL     = "spec.cluster.existing.adminURL"
)

// clientSecurity is driver.Config.Security made into what the data client
// (pulsar.ClientOptions.TLSConfig and Authentication) and the admin client
// (an HTTP transport and an Authorization header) take. One auth provider
// serves both, so an OAuth2 run asks its issuer for one token, not two.
type clientSecurity struct {
	files *driver.Security
	// tlsFiles is files.TLS, or the system's roots when a pulsar+ssl:// or
	// https:// URL came without spec.cluster.existing.tls; nil: plaintext.
	tlsFiles *driver.TLSFiles
	tls      *tls.Config
	neg      *driver.NegotiatedTLS
	// auth is nil for an anonymous client.
	auth auth.Provider
	// mechanism is what the results call it: Token, OAuth2, TLS (a client
	// certificate alone) or empty.
	mechanism string
	// token is the Token mechanism's JWT as read at New, for explanations
	// (its subject and expiry) and to keep it out of every error.
	token *tokenInfo
	// secrets are the values no error may carry (the token, the client
	// secret): errors from libraries are scrubbed of them.
	secrets []string
}

// newClientSecurity reads sec's files and builds the TLS configuration
// (with sec.TLS, or the system's roots when useTLS says the URLs are
// pulsar+ssl:// and https:// without spec.cluster.existing.tls: a cluster
// with a publicly trusted certificate, as StreamNative Cloud's) and the auth
// provider. It makes no connection; check does.
func newClientSecurity(sec *driver.Security, useTLS bool) (*clientSecurity, error) {
	s := &clientSecurity{files: sec}
	if sec != nil {
		s.tlsFiles = sec.TLS
	}
	if s.tlsFiles == nil && useTLS {
		s.tlsFiles = &driver.TLSFiles{}
	}
	if s.tlsFiles != nil {
		var err error
		if s.tls, s.neg, err = driver.TLSConfig(s.tlsFiles); err != nil {
			return nil, fmt.Errorf("pulsar driver: %w", err)
		}
	}
	if err := s.authentication(); err != nil {
		return nil, err
	}
	return s, nil
}

// usesTLS says whether the clients use TLS: spec.cluster.existing.tls is
// set, or a URL asks for it. TLS on one URL and not the other is refused
// (schemes).
func usesTLS(sec *driver.Security, b v1alpha1.BrokerEndpoints) bool {
	return (sec != nil && sec.TLS != nil) || strings.HasPrefix(b.ServiceURL, "pulsar+ssl://") || strings.HasPrefix(b.AdminURL, "https://")
}

// schemes refuses URLs that do not match the TLS setting: the client would
// speak plaintext to a TLS port (or TLS to a plaintext one) and retry until
// its operation timeout.
func schemes(useTLS bool, b v1alpha1.BrokerEndpoints) error {
	if !useTLS {
		return nil
	}
	if !strings.HasPrefix(b.ServiceURL, "pulsar+ssl://") {
		return fmt.Errorf("pulsar driver: TLS is on (%s, or an https:// admin URL) but the service URL %s is plaintext; use the brokers' TLS port as pulsar+ssl://host:6651 (brokerServicePortTls) in %s", fieldTLS, b.ServiceURL, fieldServiceURL)
	}
	if !strings.HasPrefix(b.AdminURL, "https://") {
		return fmt.Errorf("pulsar driver: TLS is on (%s, or a pulsar+ssl:// service URL) but the admin URL %s is plaintext; use the brokers' TLS web port as https://host:8443 (webServicePortTls) in %s", fieldTLS, b.AdminURL, fieldAdminURL)
	}
	return nil
}

// authentication picks the auth provider of the mechanism.
func (s *clientSecurity) authentication() error {
	sec := s.files
	mech := ""
	if sec != nil {
		mech = sec.Mechanism
	}
	switch mech {
	case "":
		if s.tlsFiles != nil && s.tlsFiles.CertFile != "" {
			// The certificate is in s.tls already; the provider makes
			// the client say "tls" in its CONNECT, which a broker with
			// AuthenticationProviderTls needs to take the certificate
			// as the client's identity.
			s.auth = auth.NewAuthenticationTLS(s.tlsFiles.CertFile, s.tlsFiles.KeyFile)
			s.mechanism = "TLS"
		}
		return nil
	case string(v1alpha1.AuthToken):
		if sec.TokenFile == "" {
			return fmt.Errorf("pulsar driver: mechanism Token needs %s (a Secret key holding the JWT)", fieldToken)
		}
		t, err := readToken(sec.TokenFile)
		if err != nil {
			return err
		}
		s.token = t
		s.secrets = append(s.secrets, t.raw)
		if err := t.checkTime(sec.TokenFile, time.Now()); err != nil {
			return err
		}
		// From the file, read again at every connection: a Secret
		// updated with a fresh token reaches the clients.
		s.auth = auth.NewAuthenticationTokenFromFile(sec.TokenFile)
		s.mechanism = string(v1alpha1.AuthToken)
		return nil
	case string(v1alpha1.AuthOAuth2):
		p, secret, err := oauth2Provider(sec.OAuth2)
		if err != nil {
			return err
		}
		s.secrets = append(s.secrets, secret)
		s.auth = p
		s.mechanism = string(v1alpha1.AuthOAuth2)
		return nil
	}
	return fmt.Errorf("pulsar driver: %s.mechanism %q does not apply to Pulsar; it takes Token or OAuth2 (PLAIN, SCRAM and OAUTHBEARER are Kafka's)", fieldAuth, mech)
}

// oauth2Provider is pulsar-client-go's OAuth2 client-credentials plugin
// (what the Java client's AuthenticationOAuth2 is). Its "private key" is a
// JSON key file with the client id and secret; it is given as a data: URL
// (the plugin reads data: URLs, oauth2/client_credentials_provider.go), so
// the secret never lands in a file of our own that would need removing.
func oauth2Provider(o *driver.OAuth2Files) (auth.Provider, string, error) {
	if o == nil {
		return nil, "", fmt.Errorf("pulsar driver: mechanism OAuth2 needs %s (the client-credentials grant)", fieldOAuth2)
	}
	if o.IssuerURL == "" {
		return nil, "", fmt.Errorf("pulsar driver: %s.issuerURL is empty; Pulsar's OAuth2 client (Go and Java alike) finds the token endpoint in the issuer's /.well-known/openid-configuration: set issuerURL (tokenEndpoint alone is enough for Kafka only)", fieldOAuth2)
	}
	if o.ClientID == "" {
		return nil, "", fmt.Errorf("pulsar driver: %s.clientID is empty; set the OAuth2 client's id", fieldOAuth2)
	}
	raw, err := os.ReadFile(o.ClientSecretFile)
	if err != nil {
		return nil, "", fmt.Errorf("pulsar driver: reading the OAuth2 client secret (%s): %v; the Secret key is missing or not mounted: create it with client %s's secret", fieldClientSecret, pathErr(err), o.ClientID)
	}
	secret := strings.TrimSpace(string(raw))
	if secret == "" {
		return nil, "", fmt.Errorf("pulsar driver: the OAuth2 client secret (%s) in %s is empty; put client %s's secret in the Secret key", fieldClientSecret, o.ClientSecretFile, o.ClientID)
	}
	key, _ := json.Marshal(map[string]string{
		"type": auth.ConfigParamTypeClientCredentials, "client_id": o.ClientID, "client_secret": secret, "issuer_url": o.IssuerURL,
	})
	p, err := auth.NewAuthenticationOAuth2WithParams(map[string]string{
		auth.ConfigParamType:      auth.ConfigParamTypeClientCredentials,
		auth.ConfigParamIssuerURL: o.IssuerURL,
		auth.ConfigParamClientID:  o.ClientID,
		auth.ConfigParamAudience:  o.Audience,
		auth.ConfigParamScope:     o.Scope,
		auth.ConfigParamKeyFile:   "data:application/json;base64," + base64.StdEncoding.EncodeToString(key),
	})
	if err != nil {
		return nil, "", fmt.Errorf("pulsar driver: OAuth2 client %s: %v", o.ClientID, err)
	}
	return p, secret, nil
}

// pathErr is an *os.PathError without its operation, e.g. "/x/token: no
// such file or directory".
func pathErr(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Path + ": " + pe.Err.Error()
	}
	return err.Error()
}

// tokenInfo is what a Pulsar token says about itself (its claims, read
// without verifying the signature: only the brokers can), to explain a
// refusal before or after the brokers give one.
type tokenInfo struct {
	raw     string
	subject string
	expires time.Time // zero: no exp claim (Pulsar tokens may have none)
	jwt     bool
}

// readToken reads a token file. A file that is missing or empty is an
// error; a token that is not a JWT is passed on (the brokers decide), only
// without the expiry check.
func readToken(path string) (*tokenInfo, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pulsar driver: reading the token (%s): %v; the Secret key is missing or not mounted: create it with the JWT the cluster issued (bin/pulsar tokens create, or your provider's console)", fieldToken, pathErr(err))
	}
	t := &tokenInfo{raw: strings.TrimSpace(string(raw))}
	if t.raw == "" {
		return nil, fmt.Errorf("pulsar driver: the token file %s (%s) is empty; put the JWT in the Secret key", path, fieldToken)
	}
	parts := strings.Split(t.raw, ".")
	if len(parts) != 3 {
		return t, nil
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return t, nil
	}
	var claims struct {
		Sub string   `json:"sub"`
		Exp *float64 `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil {
		return t, nil
	}
	t.jwt, t.subject = true, claims.Sub
	if claims.Exp != nil {
		t.expires = time.Unix(int64(*claims.Exp), 0).UTC()
	}
	return t, nil
}

// checkTime refuses a token whose exp claim has passed: the brokers would
// refuse it (Pulsar allows no clock skew by default), and the client would
// retry until its operation timeout instead of saying so.
func (t *tokenInfo) checkTime(path string, now time.Time) error {
	if t.expires.IsZero() || now.Before(t.expires) {
		return nil
	}
	return fmt.Errorf("pulsar driver: the token in %s (%s, subject %q) expired at %s (%s ago); issue a new one (bin/pulsar tokens create --subject %s ...) and update the Secret key", path, fieldToken, t.subject, t.expires.Format(time.RFC3339), now.Sub(t.expires).Round(time.Second), orUnknown(t.subject))
}

func orUnknown(s string) string {
	if s == "" {
		return "<role>"
	}
	return s
}

// refused explains a refusal by the brokers (HTTP 401, or the binary
// protocol's AuthenticationError) for the mechanism the client used.
func (s *clientSecurity) refused(where string) error {
	switch s.mechanism {
	case "":
		return fmt.Errorf("pulsar driver: %s requires authentication and the run gives none; set %s (mechanism Token with a token Secret key, or OAuth2 with a client-credentials grant)", where, fieldAuth)
	case "TLS":
		return fmt.Errorf("pulsar driver: %s refused the client certificate as the client's identity; give a certificate the brokers' tlsTrustCertsFilePath trusts with AuthenticationProviderTls enabled, or set %s (Token or OAuth2)", where, fieldAuth)
	case string(v1alpha1.AuthToken):
		sub, exp := "unknown", "no expiry"
		if s.token != nil && s.token.jwt {
			sub = fmt.Sprintf("%q", s.token.subject)
			if !s.token.expires.IsZero() {
				exp = "valid until " + s.token.expires.Format(time.RFC3339)
			}
		}
		return fmt.Errorf("pulsar driver: %s refused the token in %s (%s; subject %s, %s): it is not signed by the key the brokers verify with (their tokenPublicKey or tokenSecretKey), or it lacks the audience they require (tokenAudience); issue a token with the cluster's own signing key and put it in the Secret key", where, s.files.TokenFile, fieldToken, sub, exp)
	case string(v1alpha1.AuthOAuth2):
		o := s.files.OAuth2
		return fmt.Errorf("pulsar driver: %s refused the access token that issuer %s granted client %s: the brokers do not verify tokens with this issuer's signing key (their tokenPublicKey), or expect another audience (their tokenAudience; %s.audience asks for one); point the brokers at the issuer's key or use the issuer the cluster trusts", where, o.IssuerURL, o.ClientID, fieldOAuth2)
	}
	return fmt.Errorf("pulsar driver: %s refused the client's credentials", where)
}

// scrub removes every secret value from err's text, as a last guard: a
// library's error could quote what it was given.
func (s *clientSecurity) scrub(err error) error {
	if err == nil || s == nil {
		return err
	}
	msg := err.Error()
	changed := false
	for _, v := range s.secrets {
		if v != "" && strings.Contains(msg, v) {
			msg = strings.ReplaceAll(msg, v, "[redacted]")
			changed = true
		}
	}
	if !changed {
		return err
	}
	return errors.New(msg)
}

// authorize sets the Authorization header of an admin request: the
// token or OAuth2 access token, as Bearer. A client certificate needs no
// header (the TLS connection carries it).
func (s *clientSecurity) authorize(r *http.Request) error {
	if s.auth == nil || s.auth.Name() == "tls" {
		return nil
	}
	data, err := s.auth.GetData()
	if err != nil {
		return s.scrub(err)
	}
	if len(data) > 0 {
		r.Header.Set("Authorization", "Bearer "+string(data))
	}
	return nil
}

// transport is the admin clients' HTTP transport: the TLS configuration,
// and an Authorization header on every request.
func (s *clientSecurity) transport() *adminTransport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = s.tls
	t.MaxIdleConnsPerHost = 10
	t.TLSHandshakeTimeout = checkTimeout
	return &adminTransport{base: t, authorize: s.authorize}
}

// adminTransport adds the credentials to each request. It is also
// pulsaradmin's auth.Provider (RoundTrip, Transport, WithTransport).
type adminTransport struct {
	base      http.RoundTripper
	authorize func(*http.Request) error
}

func (a *adminTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	// A RoundTripper must not change the caller's request.
	r = r.Clone(r.Context())
	if err := a.authorize(r); err != nil {
		return nil, err
	}
	return a.base.RoundTrip(r)
}

func (a *adminTransport) Transport() http.RoundTripper      { return a.base }
func (a *adminTransport) WithTransport(t http.RoundTripper) { a.base = t }

// AdminHTTP is an HTTP client for the Pulsar admin REST API secured as sec
// says (TLS, and the token or OAuth2 access token as a Bearer header), for
// code that calls the admin API itself (internal/driver/inspect). The
// client sets the header on every request; authorize sets it on one, for
// requests sent another way. Both are idempotent. It makes no connection
// except, for OAuth2, the issuer's when the first request needs a token.
// A nil sec is plaintext and anonymous (an https:// URL still verifies
// against the system's roots).
func AdminHTTP(sec *driver.Security) (*http.Client, func(*http.Request) error, error) {
	s, err := newClientSecurity(sec, false)
	if err != nil {
		return nil, nil, err
	}
	if s.auth != nil {
		if err := s.auth.Init(); err != nil {
			return nil, nil, s.scrub(fmt.Errorf("pulsar driver: %s: %w", fieldAuth, err))
		}
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: s.transport()}, s.authorize, nil
}

// SecurityInfo is the security the clients negotiated, for the results.
func (d *Driver) SecurityInfo() v1alpha1.SecurityInfo {
	s := d.sec
	info := v1alpha1.SecurityInfo{Protocol: "pulsar", Mechanism: s.mechanism}
	if s.tlsFiles != nil {
		info.Protocol = "pulsar+ssl"
		info.TLSVersion = s.neg.Version()
		info.ClientCertificate = s.tlsFiles.CertFile != ""
		info.Verification = s.tlsFiles.Verification()
	}
	return info
}

var _ driver.SecurityDescriber = (*Driver)(nil)

// serviceAddr is host:port of the service URL's first host (the one the
// client bootstraps from), with Pulsar's default ports.
func serviceAddr(serviceURL string) (string, error) {
	rest, ok := strings.CutPrefix(serviceURL, "pulsar+ssl://")
	port := "6651"
	if !ok {
		if rest, ok = strings.CutPrefix(serviceURL, "pulsar://"); !ok {
			return "", fmt.Errorf("pulsar driver: service URL %q must start with pulsar:// or pulsar+ssl:// (%s)", serviceURL, fieldServiceURL)
		}
		port = "6650"
	}
	host, _, _ := strings.Cut(rest, ",")
	host, _, _ = strings.Cut(host, "/")
	if host == "" {
		return "", fmt.Errorf("pulsar driver: service URL %q has no host (%s)", serviceURL, fieldServiceURL)
	}
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(strings.Trim(host, "[]"), port)
	}
	return host, nil
}

// adminAddr is host:port of the admin URL.
func adminAddr(adminURL string) (string, error) {
	u, err := url.Parse(adminURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("pulsar driver: admin URL %q must be http://host:port or https://host:port (%s)", adminURL, fieldAdminURL)
	}
	if u.Port() != "" {
		return u.Host, nil
	}
	if u.Scheme == "https" {
		return net.JoinHostPort(u.Hostname(), "443"), nil
	}
	return net.JoinHostPort(u.Hostname(), "80"), nil
}
