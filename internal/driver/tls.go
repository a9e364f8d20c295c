package driver

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// TLSConfig is the crypto/tls configuration of f for both drivers, and a
// record of the version the first verified connection negotiated (for the
// results). Missing or unreadable files are errors that name the file and
// the setting that gave it, before any connection is tried.
func TLSConfig(f *TLSFiles) (*tls.Config, *NegotiatedTLS, error) {
	if f == nil {
		return nil, nil, nil
	}
	neg := &NegotiatedTLS{}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.ServerName}
	if f.CAFile != "" {
		pem, err := os.ReadFile(f.CAFile)
		if err != nil {
			return nil, nil, fmt.Errorf("TLS CA bundle (spec.cluster.existing.tls.ca): %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, nil, fmt.Errorf("TLS CA bundle %s (spec.cluster.existing.tls.ca) holds no PEM certificate; give the CA's certificate as -----BEGIN CERTIFICATE----- blocks", f.CAFile)
		}
		c.RootCAs = pool
	}
	if (f.CertFile == "") != (f.KeyFile == "") {
		return nil, nil, errors.New("TLS client certificate (spec.cluster.existing.tls.clientCertificate) needs both the certificate and its private key")
	}
	if f.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("TLS client certificate (spec.cluster.existing.tls.clientCertificate or a tls KafkaUser's user.crt and user.key): %w; give a PEM certificate and its PEM private key", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	switch {
	case f.InsecureSkipVerify:
		c.InsecureSkipVerify = true
		c.VerifyConnection = func(cs tls.ConnectionState) error {
			neg.record(cs)
			return nil
		}
	case f.SkipHostnameVerification:
		// Verify the chain ourselves and skip the name: crypto/tls checks
		// both or neither.
		roots := c.RootCAs
		c.InsecureSkipVerify = true
		c.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the broker presented no certificate")
			}
			inter := x509.NewCertPool()
			for _, ic := range cs.PeerCertificates[1:] {
				inter.AddCert(ic)
			}
			if _, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter}); err != nil {
				return err
			}
			neg.record(cs)
			return nil
		}
	default:
		c.VerifyConnection = func(cs tls.ConnectionState) error {
			neg.record(cs)
			return nil
		}
	}
	return c, neg, nil
}

// TrustedWithSystem is the system's roots and, when f names one, the CA
// bundle of spec.cluster.existing.tls.ca: for the HTTPS endpoints beside
// the brokers (an OAuth2 token endpoint), which may be signed by the
// cluster's private CA or by a public one. Kafka's Java client trusts its
// ssl.truststore there too.
func TrustedWithSystem(f *TLSFiles) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if f == nil || f.CAFile == "" {
		return pool, nil
	}
	pem, err := os.ReadFile(f.CAFile)
	if err != nil {
		return nil, fmt.Errorf("TLS CA bundle (spec.cluster.existing.tls.ca): %w", err)
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("TLS CA bundle %s (spec.cluster.existing.tls.ca) holds no PEM certificate", f.CAFile)
	}
	return pool, nil
}

// NegotiatedTLS records what the clients' TLS connections negotiated.
type NegotiatedTLS struct {
	version atomic.Uint32
}

func (n *NegotiatedTLS) record(cs tls.ConnectionState) { n.version.Store(uint32(cs.Version)) }

// Version is the negotiated version of the last verified connection, e.g.
// "TLS 1.3"; empty before any.
func (n *NegotiatedTLS) Version() string {
	if n == nil {
		return ""
	}
	v := n.version.Load()
	if v == 0 {
		return ""
	}
	return tls.VersionName(uint16(v))
}

// Verification names how f checks the brokers' certificates, for the
// results: full, no-hostname or none.
func (f *TLSFiles) Verification() string {
	switch {
	case f == nil:
		return ""
	case f.InsecureSkipVerify:
		return "none"
	case f.SkipHostnameVerification:
		return "no-hostname"
	}
	return "full"
}

// ExplainTLS rewrites a TLS handshake failure as what is wrong and how to
// fix it; other errors are returned as they are.
func ExplainTLS(err error, addr string) error {
	if err == nil {
		return nil
	}
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var recordHeader tls.RecordHeaderError
	switch {
	case errors.As(err, &unknown):
		return fmt.Errorf("TLS to %s: the broker's certificate is signed by a CA the client does not trust (%w); give the CA that signed it in spec.cluster.existing.tls.ca", addr, err)
	case errors.As(err, &hostname):
		return fmt.Errorf("TLS to %s: the broker's certificate is not for the name the client checks (%w); set spec.cluster.existing.tls.serverName to a name it carries, or connect by that name", addr, err)
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return fmt.Errorf("TLS to %s: a certificate has expired or is not yet valid (%w); renew it (or check the clocks)", addr, err)
	case errors.As(err, &recordHeader):
		return fmt.Errorf("TLS to %s: the broker did not answer in TLS (%w); the address is a plaintext listener: use the TLS listener's address or remove spec.cluster.existing.tls", addr, err)
	case strings.Contains(err.Error(), "certificate required") || strings.Contains(err.Error(), "bad certificate"):
		return fmt.Errorf("TLS to %s: the broker refused the client's certificate (%w); it wants mutual TLS with a certificate its truststore accepts: set spec.cluster.existing.tls.clientCertificate", addr, err)
	}
	return err
}

// DialTLS makes one TLS connection to addr with c and closes it: a setup
// check that fails fast, with ExplainTLS's words, where a client library
// would retry a bad handshake until its own deadline.
func DialTLS(addr string, c *tls.Config, timeout time.Duration) error {
	d := &net.Dialer{Timeout: timeout}
	conn, err := tls.DialWithDialer(d, "tcp", addr, c)
	if err != nil {
		return ExplainTLS(err, addr)
	}
	// A TLS 1.3 server checks the client's certificate after the client's
	// handshake ends: read once so its refusal is seen here.
	_ = conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	var b [1]byte
	if _, err := conn.Read(b[:]); err != nil {
		var ne net.Error
		if !(errors.As(err, &ne) && ne.Timeout()) && !errors.Is(err, os.ErrDeadlineExceeded) {
			conn.Close()
			if strings.Contains(err.Error(), "certificate") {
				return ExplainTLS(err, addr)
			}
		}
	}
	return conn.Close()
}
