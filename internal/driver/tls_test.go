package driver

import (
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/internal/testcerts"
)

// serveTLS answers TLS handshakes on loopback with pair (and asks for a
// client certificate signed by clientCA when it is set); it is the broker
// side of a handshake, which is all TLSConfig and ExplainTLS deal with.
func serveTLS(t *testing.T, pair testcerts.Pair, clientCA string) string {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(pair.CertFile, pair.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	if clientCA != "" {
		c, _, err := TLSConfig(&TLSFiles{CAFile: clientCA})
		if err != nil {
			t.Fatal(err)
		}
		cfg.ClientCAs = c.RootCAs
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.(*tls.Conn).Handshake()
				var b [1]byte
				_ = c.SetReadDeadline(time.Now().Add(time.Second))
				_, _ = c.Read(b[:])
			}()
		}
	}()
	return ln.Addr().String()
}

func TestTLSHandshakes(t *testing.T) {
	dir := t.TempDir()
	ca, err := testcerts.NewCA(dir, "broker-ca")
	if err != nil {
		t.Fatal(err)
	}
	other, err := testcerts.NewCA(dir, "other-ca")
	if err != nil {
		t.Fatal(err)
	}
	issue := func(ca *testcerts.CA, cn string, o testcerts.Options) testcerts.Pair {
		p, err := ca.Issue(cn, o)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := serveTLS(t, issue(ca, "broker", testcerts.Options{Names: []string{"127.0.0.1", "broker.example"}}), "")
	expired := serveTLS(t, issue(ca, "old-broker", testcerts.Options{Names: []string{"127.0.0.1"}, Expired: true}), "")
	mtls := serveTLS(t, issue(ca, "mtls-broker", testcerts.Options{Names: []string{"127.0.0.1"}}), ca.CertFile)
	client := issue(ca, "client", testcerts.Options{Client: true})

	tests := []struct {
		name    string
		addr    string
		files   TLSFiles
		wantErr string // empty: the handshake succeeds
		wantVer string
	}{
		{"trusted", good, TLSFiles{CAFile: ca.CertFile}, "", "TLS 1.3"},
		{"server name carried", good, TLSFiles{CAFile: ca.CertFile, ServerName: "broker.example"}, "", "TLS 1.3"},
		{"untrusted CA", good, TLSFiles{CAFile: other.CertFile}, "signed by a CA the client does not trust", ""},
		{"wrong server name", good, TLSFiles{CAFile: ca.CertFile, ServerName: "kafka.example"}, "set spec.cluster.existing.tls.serverName", ""},
		// The name is not checked, the chain still is.
		{"no hostname check, trusted", good, TLSFiles{CAFile: ca.CertFile, ServerName: "kafka.example", SkipHostnameVerification: true}, "", "TLS 1.3"},
		{"no hostname check, untrusted", good, TLSFiles{CAFile: other.CertFile, SkipHostnameVerification: true}, "unknown authority", ""},
		{"insecure", good, TLSFiles{CAFile: other.CertFile, InsecureSkipVerify: true}, "", "TLS 1.3"},
		{"expired", expired, TLSFiles{CAFile: ca.CertFile}, "has expired or is not yet valid", ""},
		{"mutual TLS", mtls, TLSFiles{CAFile: ca.CertFile, CertFile: client.CertFile, KeyFile: client.KeyFile}, "", "TLS 1.3"},
		{"mutual TLS without a certificate", mtls, TLSFiles{CAFile: ca.CertFile}, "certificate", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, neg, err := TLSConfig(&tt.files)
			if err != nil {
				t.Fatal(err)
			}
			err = DialTLS(tt.addr, c, 10*time.Second)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("handshake failed: %v", err)
				}
				if got := neg.Version(); got != tt.wantVer {
					t.Errorf("negotiated %q, want %q", got, tt.wantVer)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.addr) {
				t.Errorf("error %q does not name the address %s", err, tt.addr)
			}
		})
	}
}

func TestTLSConfigRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		files   TLSFiles
		wantErr string
	}{
		{"missing CA file", TLSFiles{CAFile: filepath.Join(dir, "absent.crt")}, "spec.cluster.existing.tls.ca"},
		{"CA file without PEM", TLSFiles{CAFile: notPEM}, "holds no PEM certificate"},
		{"certificate without key", TLSFiles{CertFile: notPEM}, "needs both the certificate and its private key"},
		{"unreadable key pair", TLSFiles{CertFile: notPEM, KeyFile: notPEM}, "give a PEM certificate and its PEM private key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := TLSConfig(&tt.files)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
			}
		})
	}
	if v := (&TLSFiles{SkipHostnameVerification: true}).Verification(); v != "no-hostname" {
		t.Errorf("Verification() = %q", v)
	}
}

func TestExplainTLSPlaintextListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		// A plaintext server answers the TLS hello with bytes that are
		// not a TLS record.
		_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
	}()
	c, _, err := TLSConfig(&TLSFiles{})
	if err != nil {
		t.Fatal(err)
	}
	err = DialTLS(ln.Addr().String(), c, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "plaintext listener") {
		t.Fatalf("error %v, want one saying the address is a plaintext listener", err)
	}
}
