package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/streambench/streambench-operator/internal/driver"
)

// OAUTHBEARER's token: an OAuth 2.0 client-credentials grant (RFC 6749
// 4.4), as Kafka's own client gets it with sasl.oauthbearer.token.endpoint.url.
// Every client of a driver shares one tokenSource, so the clients of a run
// ask the issuer once per token lifetime, not once per connection.

const (
	oauthField       = "spec.cluster.existing.authentication.oauth2"
	tokenHTTPTimeout = 10 * time.Second
	// A token is refreshed after this share of its lifetime, so a
	// connection made near its end never presents an expired one.
	tokenRefreshShare = 0.8
	// maxErrorText bounds what an issuer's error answer may put in ours.
	maxErrorText = 200
)

// tokenSource fetches and caches the access token of one client.
type tokenSource struct {
	endpoint   string
	form       url.Values // the grant: type, scope, audience
	clientID   string
	secret     string
	secretFile string
	client     *http.Client
	now        func() time.Time

	mu        sync.Mutex
	token     string
	refreshAt time.Time
}

// newTokenSource reads the client secret once. The token endpoint is
// required: Kafka's clients take it, not the issuer's metadata.
//
// roots are the CAs an https token endpoint may be signed by (nil: the
// system's).
func newTokenSource(o *driver.OAuth2Files, roots *x509.CertPool) (*tokenSource, error) {
	if o.TokenEndpoint == "" {
		return nil, fmt.Errorf("%s.tokenEndpoint is empty: OAUTHBEARER needs the issuer's token endpoint (Kafka's sasl.oauthbearer.token.endpoint.url), e.g. https://issuer.example/oauth2/token", oauthField)
	}
	u, err := url.Parse(o.TokenEndpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("%s.tokenEndpoint %q is not an http(s) URL", oauthField, o.TokenEndpoint)
	}
	if o.ClientID == "" {
		return nil, fmt.Errorf("%s.clientID is empty; set the client's id", oauthField)
	}
	secret, err := readSecretFile(o.ClientSecretFile, "the OAuth2 client secret", oauthField+".clientSecret")
	if err != nil {
		return nil, err
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	if o.Scope != "" {
		form.Set("scope", o.Scope)
	}
	if o.Audience != "" {
		form.Set("audience", o.Audience)
	}
	return &tokenSource{
		endpoint: o.TokenEndpoint, form: form, clientID: o.ClientID, secret: secret, secretFile: o.ClientSecretFile,
		client: &http.Client{Timeout: tokenHTTPTimeout, Transport: &http.Transport{
			Proxy:           http.ProxyFromEnvironment,
			TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots},
		}}, now: time.Now,
	}, nil
}

// Token is the cached token, or a new one when the cached one is past
// tokenRefreshShare of its lifetime.
func (s *tokenSource) Token(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.token != "" && now.Before(s.refreshAt) {
		return s.token, nil
	}
	tok, lifetime, err := s.fetch(ctx)
	if err != nil {
		return "", err
	}
	s.token, s.refreshAt = tok, now.Add(time.Duration(float64(lifetime)*tokenRefreshShare))
	return tok, nil
}

// tokenAnswer is the token endpoint's answer, success or error (RFC 6749
// 5.1 and 5.2).
type tokenAnswer struct {
	AccessToken string          `json:"access_token"`
	TokenType   string          `json:"token_type"`
	ExpiresIn   json.RawMessage `json:"expires_in"`
	Error       string          `json:"error"`
	Description string          `json:"error_description"`
}

// fetch asks for a token; lifetime 0 means not to cache it.
func (s *tokenSource) fetch(ctx context.Context) (string, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, strings.NewReader(s.form.Encode()))
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	// The client authenticates with HTTP Basic, each part form-encoded
	// (RFC 6749 2.3.1: every authorization server must take it; the
	// credentials in the body are "NOT RECOMMENDED"), as Kafka's Java
	// client sends them.
	req.SetBasicAuth(url.QueryEscape(s.clientID), url.QueryEscape(s.secret))
	resp, err := s.client.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("OAuth2 token endpoint %s (%s.tokenEndpoint) does not answer: %w; check the URL and that this pod can reach it", s.endpoint, oauthField, stripURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", 0, fmt.Errorf("OAuth2 token endpoint %s: reading its answer: %w", s.endpoint, err)
	}
	var a tokenAnswer
	jsonErr := json.Unmarshal(body, &a)
	if resp.StatusCode/100 != 2 || a.Error != "" {
		return "", 0, s.refused(resp.StatusCode, a)
	}
	if jsonErr != nil || a.AccessToken == "" {
		return "", 0, fmt.Errorf("OAuth2 token endpoint %s answered HTTP %d without an access_token in JSON; is %s.tokenEndpoint the token endpoint (not the issuer or its metadata)?", s.endpoint, resp.StatusCode, oauthField)
	}
	if t := strings.ToLower(a.TokenType); t != "" && t != "bearer" {
		return "", 0, fmt.Errorf("OAuth2 token endpoint %s granted a token of type %q; OAUTHBEARER needs a Bearer token", s.endpoint, a.TokenType)
	}
	return a.AccessToken, tokenLifetime(a.ExpiresIn, a.AccessToken, s.now()), nil
}

// refused says why the endpoint refused the grant, with the issuer's own
// words (bounded: they come from outside) and what to check.
func (s *tokenSource) refused(status int, a tokenAnswer) error {
	what := fmt.Sprintf("HTTP %d", status)
	if a.Error != "" {
		what += " " + clip(a.Error)
	}
	if a.Description != "" {
		what += " (" + clip(a.Description) + ")"
	}
	fix := "check the endpoint and the client's grants"
	switch {
	case a.Error == "invalid_client" || status == http.StatusUnauthorized:
		fix = fmt.Sprintf("the issuer does not know client %s or its secret is wrong: check %s.clientID and the secret in %s (%s.clientSecret)", s.clientID, oauthField, s.secretFile, oauthField)
	case a.Error == "invalid_scope":
		fix = fmt.Sprintf("the issuer does not grant scope %q to client %s: fix %s.scope", s.form.Get("scope"), s.clientID, oauthField)
	case a.Error == "unauthorized_client" || a.Error == "unsupported_grant_type":
		fix = fmt.Sprintf("client %s may not use the client-credentials grant: allow it at the issuer", s.clientID)
	case status == http.StatusNotFound || status == http.StatusMethodNotAllowed:
		fix = fmt.Sprintf("%s is not a token endpoint: fix %s.tokenEndpoint", s.endpoint, oauthField)
	}
	return fmt.Errorf("OAuth2 token endpoint %s refused client %s: %s; %s", s.endpoint, s.clientID, what, fix)
}

// tokenLifetime is expires_in, or else the token's own exp claim (Kafka's
// tokens are JWTs), or else 0: not cached.
func tokenLifetime(expiresIn json.RawMessage, token string, now time.Time) time.Duration {
	var secs float64
	if len(expiresIn) > 0 {
		var n json.Number
		if json.Unmarshal(expiresIn, &n) == nil {
			secs, _ = n.Float64()
		} else {
			// Some issuers send "3600".
			var str string
			if json.Unmarshal(expiresIn, &str) == nil {
				_, _ = fmt.Sscan(str, &secs)
			}
		}
	}
	if secs > 0 {
		return time.Duration(secs * float64(time.Second))
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return 0
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return 0
	}
	var claims struct {
		Exp float64 `json:"exp"`
	}
	if json.Unmarshal(raw, &claims) != nil || claims.Exp == 0 {
		return 0
	}
	if d := time.Unix(int64(claims.Exp), 0).Sub(now); d > 0 {
		return d
	}
	return 0
}

// stripURLError drops url.Error's "Post <url>:" prefix, which our message
// already says.
func stripURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func clip(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' {
			return ' '
		}
		return r
	}, s)
	if len(s) > maxErrorText {
		return s[:maxErrorText] + "..."
	}
	return s
}

// readSecretFile reads a secret value from path once. Errors name the file
// and the setting, never the value. A trailing newline (a Secret made with
// echo ... | kubectl create secret --from-file) is not part of it.
func readSecretFile(path, what, field string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("%s has no file (%s): set it", what, field)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading %s (%s): %w; check that the Secret and its key exist and are mounted", what, field, err)
	}
	v := strings.TrimRight(string(b), "\r\n")
	if v == "" {
		return "", fmt.Errorf("%s in %s (%s) is empty; put the value in the Secret's key", what, path, field)
	}
	return v, nil
}
