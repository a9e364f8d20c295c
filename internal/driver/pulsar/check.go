package pulsar

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/apache/pulsar-client-go/oauth2"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
)

// checkTimeout bounds each setup check. A wrong configuration must fail in
// seconds: the Pulsar client retries a refused or broken connection until
// its operation timeout (30 s) and then reports only "connection error",
// logging the broker's reason as a warning. A healthy cluster answers each
// check in milliseconds.
const checkTimeout = 10 * time.Second

// check proves, before the clients start, that the URLs reach Pulsar in the
// way the security says and that the brokers accept the credentials, and
// explains what is wrong when they do not:
//
//  1. with TLS, one handshake to the service and the admin address
//     (untrusted CA, wrong name, expired certificate, plaintext listener,
//     client certificate refused);
//  2. with OAuth2, the first access token from the issuer (unknown client,
//     wrong secret, no discovery document);
//  3. the admin API with the credentials (GET /admin/v2/clusters, which the
//     driver needs anyway: 401 is a refused credential, 403 a role without
//     the rights);
//  4. the binary protocol's CONNECT with the same credentials, which the
//     data client sends first (a plaintext URL to a TLS port, a refused
//     token on the data port).
func (s *clientSecurity) check(ctx context.Context, b v1alpha1.BrokerEndpoints) error {
	svc, err := serviceAddr(b.ServiceURL)
	if err != nil {
		return err
	}
	adm, err := adminAddr(b.AdminURL)
	if err != nil {
		return err
	}
	if s.tls != nil {
		if err := driver.DialTLS(svc, s.tls, checkTimeout); err != nil {
			return fmt.Errorf("pulsar driver: service URL %s: %w", b.ServiceURL, err)
		}
		if err := driver.DialTLS(adm, s.tls, checkTimeout); err != nil {
			return fmt.Errorf("pulsar driver: admin URL %s: %w", b.AdminURL, err)
		}
	}
	if s.auth != nil {
		err := within(ctx, func() error {
			if err := s.auth.Init(); err != nil {
				return err
			}
			_, err := s.auth.GetData()
			return err
		})
		if err != nil {
			return s.scrub(s.credentialsFailed(err))
		}
	}
	if err := s.checkAdmin(ctx, b.AdminURL, adm); err != nil {
		return s.scrub(err)
	}
	return s.scrub(s.checkBinary(ctx, b.ServiceURL, svc))
}

// within runs f, giving up after checkTimeout (or ctx): the OAuth2 plugin
// asks its issuer with an HTTP client that has no timeout.
func within(ctx context.Context, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	t := time.NewTimer(checkTimeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return fmt.Errorf("no answer within %s", checkTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// credentialsFailed explains a failure to get the credentials ready: for
// OAuth2, the issuer's refusal or silence.
func (s *clientSecurity) credentialsFailed(err error) error {
	if s.mechanism != string(v1alpha1.AuthOAuth2) {
		return fmt.Errorf("pulsar driver: preparing the %s credentials (%s): %w", s.mechanism, fieldAuth, err)
	}
	o := s.files.OAuth2
	var te *oauth2.TokenError
	switch {
	case errors.As(err, &te) && (te.ErrorCode == "invalid_client" || te.ErrorCode == "unauthorized_client"):
		return fmt.Errorf("pulsar driver: the OAuth2 issuer %s refused client %s (%s): the client secret in %s is wrong, or the issuer does not know client %s; put the right secret in the Secret key or fix %s.clientID", o.IssuerURL, o.ClientID, te.Error(), fieldClientSecret, o.ClientID, fieldOAuth2)
	case errors.As(err, &te):
		return fmt.Errorf("pulsar driver: the OAuth2 issuer %s refused the client-credentials grant of client %s (%s); check %s.scope and audience against what the issuer allows the client", o.IssuerURL, o.ClientID, te.Error(), fieldOAuth2)
	case strings.Contains(err.Error(), "well known endpoints"):
		return fmt.Errorf("pulsar driver: the OAuth2 issuer %s gave no discovery document at /.well-known/openid-configuration (%v); check %s.issuerURL", o.IssuerURL, err, fieldOAuth2)
	}
	return fmt.Errorf("pulsar driver: getting an OAuth2 access token for client %s from issuer %s: %v; check %s.issuerURL and that the issuer is reachable from here", o.ClientID, o.IssuerURL, err, fieldOAuth2)
}

// checkAdmin lists the clusters, as ensureTenant will.
func (s *clientSecurity) checkAdmin(ctx context.Context, adminURL, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(adminURL, "/")+"/admin/v2/clusters", nil)
	if err != nil {
		return fmt.Errorf("pulsar driver: admin URL %q: %v (%s)", adminURL, err, fieldAdminURL)
	}
	t := s.transport()
	defer t.base.(*http.Transport).CloseIdleConnections()
	resp, err := (&http.Client{Transport: t}).Do(req)
	if err != nil {
		if strings.HasPrefix(adminURL, "http://") && tlsListener(addr) {
			return fmt.Errorf("pulsar driver: the admin URL %s reaches a TLS listener (%v); use https:// and set %s with the CA that signed the brokers' certificate", adminURL, err, fieldTLS)
		}
		return fmt.Errorf("pulsar driver: the admin API at %s does not answer (%v); check %s", adminURL, err, fieldAdminURL)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch resp.StatusCode {
	case http.StatusOK:
		return nil
	case http.StatusUnauthorized:
		return s.refused("the admin API at " + adminURL + " (HTTP 401)")
	case http.StatusForbidden:
		return fmt.Errorf("pulsar driver: the admin API at %s accepted the credentials but refused the role (HTTP 403 %s): the driver creates tenant %s and a namespace per run, which needs a superuser role (the brokers' superUserRoles); give the role those rights or use one that has them", adminURL, strings.TrimSpace(string(body)), Tenant)
	}
	return fmt.Errorf("pulsar driver: GET %s/admin/v2/clusters answered %s (%s); is %s Pulsar's admin API (webServicePort 8080, webServicePortTls 8443)?", strings.TrimRight(adminURL, "/"), resp.Status, strings.TrimSpace(string(body)), fieldAdminURL)
}

// checkBinary sends the binary protocol's CONNECT, with the credentials the
// data client will send, and reads the broker's answer.
func (s *clientSecurity) checkBinary(ctx context.Context, serviceURL, addr string) error {
	d := &net.Dialer{Timeout: checkTimeout}
	var conn net.Conn
	var err error
	if s.tls != nil {
		conn, err = (&tls.Dialer{NetDialer: d, Config: s.tls}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return fmt.Errorf("pulsar driver: service URL %s: %w", serviceURL, driver.ExplainTLS(err, addr))
		}
	} else if conn, err = d.DialContext(ctx, "tcp", addr); err != nil {
		return fmt.Errorf("pulsar driver: nothing answers at %s (%v); check the host and port of %s", serviceURL, err, fieldServiceURL)
	}
	defer conn.Close()
	var method string
	var data []byte
	if s.auth != nil {
		method = s.auth.Name()
		if data, err = s.auth.GetData(); err != nil {
			return fmt.Errorf("pulsar driver: reading the credentials (%s): %w", fieldAuth, err)
		}
	}
	_ = conn.SetDeadline(time.Now().Add(checkTimeout))
	if _, err := conn.Write(connectFrame(method, data)); err != nil {
		return fmt.Errorf("pulsar driver: writing to %s: %v", serviceURL, err)
	}
	r, err := readReply(conn)
	if err != nil {
		if s.tls == nil && tlsListener(addr) {
			return fmt.Errorf("pulsar driver: the service URL %s reaches a TLS listener (the broker dropped the plaintext CONNECT: %v); use pulsar+ssl:// and set %s with the CA that signed the brokers' certificate", serviceURL, err, fieldTLS)
		}
		return fmt.Errorf("pulsar driver: %s did not answer the Pulsar protocol's CONNECT (%v); is it a Pulsar broker's binary port (brokerServicePort 6650, brokerServicePortTls 6651)? (%s)", serviceURL, err, fieldServiceURL)
	}
	switch {
	case r.typ == cmdConnected || r.typ == cmdAuthChallenge:
		return nil
	case r.typ == cmdError && r.code == serverErrorAuthentication:
		return fmt.Errorf("%w (the broker said: %s)", s.refused("the broker at "+serviceURL), r.message)
	case r.typ == cmdError:
		return fmt.Errorf("pulsar driver: the broker at %s refused the connection (error %d: %s)", serviceURL, r.code, r.message)
	}
	return fmt.Errorf("pulsar driver: the broker at %s answered CONNECT with command %d, not CONNECTED", serviceURL, r.typ)
}

// tlsListener says whether addr answers a TLS handshake (with any
// certificate, or by asking for the client's): the diagnosis of a
// plaintext URL pointed at a TLS port.
func tlsListener(addr string) bool {
	d := &net.Dialer{Timeout: 3 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err == nil {
		conn.Close()
		return true
	}
	var alert tls.AlertError
	return errors.As(err, &alert)
}

// The few parts of Pulsar's binary protocol (PulsarApi.proto) the check
// speaks: a frame is [total size][command size][BaseCommand], sizes as
// 4-byte big-endian, the command in protobuf. Hand-encoded: the client
// keeps its protobuf types internal.
const (
	cmdConnect       = 2  // BaseCommand.Type CONNECT
	cmdConnected     = 3  // CONNECTED
	cmdError         = 14 // ERROR
	cmdAuthChallenge = 36 // AUTH_CHALLENGE

	// ServerError AuthenticationError.
	serverErrorAuthentication = 3
	// protocolVersion is the Go client's (v20).
	protocolVersion = 20
	// maxReplyFrame bounds a reply read: CONNECTED and ERROR are small,
	// and four bytes of a TLS record read as a size are huge.
	maxReplyFrame = 64 << 10
)

// connectFrame is a CONNECT frame: BaseCommand{type: CONNECT(1),
// connect(2): CommandConnect{client_version(1), auth_data(3),
// protocol_version(4), auth_method_name(5)}}.
func connectFrame(authMethod string, authData []byte) []byte {
	var c []byte
	c = appendBytesField(c, 1, []byte("streambench-check"))
	if len(authData) > 0 {
		c = appendBytesField(c, 3, authData)
	}
	c = appendVarintField(c, 4, protocolVersion)
	if authMethod != "" {
		c = appendBytesField(c, 5, []byte(authMethod))
	}
	cmd := appendVarintField(nil, 1, cmdConnect)
	cmd = appendBytesField(cmd, 2, c)
	frame := binary.BigEndian.AppendUint32(nil, uint32(4+len(cmd)))
	frame = binary.BigEndian.AppendUint32(frame, uint32(len(cmd)))
	return append(frame, cmd...)
}

func appendVarintField(b []byte, field, v uint64) []byte {
	b = binary.AppendUvarint(b, field<<3) // wire type 0
	return binary.AppendUvarint(b, v)
}

func appendBytesField(b []byte, field uint64, v []byte) []byte {
	b = binary.AppendUvarint(b, field<<3|2) // wire type 2
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// reply is the part of a broker's answer the check reads.
type reply struct {
	typ     uint64
	code    uint64 // ERROR's ServerError
	message string // ERROR's message
}

var errNotPulsar = errors.New("the answer is not a Pulsar protocol frame")

// readReply reads one frame and decodes BaseCommand{type(1),
// error(14): CommandError{error(2), message(3)}}.
func readReply(r io.Reader) (reply, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return reply{}, err
	}
	total := binary.BigEndian.Uint32(hdr[:])
	if total < 4 || total > maxReplyFrame {
		return reply{}, errNotPulsar
	}
	buf := make([]byte, total)
	if _, err := io.ReadFull(r, buf); err != nil {
		return reply{}, err
	}
	size := binary.BigEndian.Uint32(buf)
	if size > total-4 {
		return reply{}, errNotPulsar
	}
	var out reply
	err := fields(buf[4:4+size], func(field uint64, v uint64, b []byte) error {
		switch {
		case field == 1 && b == nil:
			out.typ = v
		case field == 14 && b != nil:
			return fields(b, func(field uint64, v uint64, b []byte) error {
				switch {
				case field == 2 && b == nil:
					out.code = v
				case field == 3 && b != nil:
					out.message = string(b)
				}
				return nil
			})
		}
		return nil
	})
	return out, err
}

// fields walks a protobuf message: f gets each varint (b nil) or
// length-delimited field (b its bytes); fixed-size fields are skipped.
func fields(m []byte, f func(field, v uint64, b []byte) error) error {
	for len(m) > 0 {
		key, n := binary.Uvarint(m)
		if n <= 0 {
			return errNotPulsar
		}
		m = m[n:]
		field, wire := key>>3, key&7
		switch wire {
		case 0:
			v, n := binary.Uvarint(m)
			if n <= 0 {
				return errNotPulsar
			}
			m = m[n:]
			if err := f(field, v, nil); err != nil {
				return err
			}
		case 2:
			l, n := binary.Uvarint(m)
			if n <= 0 || uint64(len(m)-n) < l {
				return errNotPulsar
			}
			b := m[n : n+int(l)]
			m = m[n+int(l):]
			if err := f(field, 0, b); err != nil {
				return err
			}
		case 1:
			if len(m) < 8 {
				return errNotPulsar
			}
			m = m[8:]
		case 5:
			if len(m) < 4 {
				return errNotPulsar
			}
			m = m[4:]
		default:
			return errNotPulsar
		}
	}
	return nil
}
