package kafka

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/testcerts"
	"github.com/streambench/streambench-operator/internal/testoauth"
)

func secretFile(t *testing.T, value string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "client-secret")
	if err := os.WriteFile(p, []byte(value), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTokenSourceCachesAndRefreshes asks a real issuer (testoauth) through
// one token source on a clock of its own: the token is reused until 80% of
// its lifetime, then a new one is granted before the old one expires.
func TestTokenSourceCachesAndRefreshes(t *testing.T) {
	iss, err := testoauth.Start(t.TempDir(), "c1", "s3cr3t-value", "aud")
	if err != nil {
		t.Fatal(err)
	}
	defer iss.Close()
	iss.TTL = 100 * time.Second
	ts, err := newTokenSource(&driver.OAuth2Files{TokenEndpoint: iss.TokenURL, ClientID: "c1", ClientSecretFile: secretFile(t, "s3cr3t-value\n")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Now()
	now := base
	ts.now = func() time.Time { return now }
	ctx := context.Background()
	// The grants count the tokens asked for (testoauth's tokens carry its
	// own clock's seconds, so two grants in one second are the same JWT).
	for _, step := range []struct {
		at         time.Duration
		wantGrants int64
	}{
		{0, 1}, {50 * time.Second, 1}, {79 * time.Second, 1}, {81 * time.Second, 2}, {100 * time.Second, 2}, {162 * time.Second, 3},
	} {
		now = base.Add(step.at)
		tok, err := ts.Token(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(tok, ".") != 2 {
			t.Fatalf("at %s: token %q is not a JWT", step.at, tok)
		}
		if g := iss.Grants.Load(); g != step.wantGrants {
			t.Errorf("at %s: %d grants, want %d", step.at, g, step.wantGrants)
		}
	}
}

// TestTokenSourceErrors: each refusal of the token endpoint says why and
// what to fix, naming the client and the secret's file, never the secret.
func TestTokenSourceErrors(t *testing.T) {
	const secret = "never-in-an-error-42"
	tests := []struct {
		name   string
		status int
		body   any
		want   []string
	}{
		{"wrong client or secret", 401, map[string]string{"error": "invalid_client", "error_description": "bad secret"},
			[]string{"refused client c1", "HTTP 401 invalid_client (bad secret)", "oauth2.clientID", "client-secret"}},
		{"scope not granted", 400, map[string]string{"error": "invalid_scope"},
			[]string{"does not grant scope \"kafka\"", "fix spec.cluster.existing.authentication.oauth2.scope"}},
		{"grant not allowed", 400, map[string]string{"error": "unauthorized_client"},
			[]string{"may not use the client-credentials grant"}},
		{"not a token endpoint", 404, "not found",
			[]string{"HTTP 404", "is not a token endpoint"}},
		{"no access token", 200, map[string]string{"token_type": "Bearer"},
			[]string{"without an access_token", "is spec.cluster.existing.authentication.oauth2.tokenEndpoint the token endpoint"}},
		{"not a bearer token", 200, map[string]string{"access_token": "x", "token_type": "mac"},
			[]string{`type "mac"`, "needs a Bearer token"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				id, pw, basic := r.BasicAuth()
				if err := r.ParseForm(); err != nil || !basic || id != "c1" || pw != url.QueryEscape(secret) || r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("scope") != "kafka" {
					t.Errorf("the grant is not a client-credentials form with the scope, the client in HTTP Basic: %v %v basic=%v", err, r.PostForm, basic)
				}
				if r.PostForm.Has("client_secret") {
					t.Errorf("the client secret is in the body too")
				}
				w.WriteHeader(tt.status)
				_ = json.NewEncoder(w).Encode(tt.body)
			}))
			defer srv.Close()
			ts, err := newTokenSource(&driver.OAuth2Files{TokenEndpoint: srv.URL, ClientID: "c1", ClientSecretFile: secretFile(t, secret), Scope: "kafka"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ts.Token(context.Background())
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\nlacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error holds the client secret: %v", err)
			}
		})
	}
	t.Run("endpoint down", func(t *testing.T) {
		ts, err := newTokenSource(&driver.OAuth2Files{TokenEndpoint: "http://127.0.0.1:1/token", ClientID: "c1", ClientSecretFile: secretFile(t, secret)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ts.Token(context.Background()); err == nil || !strings.Contains(err.Error(), "does not answer") {
			t.Fatalf("Token() = %v; want an error saying the endpoint does not answer", err)
		}
	})
}

func TestTokenLifetime(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	jwt := func(claims string) string {
		return "e30." + base64.RawURLEncoding.EncodeToString([]byte(claims)) + ".sig"
	}
	tests := []struct {
		name      string
		expiresIn string
		token     string
		want      time.Duration
	}{
		{"expires_in", `3600`, "opaque", time.Hour},
		{"expires_in as a string", `"120"`, "opaque", 2 * time.Minute},
		{"the JWT's exp", ``, jwt(`{"exp":1700000300}`), 5 * time.Minute},
		{"an expired JWT is not cached", ``, jwt(`{"exp":1699999000}`), 0},
		{"an opaque token without expires_in is not cached", ``, "opaque", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tokenLifetime(json.RawMessage(tt.expiresIn), tt.token, now); got != tt.want {
				t.Errorf("tokenLifetime = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestTokenEndpointTrustsTheRunsCA: an https token endpoint signed by the
// cluster's private CA (spec.cluster.existing.tls.ca) is trusted beside
// the system's roots, as Kafka's Java client trusts its ssl.truststore
// there; without that CA the grant fails.
func TestTokenEndpointTrustsTheRunsCA(t *testing.T) {
	dir := t.TempDir()
	ca, err := testcerts.NewCA(dir, "idp-ca")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.Issue("idp", testcerts.Options{Names: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(pair.CertFile, pair.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "tok", "token_type": "Bearer", "expires_in": 60})
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	defer srv.Close()
	grant := func(files *driver.TLSFiles) error {
		roots, err := driver.TrustedWithSystem(files)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := newTokenSource(&driver.OAuth2Files{TokenEndpoint: srv.URL, ClientID: "c1", ClientSecretFile: secretFile(t, "s")}, roots)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ts.Token(context.Background())
		return err
	}
	if err := grant(&driver.TLSFiles{CAFile: ca.CertFile}); err != nil {
		t.Errorf("with the run's CA: %v", err)
	}
	if err := grant(nil); err == nil || !strings.Contains(err.Error(), "does not answer") {
		t.Errorf("with the system's roots only: %v, want a refusal of the endpoint's certificate", err)
	}
}
