// Package testoauth is an OAuth 2.0 / OpenID issuer for the security tests:
// a real HTTP server on loopback that grants client credentials and signs
// RS256 JWTs, so Kafka's OAUTHBEARER (JWKS validation) and Pulsar's OAuth2
// (tokens checked by the token provider's public key) are tested against
// real brokers. It is a stand-in for an identity provider, which cannot
// run here, and is named so.
package testoauth

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// Server is a running issuer.
type Server struct {
	// Issuer is the issuer URL (its /.well-known/openid-configuration
	// names the endpoints).
	Issuer string
	// TokenURL grants client_credentials (form POST, client_id and
	// client_secret in the form or as HTTP basic authentication).
	TokenURL string
	// JWKSURL serves the signing key.
	JWKSURL string
	// PublicKeyPEMFile is the signing key's public half, PEM (PKIX), as
	// Pulsar's tokenPublicKey reads it (file:///...).
	PublicKeyPEMFile string
	// KeyID is the "kid" of the tokens and of the JWKS key.
	KeyID string
	// ClientID and ClientSecret are the one client it knows.
	ClientID, ClientSecret string
	// Audience goes into the tokens' "aud" when set.
	Audience string
	// TTL of granted tokens (default 1 hour).
	TTL time.Duration

	// Grants counts the tokens granted.
	Grants atomic.Int64

	key *rsa.PrivateKey
	srv *http.Server
	ln  net.Listener
}

// Start serves an issuer on 127.0.0.1 for one client and writes its public
// key into dir.
func Start(dir, clientID, clientSecret, audience string) (*Server, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	pub := filepath.Join(dir, "oauth-public.pem")
	if err := os.WriteFile(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	base := "http://" + ln.Addr().String()
	s := &Server{
		Issuer: base, TokenURL: base + "/oauth2/token", JWKSURL: base + "/jwks.json",
		PublicKeyPEMFile: pub, KeyID: "testoauth-1", ClientID: clientID, ClientSecret: clientSecret,
		Audience: audience, TTL: time.Hour, key: key, ln: ln,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", s.discovery)
	mux.HandleFunc("/.well-known/oauth-authorization-server", s.discovery)
	mux.HandleFunc("/oauth2/token", s.token)
	mux.HandleFunc("/jwks.json", s.jwks)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Mint signs a token for subject valid for ttl from now; a negative ttl
// makes a token that has expired.
func (s *Server) Mint(subject string, ttl time.Duration) string {
	now := time.Now()
	claims := map[string]any{
		"sub": subject, "iss": s.Issuer, "iat": now.Add(-time.Minute).Unix(),
		"nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(ttl).Unix(), "scope": "streambench",
	}
	if ttl < 0 {
		claims["iat"] = now.Add(2 * ttl).Unix()
		claims["nbf"] = now.Add(2 * ttl).Unix()
	}
	if s.Audience != "" {
		claims["aud"] = s.Audience
	}
	return s.sign(claims)
}

func (s *Server) sign(claims map[string]any) string {
	h, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": s.KeyID})
	c, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(c)
	sum := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA256, sum[:])
	if err != nil {
		panic(err) // a 2048-bit key signing a SHA-256 digest cannot fail
	}
	return input + "." + enc.EncodeToString(sig)
}

func (s *Server) discovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer": s.Issuer, "token_endpoint": s.TokenURL, "jwks_uri": s.JWKSURL,
		"grant_types_supported": []string{"client_credentials"},
	})
}

func (s *Server) jwks(w http.ResponseWriter, _ *http.Request) {
	enc := base64.RawURLEncoding
	writeJSON(w, http.StatusOK, map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "use": "sig", "alg": "RS256", "kid": s.KeyID,
		"n": enc.EncodeToString(s.key.N.Bytes()),
		"e": enc.EncodeToString(big.NewInt(int64(s.key.E)).Bytes()),
	}}})
}

// token grants client_credentials to the one client, as RFC 6749 4.4; a
// wrong client gets 401 invalid_client, as real issuers answer.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "invalid_request", "error_description": "POST only"})
		return
	}
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": err.Error()})
		return
	}
	if g := r.PostForm.Get("grant_type"); g != "client_credentials" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type", "error_description": fmt.Sprintf("grant_type %q", g)})
		return
	}
	id, secret, ok := r.BasicAuth()
	if ok {
		// RFC 6749 2.3.1: each part is form-encoded before Basic.
		uid, err1 := url.QueryUnescape(id)
		usecret, err2 := url.QueryUnescape(secret)
		if err1 != nil || err2 != nil {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": "credentials not form-encoded"})
			return
		}
		id, secret = uid, usecret
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != s.ClientID || subtle.ConstantTimeCompare([]byte(secret), []byte(s.ClientSecret)) != 1 {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": "unknown client or wrong secret"})
		return
	}
	s.Grants.Add(1)
	tok := s.Mint(id, s.TTL)
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": tok, "token_type": "Bearer", "expires_in": int(s.TTL.Seconds()),
		"scope": strings.TrimSpace(r.PostForm.Get("scope")),
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
