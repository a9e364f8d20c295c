package testoauth

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

// TestGrantAndVerify: a granted token verifies with the published public
// key and carries the client as subject; a wrong secret is refused.
func TestGrantAndVerify(t *testing.T) {
	s, err := Start(t.TempDir(), "bench", "s3cret", "urn:pulsar")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := http.PostForm(s.TokenURL, url.Values{"grant_type": {"client_credentials"}, "client_id": {"bench"}, "client_secret": {"s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 {
		t.Fatalf("grant: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	claims := verify(t, s, body.AccessToken)
	if claims["sub"] != "bench" || claims["aud"] != "urn:pulsar" {
		t.Errorf("claims %v", claims)
	}
	if exp := int64(claims["exp"].(float64)); exp < time.Now().Unix() {
		t.Errorf("granted token already expired: %d", exp)
	}
	if exp := int64(verify(t, s, s.Mint("x", -time.Minute))["exp"].(float64)); exp > time.Now().Unix() {
		t.Errorf("Mint with a negative ttl is not expired: %d", exp)
	}
	bad, err := http.PostForm(s.TokenURL, url.Values{"grant_type": {"client_credentials"}, "client_id": {"bench"}, "client_secret": {"wrong"}})
	if err != nil {
		t.Fatal(err)
	}
	bad.Body.Close()
	if bad.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong secret answered %d, want 401", bad.StatusCode)
	}
	if s.Grants.Load() != 1 {
		t.Errorf("grants %d, want 1", s.Grants.Load())
	}
}

func verify(t *testing.T, s *Server, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	raw, err := os.ReadFile(s.PublicKeyPEMFile)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(raw)
	pub, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub.(*rsa.PublicKey), crypto.SHA256, sum[:], sig); err != nil {
		t.Fatalf("signature does not verify with the published key: %v", err)
	}
	js, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c map[string]any
	if err := json.Unmarshal(js, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBasicCredentialsAreFormDecoded: a secret with ':' '+' and '/' sent
// as RFC 6749 2.3.1 says (form-encoded, then Basic) is the client's.
func TestBasicCredentialsAreFormDecoded(t *testing.T) {
	const secret = "a:b+c/d é"
	s, err := Start(t.TempDir(), "bench client", secret, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tt := range []struct {
		id, secret string
		want       int
	}{
		{url.QueryEscape("bench client"), url.QueryEscape(secret), http.StatusOK},
		{url.QueryEscape("bench client"), url.QueryEscape("wrong"), http.StatusUnauthorized},
	} {
		req, _ := http.NewRequest(http.MethodPost, s.TokenURL, strings.NewReader("grant_type=client_credentials"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(tt.id, tt.secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("secret %q: HTTP %d, want %d", tt.secret, resp.StatusCode, tt.want)
		}
	}
}
