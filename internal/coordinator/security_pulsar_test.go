package coordinator

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	pulsardriver "github.com/streambench/streambench-operator/internal/driver/pulsar"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/testcerts"
	"github.com/streambench/streambench-operator/internal/testoauth"
	"github.com/streambench/streambench-operator/internal/worker"
)

// failFastBound is how long a wrong configuration may take to fail: far
// below the Pulsar client's 30 s operation timeout (which is what a
// refused handshake or token costs without the driver's checks), with room
// for a busy 2-core machine.
const failFastBound = 15 * time.Second

// TestPulsarSecurity runs one Pulsar standalone (one bookie) with TLS ports
// and token authentication whose key is an OAuth2 issuer's (testoauth), so
// the same brokers take a token (Token) and the issuer's access tokens
// (OAuth2 client credentials). Each good configuration runs a short
// workload through the coordinator and two workers with nothing lost and
// the security in the result; each wrong one fails in seconds with an
// error that names the cause and the fix and carries no secret.
func TestPulsarSecurity(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ca, err := testcerts.NewCA(dir, "streambench-test")
	if err != nil {
		t.Fatal(err)
	}
	brokerCert, err := ca.Issue("pulsar-broker", testcerts.Options{Names: []string{"127.0.0.1", "localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	otherCA, err := testcerts.NewCA(dir, "someone-else")
	if err != nil {
		t.Fatal(err)
	}
	const clientID, clientSecret = "bench-client", "s3cret-9d81e6"
	issuer, err := testoauth.Start(dir, clientID, clientSecret, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = issuer.Close() })
	// Another issuer: its tokens are well-formed and valid, signed by a
	// key the brokers do not know.
	foreign, err := testoauth.Start(t.TempDir(), "x", "y", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = foreign.Close() })

	// One bookie: every ledger on it (ensemble, write and ack quorum 1).
	eff, err := durability.Translate(v1alpha1.SystemPulsar, v1alpha1.DurabilitySpec{
		Replication: &v1alpha1.ReplicationDurability{Mode: v1alpha1.ReplicationSync, Replicas: 1, AckReplicas: 1},
		Local:       &v1alpha1.LocalDurability{Mode: v1alpha1.LocalAsync},
	})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	p, err := localbrokers.StartPulsar(ctx, localbrokers.PulsarOptions{
		Bookies: 1, BrokerConfig: eff.Pulsar.Broker, BookieConfig: eff.Pulsar.Bookie, Log: t.Logf, JVM: localbrokers.PulsarTestJVM,
		Security: &localbrokers.PulsarSecurity{
			CertFile: brokerCert.CertFile, KeyFile: brokerCert.KeyFile,
			TokenPublicKeyFile: issuer.PublicKeyPEMFile, AdminToken: issuer.Mint("streambench-admin", 24*time.Hour),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("stopping Pulsar: %v", err)
		}
	})
	t.Logf("secured standalone ready in %s", time.Since(began).Round(time.Second))

	secret := func(name, value string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(value+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	goodToken := issuer.Mint("bench-user", time.Hour)
	trusted := &driver.TLSFiles{CAFile: ca.CertFile}
	tlsCfg := driver.Config{
		System: v1alpha1.SystemPulsar, Durability: eff, RunID: "sec",
		Brokers: v1alpha1.BrokerEndpoints{ServiceURL: p.ServiceURLTLS(), AdminURL: p.AdminURLTLS()},
	}
	urls := startWorkers(t, 2, worker.DefaultDrivers())

	good := []struct {
		name      string
		sec       *driver.Security
		mechanism string
	}{
		{"tls-token", &driver.Security{TLS: trusted, Mechanism: "Token", TokenFile: secret("token", goodToken)}, "Token"},
		{"tls-oauth2", &driver.Security{TLS: trusted, Mechanism: "OAuth2", OAuth2: &driver.OAuth2Files{
			IssuerURL: issuer.Issuer, ClientID: clientID, ClientSecretFile: secret("client-secret", clientSecret),
		}}, "OAuth2"},
	}
	for _, tt := range good {
		t.Run(tt.name, func(t *testing.T) {
			grants := issuer.Grants.Load()
			cfg := tlsCfg
			cfg.Security = tt.sec
			// ReadDurability: the coordinator's own read of the brokers'
			// settings (pulsar.AdminHTTP) goes through the same TLS and
			// credentials.
			res := runCase(t, urls, cfg, shortWorkload(tt.name, 200, 4), Options{ReadDurability: true})
			for _, n := range res.Notes {
				if strings.Contains(n, "could not be read") {
					t.Errorf("the brokers' durability was not read through %s: %s", tt.name, n)
				}
			}
			if res.Durability == nil || res.Durability.BrokerVersion != p.Version {
				t.Errorf("durability %+v; want it read from the brokers (version %s)", res.Durability, p.Version)
			}
			s := res.Security
			if s == nil {
				t.Fatal("the result has no security")
			}
			if s.Protocol != "pulsar+ssl" || s.Mechanism != tt.mechanism || !strings.HasPrefix(s.TLSVersion, "TLS 1.") || s.Verification != "full" || s.ClientCertificate {
				t.Errorf("security %+v; want pulsar+ssl, %s, a TLS 1.x version, full verification, no client certificate", *s, tt.mechanism)
			}
			t.Logf("%s: %+v; acked %d, lost %d", tt.name, *s, res.Accounting.Acked, res.Accounting.Lost)
			if tt.mechanism == "OAuth2" && issuer.Grants.Load() == grants {
				t.Errorf("the issuer granted no token: the clients did not use OAuth2")
			}
		})
	}

	// The plaintext ports of the standalone (StartPulsar's own clients use
	// them) ask for a token too.
	plainCfg := tlsCfg
	plainCfg.Brokers = v1alpha1.BrokerEndpoints{ServiceURL: p.ServiceURL(), AdminURL: p.AdminURL()}
	tlsPortPlaintext := plainCfg
	tlsPortPlaintext.Brokers.ServiceURL = strings.Replace(p.ServiceURLTLS(), "pulsar+ssl://", "pulsar://", 1)

	// An admin API that lets everyone in, in front of the real data port:
	// the check of the binary protocol's CONNECT must catch the refusal
	// itself (a proxy, or admin and data ports secured apart).
	openAdmin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`["standalone"]`))
	}))
	t.Cleanup(openAdmin.Close)
	dataPortOnly := plainCfg
	dataPortOnly.Brokers.AdminURL = openAdmin.URL

	expired := issuer.Mint("bench-user", -10*time.Minute)
	forged := foreign.Mint("bench-user", time.Hour)
	const badSecret = "not-the-secret-41c2"
	bad := []struct {
		name string
		cfg  driver.Config
		sec  *driver.Security
		// want are parts the error must have: the cause and the fix.
		want []string
	}{
		{"expired token", tlsCfg, &driver.Security{TLS: trusted, Mechanism: "Token", TokenFile: secret("expired", expired)},
			[]string{"expired at", "issue a new one", "authentication.token"}},
		{"token signed by another key", tlsCfg, &driver.Security{TLS: trusted, Mechanism: "Token", TokenFile: secret("forged", forged)},
			[]string{"refused the token", "not signed by the key the brokers verify with", "tokenPublicKey", "cluster's own signing key"}},
		{"untrusted CA", tlsCfg, &driver.Security{TLS: &driver.TLSFiles{CAFile: otherCA.CertFile}, Mechanism: "Token", TokenFile: secret("token", goodToken)},
			[]string{"CA the client does not trust", "spec.cluster.existing.tls.ca"}},
		{"wrong server name", tlsCfg, &driver.Security{TLS: &driver.TLSFiles{CAFile: ca.CertFile, ServerName: "pulsar.example.com"}, Mechanism: "Token", TokenFile: secret("token", goodToken)},
			[]string{"not for the name the client checks", "serverName"}},
		{"plaintext URL to the TLS port", tlsPortPlaintext, &driver.Security{Mechanism: "Token", TokenFile: secret("token", goodToken)},
			[]string{"reaches a TLS listener", "pulsar+ssl://", "spec.cluster.existing.tls"}},
		{"TLS with a pulsar:// URL", tlsPortPlaintext, &driver.Security{TLS: trusted, Mechanism: "Token", TokenFile: secret("token", goodToken)},
			[]string{"plaintext", "pulsar+ssl://host:6651", "serviceURL"}},
		{"bad OAuth2 client secret", tlsCfg, &driver.Security{TLS: trusted, Mechanism: "OAuth2", OAuth2: &driver.OAuth2Files{
			IssuerURL: issuer.Issuer, ClientID: clientID, ClientSecretFile: secret("bad-secret", badSecret),
		}}, []string{"refused client " + clientID, "invalid_client", "client secret", "oauth2.clientSecret"}},
		{"missing token file", tlsCfg, &driver.Security{TLS: trusted, Mechanism: "Token", TokenFile: filepath.Join(dir, "no-such-token")},
			[]string{"no-such-token", "no such file", "authentication.token", "create it"}},
		{"no token where the brokers require one", tlsCfg, &driver.Security{TLS: trusted},
			[]string{"requires authentication", "gives none", "spec.cluster.existing.authentication"}},
		{"no token on the plaintext port", plainCfg, nil,
			[]string{"requires authentication", "gives none"}},
		{"data port refuses the token", dataPortOnly, &driver.Security{Mechanism: "Token", TokenFile: secret("forged", forged)},
			[]string{"the broker at " + p.ServiceURL() + " refused the token", "not signed by the key the brokers verify with", "the broker said:"}},
	}
	secrets := []string{goodToken, expired, forged, clientSecret, badSecret}
	for _, tt := range bad {
		t.Run("fails fast/"+tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Security = tt.sec
			cfg.RunID = "bad"
			start := time.Now()
			d, err := pulsardriver.New(ctx, cfg)
			took := time.Since(start)
			if err == nil {
				d.Close()
				t.Fatalf("New succeeded; want an error containing %q", tt.want)
			}
			t.Logf("failed in %s: %v", took.Round(time.Millisecond), err)
			if took > failFastBound {
				t.Errorf("took %s to fail; want well under the client's 30 s operation timeout (bound %s)", took, failFastBound)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q", w)
				}
			}
			for _, s := range secrets {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error carries a secret value")
				}
			}
		})
	}

	// Through the coordinator, a wrong configuration fails the run as
	// fast, with the driver's words.
	t.Run("fails fast/through a run", func(t *testing.T) {
		cfg := tlsCfg
		cfg.Security = &driver.Security{TLS: trusted, Mechanism: "Token", TokenFile: secret("forged", forged)}
		cfg.RunID = "badrun"
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		start := time.Now()
		_, err := Run(ctx, Options{Workers: urls, Driver: cfg, Workload: shortWorkload("bad", 200, 4), SnapshotInterval: 2 * time.Second, Logf: t.Logf})
		took := time.Since(start)
		if err == nil {
			t.Fatal("the run succeeded with a token signed by another key")
		}
		t.Logf("run failed in %s: %v", took.Round(time.Millisecond), err)
		if took > failFastBound {
			t.Errorf("took %s to fail; bound %s", took, failFastBound)
		}
		if !strings.Contains(err.Error(), "not signed by the key the brokers verify with") || strings.Contains(err.Error(), forged) {
			t.Errorf("the run's error does not carry the driver's explanation, or carries the token")
		}
	})
}
