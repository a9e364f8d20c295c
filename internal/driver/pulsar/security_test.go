package pulsar

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/testcerts"
)

// The secured brokers' tests are in internal/coordinator
// (security_pulsar_test.go: one TLS + token standalone for the workloads
// and every wrong configuration). These are the pure parts.

// jwt is an unsigned token with the claims given: enough for what the
// driver reads before the brokers verify the signature.
func jwt(t *testing.T, claims map[string]any) string {
	t.Helper()
	enc := base64.RawURLEncoding
	c, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	return enc.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + enc.EncodeToString(c) + "." + enc.EncodeToString([]byte("not-a-signature"))
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestTokenChecks(t *testing.T) {
	now := time.Now()
	valid := jwt(t, map[string]any{"sub": "alice", "exp": now.Add(time.Hour).Unix()})
	expired := jwt(t, map[string]any{"sub": "alice", "exp": now.Add(-90 * time.Second).Unix()})
	noExp := jwt(t, map[string]any{"sub": "alice"})
	tests := []struct {
		name    string
		file    string
		wantErr []string // empty: accepted
		secret  string
	}{
		{"valid", writeFile(t, "t", valid+"\n"), nil, valid},
		{"no exp claim (Pulsar's tokens may have none)", writeFile(t, "t", noExp), nil, noExp},
		{"not a JWT: the brokers decide", writeFile(t, "t", "opaque-token-value"), nil, "opaque-token-value"},
		{"expired", writeFile(t, "t", expired), []string{"expired at", `subject "alice"`, "issue a new one", fieldToken}, expired},
		{"empty", writeFile(t, "t", " \n"), []string{"is empty", fieldToken}, ""},
		{"missing", filepath.Join(t.TempDir(), "absent"), []string{"absent: no such file or directory", "create it", fieldToken}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newClientSecurity(&driver.Security{Mechanism: "Token", TokenFile: tt.file}, false)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want an error with %q", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
				t.Errorf("error carries the token")
			}
		})
	}
}

func TestSchemes(t *testing.T) {
	tls := &driver.Security{TLS: &driver.TLSFiles{}}
	tests := []struct {
		name     string
		sec      *driver.Security
		svc, adm string
		wantTLS  bool
		wantErr  string
	}{
		{"plaintext", nil, "pulsar://h:6650", "http://h:8080", false, ""},
		{"tls", tls, "pulsar+ssl://h:6651", "https://h:8443", true, ""},
		{"tls URLs without tls: the system's roots", nil, "pulsar+ssl://h:6651", "https://h:8443", true, ""},
		{"tls with a plaintext service URL", tls, "pulsar://h:6651", "https://h:8443", true, "pulsar+ssl://host:6651"},
		{"tls with a plaintext admin URL", tls, "pulsar+ssl://h:6651", "http://h:8080", true, "https://host:8443"},
		{"one URL TLS, the other not", nil, "pulsar+ssl://h:6651", "http://h:8080", true, "admin URL http://h:8080 is plaintext"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := v1alpha1.BrokerEndpoints{ServiceURL: tt.svc, AdminURL: tt.adm}
			useTLS := usesTLS(tt.sec, b)
			if useTLS != tt.wantTLS {
				t.Errorf("usesTLS = %v; want %v", useTLS, tt.wantTLS)
			}
			err := schemes(useTLS, b)
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("schemes = %v; want %q", err, tt.wantErr)
			}
		})
	}
}

func TestAddresses(t *testing.T) {
	for in, want := range map[string]string{
		"pulsar://h":                   "h:6650",
		"pulsar+ssl://h":               "h:6651",
		"pulsar://h:1234":              "h:1234",
		"pulsar://h1:6650,h2:6650":     "h1:6650",
		"pulsar+ssl://10.0.0.1:6651/x": "10.0.0.1:6651",
	} {
		if got, err := serviceAddr(in); err != nil || got != want {
			t.Errorf("serviceAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"http://h": "h:80", "https://h": "h:443", "https://h:8443/": "h:8443",
	} {
		if got, err := adminAddr(in); err != nil || got != want {
			t.Errorf("adminAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := serviceAddr("http://h:6650"); err == nil {
		t.Error("serviceAddr accepted http://")
	}
}

// The CONNECT frame is what Pulsar's PulsarApi.proto says, and a broker's
// answers decode: ERROR with its code and message, CONNECTED, and a TLS
// record (what a TLS port sends a plaintext client) is not a frame.
func TestConnectProtocol(t *testing.T) {
	f := connectFrame("token", []byte("abc"))
	total, size := binary.BigEndian.Uint32(f), binary.BigEndian.Uint32(f[4:])
	if int(total) != len(f)-4 || size != total-4 {
		t.Fatalf("frame sizes %d/%d for %d bytes", total, size, len(f))
	}
	var typ uint64
	var connect []byte
	if err := fields(f[8:], func(field, v uint64, b []byte) error {
		if field == 1 {
			typ = v
		}
		if field == 2 {
			connect = b
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	strs, ints := map[uint64]string{}, map[uint64]uint64{}
	if err := fields(connect, func(field, v uint64, b []byte) error {
		if b != nil {
			strs[field] = string(b)
		} else {
			ints[field] = v
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if typ != cmdConnect || strs[1] != "streambench-check" || strs[3] != "abc" || ints[4] != protocolVersion || strs[5] != "token" {
		t.Errorf("CONNECT type %d fields %v %v", typ, strs, ints)
	}

	errCmd := appendVarintField(nil, 1, cmdError)
	inner := appendVarintField(nil, 1, 0)
	inner = appendVarintField(inner, 2, serverErrorAuthentication)
	inner = appendBytesField(inner, 3, []byte("Unable to authenticate"))
	errCmd = appendBytesField(errCmd, 14, inner)
	r, err := readReply(bytes.NewReader(frame(errCmd)))
	if err != nil || r.typ != cmdError || r.code != serverErrorAuthentication || r.message != "Unable to authenticate" {
		t.Errorf("ERROR decoded as %+v, %v", r, err)
	}
	if r, err := readReply(bytes.NewReader(frame(appendVarintField(nil, 1, cmdConnected)))); err != nil || r.typ != cmdConnected {
		t.Errorf("CONNECTED decoded as %+v, %v", r, err)
	}
	alert := []byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46}
	if _, err := readReply(bytes.NewReader(alert)); err != errNotPulsar {
		t.Errorf("a TLS alert decoded with %v; want errNotPulsar", err)
	}
}

func frame(cmd []byte) []byte {
	f := binary.BigEndian.AppendUint32(nil, uint32(4+len(cmd)))
	f = binary.BigEndian.AppendUint32(f, uint32(len(cmd)))
	return append(f, cmd...)
}

// AdminHTTP's client and its authorize both set the token as a Bearer
// header; without authentication there is none.
func TestAdminHTTP(t *testing.T) {
	tok := jwt(t, map[string]any{"sub": "alice", "exp": time.Now().Add(time.Hour).Unix()})
	ca, err := testcerts.NewCA(t.TempDir(), "ca")
	if err != nil {
		t.Fatal(err)
	}
	c, authorize, err := AdminHTTP(&driver.Security{TLS: &driver.TLSFiles{CAFile: ca.CertFile}, Mechanism: "Token", TokenFile: writeFile(t, "t", tok)})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, "https://h/admin/v2/clusters", nil)
	if err := authorize(req); err != nil || req.Header.Get("Authorization") != "Bearer "+tok {
		t.Errorf("authorize: %v, header %q", err, req.Header.Get("Authorization"))
	}
	at, ok := c.Transport.(*adminTransport)
	if !ok || at.base.(*http.Transport).TLSClientConfig == nil || at.base.(*http.Transport).TLSClientConfig.RootCAs == nil {
		t.Fatalf("client transport %T has no TLS configuration with the CA", c.Transport)
	}
	seen := &recorder{}
	at.base = seen
	req, _ = http.NewRequest(http.MethodGet, "https://h/admin/v2/clusters", nil)
	if _, err := c.Do(req); err != nil {
		t.Fatal(err)
	}
	if seen.auth != "Bearer "+tok || req.Header.Get("Authorization") != "" {
		t.Errorf("the client sent %q and changed the caller's request (%q)", seen.auth, req.Header.Get("Authorization"))
	}

	c, authorize, err = AdminHTTP(nil)
	if err != nil {
		t.Fatal(err)
	}
	req, _ = http.NewRequest(http.MethodGet, "http://h/admin/v2/clusters", nil)
	if err := authorize(req); err != nil || req.Header.Get("Authorization") != "" || c == nil {
		t.Errorf("anonymous authorize: %v, header %q", err, req.Header.Get("Authorization"))
	}
}

type recorder struct{ auth string }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.auth = req.Header.Get("Authorization")
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
}

func TestSecurityInfo(t *testing.T) {
	ca, err := testcerts.NewCA(t.TempDir(), "ca")
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.Issue("client", testcerts.Options{Client: true})
	if err != nil {
		t.Fatal(err)
	}
	tok := writeFile(t, "t", jwt(t, map[string]any{"sub": "alice"}))
	tests := []struct {
		name string
		sec  *driver.Security
		tls  bool
		want v1alpha1.SecurityInfo
	}{
		{"plaintext", nil, false, v1alpha1.SecurityInfo{Protocol: "pulsar"}},
		{"token over plaintext", &driver.Security{Mechanism: "Token", TokenFile: tok}, false, v1alpha1.SecurityInfo{Protocol: "pulsar", Mechanism: "Token"}},
		{"system roots", nil, true, v1alpha1.SecurityInfo{Protocol: "pulsar+ssl", Verification: "full"}},
		{"client certificate alone", &driver.Security{TLS: &driver.TLSFiles{CAFile: ca.CertFile, CertFile: client.CertFile, KeyFile: client.KeyFile}}, true,
			v1alpha1.SecurityInfo{Protocol: "pulsar+ssl", Mechanism: "TLS", ClientCertificate: true, Verification: "full"}},
		{"token, no hostname check", &driver.Security{TLS: &driver.TLSFiles{CAFile: ca.CertFile, SkipHostnameVerification: true}, Mechanism: "Token", TokenFile: tok}, true,
			v1alpha1.SecurityInfo{Protocol: "pulsar+ssl", Mechanism: "Token", Verification: "no-hostname"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := newClientSecurity(tt.sec, tt.tls)
			if err != nil {
				t.Fatal(err)
			}
			// No connection yet: no negotiated version (the secured
			// brokers' test sees one).
			if got := (&Driver{sec: s}).SecurityInfo(); got != tt.want {
				t.Errorf("SecurityInfo = %+v; want %+v", got, tt.want)
			}
		})
	}
}

func TestOAuth2Refusals(t *testing.T) {
	secret := writeFile(t, "s", "s3cret\n")
	tests := []struct {
		name string
		o    *driver.OAuth2Files
		want string
	}{
		{"no grant", nil, "needs " + fieldOAuth2},
		{"token endpoint alone", &driver.OAuth2Files{TokenEndpoint: "https://idp/token", ClientID: "c", ClientSecretFile: secret}, "issuerURL is empty"},
		{"no client id", &driver.OAuth2Files{IssuerURL: "https://idp", ClientSecretFile: secret}, "clientID is empty"},
		{"missing secret", &driver.OAuth2Files{IssuerURL: "https://idp", ClientID: "c", ClientSecretFile: filepath.Join(t.TempDir(), "absent")}, "absent: no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newClientSecurity(&driver.Security{Mechanism: "OAuth2", OAuth2: tt.o}, false)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("newClientSecurity = %v; want an error with %q", err, tt.want)
			}
		})
	}
	if _, err := newClientSecurity(&driver.Security{Mechanism: "SCRAM-SHA-512"}, false); err == nil || !strings.Contains(err.Error(), "Token or OAuth2") {
		t.Errorf("a Kafka mechanism: %v", err)
	}
}

// An error that quotes a secret is scrubbed of it.
func TestScrub(t *testing.T) {
	s := &clientSecurity{secrets: []string{"hunter2"}}
	if got := s.scrub(errString("bad credentials hunter2 for x")).Error(); got != "bad credentials [redacted] for x" {
		t.Errorf("scrub = %q", got)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
