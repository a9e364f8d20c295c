package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
)

// How the driver's clients reach a secured listener, and why they cannot.
// A wrong setting must fail in seconds with what is wrong and how to fix
// it: left to itself, kgo retries a refused handshake or login until the
// request times out (30 s in New), and then says only "context deadline
// exceeded" or "broker closed the connection".

// checkTimeout bounds each step of Check: one handshake, one login.
const checkTimeout = 10 * time.Second

const (
	authField     = "spec.cluster.existing.authentication"
	tlsField      = "spec.cluster.existing.tls"
	passwordField = authField + ".password, or a KafkaUser Secret's password key"
)

// ClientSecurity is a cluster's client security, loaded once: the secret
// files read, the TLS configuration built. Every client made with Opts
// shares it (one OAuth token cache, one record of the negotiated TLS).
type ClientSecurity struct {
	sec      *driver.Security
	tls      *tls.Config
	neg      *driver.NegotiatedTLS
	password string
	tokens   *tokenSource
}

// LoadSecurity reads sec's files and builds its TLS configuration; nil
// sec is a plaintext, anonymous cluster. Errors name the file and the
// setting, never a secret value.
func LoadSecurity(sec *driver.Security) (*ClientSecurity, error) {
	s := &ClientSecurity{sec: sec}
	if sec == nil {
		return s, nil
	}
	var err error
	if s.tls, s.neg, err = driver.TLSConfig(sec.TLS); err != nil {
		return nil, err
	}
	switch m := v1alpha1.AuthMechanism(sec.Mechanism); m {
	case "":
	case v1alpha1.AuthPlain, v1alpha1.AuthScramSHA256, v1alpha1.AuthScramSHA512:
		if sec.Username == "" {
			return nil, fmt.Errorf("%s.username is empty: SASL %s needs a user name", authField, m)
		}
		if s.password, err = readSecretFile(sec.PasswordFile, "the SASL password of user "+sec.Username, passwordField); err != nil {
			return nil, err
		}
	case v1alpha1.AuthOAuthBearer:
		if sec.OAuth2 == nil {
			return nil, fmt.Errorf("%s: mechanism OAUTHBEARER needs oauth2 (the client-credentials grant)", authField)
		}
		roots, err := driver.TrustedWithSystem(sec.TLS)
		if err != nil {
			return nil, err
		}
		if s.tokens, err = newTokenSource(sec.OAuth2, roots); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%s.mechanism %q: Kafka takes PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER", authField, sec.Mechanism)
	}
	return s, nil
}

// ClientOpts are the kgo options that apply sec to a client (TLS, SASL),
// and the record of the TLS version its connections negotiate. For
// clients beside the driver's (the coordinator's inspection of the
// brokers); LoadSecurity and Check do more.
func ClientOpts(sec *driver.Security) ([]kgo.Opt, *driver.NegotiatedTLS, error) {
	s, err := LoadSecurity(sec)
	if err != nil {
		return nil, nil, err
	}
	return s.Opts(), s.neg, nil
}

// Opts are the kgo options of a client of this security.
func (s *ClientSecurity) Opts() []kgo.Opt {
	var opts []kgo.Opt
	if s.tls != nil {
		opts = append(opts, kgo.DialTLSConfig(s.tls))
	}
	if m := s.mechanism(); m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	return opts
}

// mechanism is a new SASL mechanism of the loaded credentials, or nil.
func (s *ClientSecurity) mechanism() sasl.Mechanism {
	if s.sec == nil {
		return nil
	}
	switch v1alpha1.AuthMechanism(s.sec.Mechanism) {
	case v1alpha1.AuthPlain:
		return plain.Auth{User: s.sec.Username, Pass: s.password}.AsMechanism()
	case v1alpha1.AuthScramSHA256:
		return scram.Auth{User: s.sec.Username, Pass: s.password}.AsSha256Mechanism()
	case v1alpha1.AuthScramSHA512:
		return scram.Auth{User: s.sec.Username, Pass: s.password}.AsSha512Mechanism()
	case v1alpha1.AuthOAuthBearer:
		return oauth.Oauth(func(ctx context.Context) (oauth.Auth, error) {
			tok, err := s.tokens.Token(ctx)
			return oauth.Auth{Token: tok}, err
		})
	}
	return nil
}

// Info is the security the clients use, for the results: the TLS version
// is the one the last verified connection negotiated.
func (s *ClientSecurity) Info() v1alpha1.SecurityInfo {
	sec := s.sec
	if sec == nil {
		return v1alpha1.SecurityInfo{Protocol: "PLAINTEXT"}
	}
	info := v1alpha1.SecurityInfo{Mechanism: sec.Mechanism}
	switch {
	case sec.TLS != nil && sec.Mechanism != "":
		info.Protocol = "SASL_SSL"
	case sec.TLS != nil:
		info.Protocol = "SSL"
	case sec.Mechanism != "":
		info.Protocol = "SASL_PLAINTEXT"
	default:
		info.Protocol = "PLAINTEXT"
	}
	if sec.TLS != nil {
		info.TLSVersion = s.neg.Version()
		info.ClientCertificate = sec.TLS.CertFile != ""
		info.Verification = sec.TLS.Verification()
		if info.Mechanism == "" && info.ClientCertificate {
			info.Mechanism = "TLS"
		}
	}
	return info
}

// Check makes one connection to the first seed that accepts one, as the
// clients will (TLS handshake, SASL login, one request), and explains why
// it fails: an untrusted CA, a wrong name, an expired certificate, a
// refused or missing client certificate, a plaintext listener for a TLS
// client and the reverse, a mechanism the listener does not enable, a
// wrong password or unknown user, a token the issuer will not grant.
func (s *ClientSecurity) Check(ctx context.Context, seeds []string) error {
	if s.tokens != nil {
		tctx, cancel := context.WithTimeout(ctx, checkTimeout)
		_, err := s.tokens.Token(tctx)
		cancel()
		if err != nil {
			return err
		}
	}
	var unreachable []string
	for _, addr := range seeds {
		err := s.checkSeed(ctx, addr)
		if err == nil {
			return nil
		}
		if !isDialError(err) {
			return err
		}
		unreachable = append(unreachable, err.Error())
	}
	return fmt.Errorf("no bootstrap server accepts connections (%s); check brokers.bootstrapServers and that the brokers run", strings.Join(unreachable, "; "))
}

// checkSeed is Check on one address.
func (s *ClientSecurity) checkSeed(ctx context.Context, addr string) error {
	if s.tls != nil {
		// kgo would retry a failed handshake until its deadline; one
		// handshake of our own says at once what is wrong.
		if err := driver.DialTLS(addr, s.tls, checkTimeout); err != nil {
			if isDialError(err) {
				return err
			}
			return s.explainTLS(err, addr)
		}
	}
	mech := &tracedMechanism{Mechanism: s.mechanism()}
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.DialTimeout(checkTimeout)}
	if s.tls != nil {
		opts = append(opts, kgo.DialTLSConfig(s.tls))
	}
	if mech.Mechanism != nil {
		opts = append(opts, kgo.SASL(mech))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	rctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{} // none: only the brokers
	seeds := cl.SeedBrokers()
	if len(seeds) == 0 {
		return fmt.Errorf("bootstrap server %q is not host:port", addr)
	}
	if _, err := seeds[0].Request(rctx, req); err != nil {
		if isDialError(err) {
			return err // names addr
		}
		return s.explain(err, addr, mech)
	}
	return nil
}

// explain turns the probe's failure into what is wrong and how to fix it.
func (s *ClientSecurity) explain(err error, addr string, mech *tracedMechanism) error {
	sec := s.sec
	if sec == nil {
		sec = &driver.Security{}
	}
	var eof *kgo.ErrFirstReadEOF
	switch {
	case errors.Is(err, kerr.UnsupportedSaslMechanism):
		enabled, lerr := s.enabledMechanisms(addr)
		if lerr != nil {
			return fmt.Errorf("the listener at %s does not enable SASL mechanism %s; set %s.mechanism to one it enables (its list could not be read: %v)", addr, sec.Mechanism, authField, lerr)
		}
		return fmt.Errorf("the listener at %s does not enable SASL mechanism %s; it enables %s: set %s.mechanism to one of them, or enable %s on the listener (sasl.enabled.mechanisms)", addr, sec.Mechanism, strings.Join(enabled, ", "), authField, sec.Mechanism)
	case errors.Is(err, kerr.SaslAuthenticationFailed):
		return s.explainLogin(err, addr, mech)
	case errors.Is(err, kerr.IllegalSaslState):
		return fmt.Errorf("the listener at %s does not use SASL (it is a PLAINTEXT or SSL listener) but %s.mechanism is %s: use the SASL listener's address, or remove %s (%v)", addr, authField, sec.Mechanism, authField, err)
	case errors.As(err, new(oauthRefusal)):
		return fmt.Errorf("the brokers at %s refused the OAUTHBEARER token that %s granted to client %s: %v; the token must be signed by a key in the brokers' sasl.oauthbearer.jwks.endpoint.url and carry the issuer and audience they expect (sasl.oauthbearer.expected.issuer and .audience): check %s.tokenEndpoint, .scope and .audience", addr, s.sec.OAuth2.TokenEndpoint, s.sec.OAuth2.ClientID, err, oauthField)
	case errors.As(err, &eof) || strings.Contains(err.Error(), "invalid large response size"):
		return s.explainClosed(err, addr)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("the broker at %s did not answer within %s (%v); is it a Kafka listener, and is %s right for it (TLS on a TLS listener only)?", addr, checkTimeout, err, tlsField)
	}
	if e := s.explainTLS(err, addr); e != err {
		return e
	}
	return fmt.Errorf("connecting to %s: %w", addr, err)
}

// explainLogin says which login failed and what to check. The brokers say
// only "authentication failed", whatever the cause, so that nobody learns
// which users exist; but SCRAM shows more: the brokers answer the first
// message only for a user they have a credential of that mechanism for.
func (s *ClientSecurity) explainLogin(err error, addr string, mech *tracedMechanism) error {
	sec := s.sec
	switch v1alpha1.AuthMechanism(sec.Mechanism) {
	case v1alpha1.AuthScramSHA256, v1alpha1.AuthScramSHA512:
		if mech.answered.Load() {
			return fmt.Errorf("SASL %s login of user %s refused at %s: the password is wrong (the brokers know the user, and refused its proof); put the user's password in %s (%s) (%v)", sec.Mechanism, sec.Username, addr, sec.PasswordFile, passwordField, err)
		}
		return fmt.Errorf("SASL %s login of user %s refused at %s: the brokers have no %s credential for user %s (an unknown user, or one made for another mechanism); fix %s.username, or create the user (a Strimzi KafkaUser, or kafka-configs --alter --entity-type users --entity-name %s --add-config '%s=[password=...]') (%v)", sec.Mechanism, sec.Username, addr, sec.Mechanism, sec.Username, authField, sec.Username, sec.Mechanism, err)
	case v1alpha1.AuthPlain:
		return fmt.Errorf("SASL PLAIN login of user %s refused at %s: the user is unknown to the listener or the password is wrong (PLAIN does not say which); check %s.username and the password in %s (%s) (%v)", sec.Username, addr, authField, sec.PasswordFile, passwordField, err)
	case v1alpha1.AuthOAuthBearer:
		return fmt.Errorf("the brokers at %s refused the OAUTHBEARER token of client %s: %v; check that the brokers validate tokens of the issuer at %s (its JWKS, issuer and audience)", addr, sec.OAuth2.ClientID, err, sec.OAuth2.TokenEndpoint)
	}
	return fmt.Errorf("SASL login refused at %s: %w", addr, err)
}

// explainClosed explains a listener that closed the connection at the
// first request, or answered it with something not Kafka: it wants TLS,
// or SASL, that the client does not speak.
func (s *ClientSecurity) explainClosed(err error, addr string) error {
	if s.tls == nil && speaksTLS(addr) {
		return fmt.Errorf("the listener at %s is a TLS listener (SSL or SASL_SSL) and the client speaks plaintext: set %s (its ca, or the Strimzi cluster's CA), or use a plaintext listener's address", addr, tlsField)
	}
	if strings.Contains(err.Error(), "invalid large response size") {
		return fmt.Errorf("the server at %s does not answer in Kafka's protocol (%v); is it a Kafka listener's address?", addr, err)
	}
	if s.sec == nil || s.sec.Mechanism == "" {
		return fmt.Errorf("the listener at %s closed the connection at the first request: it requires SASL authentication: set %s (mechanism, username and password), or use a listener without SASL (%v)", addr, authField, err)
	}
	return fmt.Errorf("the listener at %s closed the connection at the first request (%v); check that %s and %s match the listener's security.protocol", addr, err, tlsField, authField)
}

// remoteAlert is the TLS alert a peer sent, as crypto/tls words it.
var remoteAlert = regexp.MustCompile(`remote error: tls: [a-z ]+`)

// explainTLS is driver.ExplainTLS, and what it cannot tell: a plaintext
// listener that drops a TLS hello, and a broker refusing the client's
// certificate, which a Java broker says with the same alert whether it is
// missing, expired or of another CA (so the certificate itself is read to
// say which).
func (s *ClientSecurity) explainTLS(err error, addr string) error {
	alert := remoteAlert.FindString(err.Error())
	switch {
	case isClosedEarly(err) && speaksPlainKafka(addr):
		return fmt.Errorf("TLS to %s: the listener is not a TLS listener (it closed the connection at the TLS hello and answers plaintext Kafka): use the TLS listener's address, or remove %s", addr, tlsField)
	case alert != "" && isCertificateAlert(alert):
		return s.clientCertRefused(addr, alert)
	}
	return driver.ExplainTLS(err, addr)
}

func isCertificateAlert(alert string) bool {
	for _, a := range []string{"bad certificate", "unknown certificate", "certificate required", "expired certificate", "unsupported certificate", "revoked certificate", "unknown certificate authority", "access denied"} {
		if strings.HasSuffix(alert, a) {
			return true
		}
	}
	return false
}

// clientCertRefused explains a broker's refusal of the client's
// certificate (alert is its TLS alert).
func (s *ClientSecurity) clientCertRefused(addr, alert string) error {
	var f *driver.TLSFiles
	if s.sec != nil {
		f = s.sec.TLS
	}
	if f == nil || f.CertFile == "" {
		return fmt.Errorf("TLS to %s: the listener requires a client certificate (mutual TLS, ssl.client.auth=required) and the client has none (%s): set %s.clientCertificate, or use a strimziKafkaUser of type tls", addr, alert, tlsField)
	}
	why := "it is not signed by a CA in the listener's truststore (ssl.truststore), or the broker refuses it for another reason (its log says)"
	if cert := leafCertificate(s.tls); cert != nil {
		now := time.Now()
		switch {
		case now.After(cert.NotAfter):
			why = fmt.Sprintf("it expired at %s: renew it (a Strimzi KafkaUser's is renewed by the User Operator)", cert.NotAfter.UTC().Format(time.RFC3339))
		case now.Before(cert.NotBefore):
			why = fmt.Sprintf("it is valid only from %s: check the clocks", cert.NotBefore.UTC().Format(time.RFC3339))
		default:
			why = fmt.Sprintf("it is issued by %q, and the listener's truststore (ssl.truststore) does not hold that CA, or the broker refuses it for another reason (its log says)", cert.Issuer.String())
		}
	}
	return fmt.Errorf("TLS to %s: the broker refused the client certificate %s (%s): %s; fix %s.clientCertificate", addr, f.CertFile, alert, why, tlsField)
}

// leafCertificate is the client certificate c presents, parsed.
func leafCertificate(c *tls.Config) *x509.Certificate {
	if c == nil || len(c.Certificates) == 0 || len(c.Certificates[0].Certificate) == 0 {
		return nil
	}
	if l := c.Certificates[0].Leaf; l != nil {
		return l
	}
	cert, err := x509.ParseCertificate(c.Certificates[0].Certificate[0])
	if err != nil {
		return nil
	}
	return cert
}

// enabledMechanisms asks the listener at addr which SASL mechanisms it
// enables: a SaslHandshake names them when it refuses one.
func (s *ClientSecurity) enabledMechanisms(addr string) ([]string, error) {
	conn, err := s.dial(addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Version = 1
	req.Mechanism = s.sec.Mechanism
	resp, err := rawRequest(conn, req)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.SASLHandshakeResponse).SupportedMechanisms, nil
}

// dial connects to addr as the clients do (TLS or not), for a raw request.
func (s *ClientSecurity) dial(addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: checkTimeout}
	if s.tls == nil {
		return d.Dial("tcp", addr)
	}
	c := s.tls.Clone()
	if c.ServerName == "" {
		c.ServerName, _, _ = net.SplitHostPort(addr)
	}
	return tls.DialWithDialer(d, "tcp", addr, c)
}

// speaksTLS says whether addr completes (or refuses with an alert) a TLS
// handshake: a TLS listener, whatever its certificate.
func speaksTLS(addr string) bool {
	d := &net.Dialer{Timeout: checkTimeout}
	conn, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only asks whether it speaks TLS
	if err == nil {
		conn.Close()
		return true
	}
	var alert tls.AlertError
	return errors.As(err, &alert)
}

// speaksPlainKafka says whether addr answers a plaintext ApiVersions: a
// PLAINTEXT or SASL_PLAINTEXT Kafka listener.
func speaksPlainKafka(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, checkTimeout)
	if err != nil {
		return false
	}
	defer conn.Close()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 0
	_, err = rawRequest(conn, req)
	return err == nil
}

// rawRequest sends req (a version with a non-flexible header) on conn and
// reads its response: the bare protocol, for the two questions kgo does
// not answer (which mechanisms a listener enables, whether a port speaks
// plaintext Kafka).
func rawRequest(conn net.Conn, req kmsg.Request) (kmsg.Response, error) {
	if req.IsFlexible() {
		return nil, fmt.Errorf("rawRequest: %T v%d has a flexible header", req, req.GetVersion())
	}
	_ = conn.SetDeadline(time.Now().Add(checkTimeout))
	const corrID = 1
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("streambench-check"))
	if _, err := conn.Write(f.AppendRequest(nil, req, corrID)); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		return nil, err
	}
	n := int(uint32(size[0])<<24 | uint32(size[1])<<16 | uint32(size[2])<<8 | uint32(size[3]))
	if n < 4 || n > 1<<20 {
		return nil, fmt.Errorf("not a Kafka response (size %d)", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(conn, body); err != nil {
		return nil, err
	}
	if got := int32(uint32(body[0])<<24 | uint32(body[1])<<16 | uint32(body[2])<<8 | uint32(body[3])); got != corrID {
		return nil, fmt.Errorf("not a Kafka response (correlation id %d)", got)
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if err := resp.ReadFrom(body[4:]); err != nil {
		return nil, fmt.Errorf("not a Kafka response: %w", err)
	}
	return resp, nil
}

// isDialError is a connection that never opened (refused, no route, no
// such host): the next seed may do better.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// isClosedEarly is a connection the peer closed or reset during the
// handshake: what a plaintext Kafka listener does with a TLS hello (it
// reads it as a request of 369 MB and drops the connection).
func isClosedEarly(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// tracedMechanism is a SASL mechanism that records whether the broker
// answered the client's first message, and turns an OAUTHBEARER error
// challenge into an error that says what the broker refused.
type tracedMechanism struct {
	sasl.Mechanism
	answered atomic.Bool
}

func (m *tracedMechanism) Authenticate(ctx context.Context, host string) (sasl.Session, []byte, error) {
	m.answered.Store(false)
	sess, first, err := m.Mechanism.Authenticate(ctx, host)
	if err != nil {
		return nil, nil, err
	}
	return &tracedSession{Session: sess, m: m}, first, nil
}

type tracedSession struct {
	sasl.Session
	m *tracedMechanism
}

func (s *tracedSession) Challenge(resp []byte) (bool, []byte, error) {
	s.m.answered.Store(true)
	if s.m.Name() == string(v1alpha1.AuthOAuthBearer) && len(resp) > 0 {
		// RFC 7628 3.2.2: the server's error is a JSON challenge.
		var r oauthRefusal
		if json.Unmarshal(resp, &r) == nil && r.Status != "" {
			return false, nil, r
		}
	}
	return s.Session.Challenge(resp)
}

// oauthRefusal is a broker's OAUTHBEARER error challenge.
type oauthRefusal struct {
	Status string `json:"status"`
	Scope  string `json:"scope"`
}

func (r oauthRefusal) Error() string {
	s := "status " + clip(r.Status)
	if r.Scope != "" {
		s += ", scope " + clip(r.Scope)
	}
	return s
}
