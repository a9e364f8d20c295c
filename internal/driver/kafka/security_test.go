package kafka

// The driver on secured listeners of the package's real cluster: each good
// configuration connects, says what it negotiated and carries a message
// through a producer and a consumer; each wrong one fails in seconds with
// an error that says what is wrong and how to fix it, and never holds a
// secret.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/testcerts"
	"github.com/streambench/streambench-operator/internal/testoauth"
)

// Test credentials. Each is distinctive, so a leak into an error is found.
const (
	testUser      = "alice"
	testPassword  = "alice-secret-7Q4"
	wrongPassword = "not-alices-password-9Z2"
	oauthClientID = "sb-kafka-client"
	oauthSecret   = "sb-oauth-secret-3K8"
	wrongSecret   = "sb-wrong-secret-5M1"
	oauthAudience = "streambench-kafka"
)

// failBound is how fast a wrong configuration must fail: far below the
// 30 s that New's first request (and kgo's retries) would otherwise take,
// with room for a busy shared machine.
const failBound = 15 * time.Second

// fixture holds the secured listeners' certificates, credentials and
// OAuth issuers, made once with the package's cluster.
var fixture = &secFixture{}

type secFixture struct {
	dir                                                       string
	ca                                                        *testcerts.CA
	other                                                     *testcerts.CA
	broker, expiredBroker, client, expiredClient, otherClient testcerts.Pair
	passwordFile, wrongPasswordFile                           string
	secretFile, wrongSecretFile                               string
	// issuer is the one the brokers trust; stranger grants tokens signed
	// by a key the brokers do not know.
	issuer, stranger *testoauth.Server
}

// The listeners, by name.
const (
	listenerSASL    = "SASL"    // SASL_SSL: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER
	listenerMTLS    = "MTLS"    // SSL, client certificate required
	listenerExpired = "EXPIRED" // SSL with an expired broker certificate
	listenerSCRAM   = "SCRAM"   // SASL_PLAINTEXT: SCRAM-SHA-512 only
	listenerTLS12   = "TLS12"   // SSL, TLS 1.2 only
	listenerPlain   = "PLAINTEXT"
)

func (f *secFixture) listeners() (_ []localbrokers.KafkaListener, err error) {
	if f.dir, err = os.MkdirTemp("", "streambench-kafka-security-"); err != nil {
		return nil, err
	}
	if f.ca, err = testcerts.NewCA(f.dir, "sb-test"); err != nil {
		return nil, err
	}
	if f.other, err = testcerts.NewCA(f.dir, "other"); err != nil {
		return nil, err
	}
	names := []string{"127.0.0.1", "localhost"}
	for _, c := range []struct {
		p  *testcerts.Pair
		ca *testcerts.CA
		cn string
		o  testcerts.Options
	}{
		{&f.broker, f.ca, "broker", testcerts.Options{Names: names}},
		{&f.expiredBroker, f.ca, "broker-expired", testcerts.Options{Names: names, Expired: true}},
		{&f.client, f.ca, "client", testcerts.Options{Client: true}},
		{&f.expiredClient, f.ca, "client-expired", testcerts.Options{Client: true, Expired: true}},
		{&f.otherClient, f.other, "client-other", testcerts.Options{Client: true}},
	} {
		if *c.p, err = c.ca.Issue(c.cn, c.o); err != nil {
			return nil, err
		}
	}
	for _, s := range []struct {
		path  *string
		name  string
		value string
	}{
		{&f.passwordFile, "password", testPassword},
		{&f.wrongPasswordFile, "wrong-password", wrongPassword},
		{&f.secretFile, "client-secret", oauthSecret},
		{&f.wrongSecretFile, "wrong-client-secret", wrongSecret},
	} {
		*s.path = filepath.Join(f.dir, s.name)
		// A trailing newline, as `echo ... | kubectl create secret
		// --from-file` leaves: not part of the value.
		if err := os.WriteFile(*s.path, []byte(s.value+"\n"), 0o600); err != nil {
			return nil, err
		}
	}
	if f.issuer, err = testoauth.Start(f.dir, oauthClientID, oauthSecret, oauthAudience); err != nil {
		return nil, err
	}
	strangerDir := filepath.Join(f.dir, "stranger")
	if err := os.Mkdir(strangerDir, 0o700); err != nil {
		return nil, err
	}
	if f.stranger, err = testoauth.Start(strangerDir, oauthClientID, oauthSecret, oauthAudience); err != nil {
		return nil, err
	}
	users := []localbrokers.KafkaUser{{Name: testUser, Password: testPassword}}
	return []localbrokers.KafkaListener{
		{
			Name: listenerSASL, Protocol: localbrokers.ListenerSASLSSL, CertFile: f.broker.CertFile, KeyFile: f.broker.KeyFile,
			Mechanisms: []string{localbrokers.MechanismPlain, localbrokers.MechanismSCRAMSHA256, localbrokers.MechanismSCRAMSHA512, localbrokers.MechanismOAuthBearer},
			Users:      users,
			OAuth:      &localbrokers.KafkaOAuth{JWKSURL: f.issuer.JWKSURL, Issuer: f.issuer.Issuer, Audience: oauthAudience},
		},
		{
			Name: listenerMTLS, Protocol: localbrokers.ListenerSSL, CertFile: f.broker.CertFile, KeyFile: f.broker.KeyFile,
			ClientCAFile: f.ca.CertFile, RequireClientCert: true,
		},
		{Name: listenerExpired, Protocol: localbrokers.ListenerSSL, CertFile: f.expiredBroker.CertFile, KeyFile: f.expiredBroker.KeyFile},
		{Name: listenerSCRAM, Protocol: localbrokers.ListenerSASLPlaintext, Mechanisms: []string{localbrokers.MechanismSCRAMSHA512}, Users: users},
		{Name: listenerTLS12, Protocol: localbrokers.ListenerSSL, CertFile: f.broker.CertFile, KeyFile: f.broker.KeyFile, TLSProtocols: []string{"TLSv1.2"}},
	}, nil
}

func (f *secFixture) close() {
	for _, s := range []*testoauth.Server{f.issuer, f.stranger} {
		if s != nil {
			_ = s.Close()
		}
	}
	if f.dir != "" {
		_ = os.RemoveAll(f.dir)
	}
}

// secrets are the values no error may hold.
var secrets = []string{testPassword, wrongPassword, oauthSecret, wrongSecret}

// securedConfig is a driver configuration for listener with sec.
func securedConfig(t *testing.T, listener string, sec *driver.Security) driver.Config {
	t.Helper()
	k := kafkaCluster(t)
	bootstrap := k.Bootstrap()
	if listener != listenerPlain {
		var err error
		if bootstrap, err = k.ListenerBootstrap(listener); err != nil {
			t.Fatal(err)
		}
	}
	return driver.Config{
		System: v1alpha1.SystemKafka, Brokers: v1alpha1.BrokerEndpoints{BootstrapServers: bootstrap},
		Durability: effective(t, v1alpha1.Level2), Security: sec,
		RunID: fmt.Sprintf("sec%d-%d", time.Now().UnixNano()%1e6, runSeq.Add(1)),
	}
}

func (f *secFixture) trustCA() *driver.TLSFiles { return &driver.TLSFiles{CAFile: f.ca.CertFile} }

func (f *secFixture) sasl(mech v1alpha1.AuthMechanism, user, passwordFile string, tls bool) *driver.Security {
	s := &driver.Security{Mechanism: string(mech), Username: user, PasswordFile: passwordFile}
	if tls {
		s.TLS = f.trustCA()
	}
	return s
}

func (f *secFixture) oauth(tokenURL, secretFile string) *driver.Security {
	return &driver.Security{
		TLS: f.trustCA(), Mechanism: string(v1alpha1.AuthOAuthBearer),
		OAuth2: &driver.OAuth2Files{TokenEndpoint: tokenURL, ClientID: oauthClientID, ClientSecretFile: secretFile, Scope: "streambench"},
	}
}

func (f *secFixture) mtls(p testcerts.Pair) *driver.Security {
	return &driver.Security{TLS: &driver.TLSFiles{CAFile: f.ca.CertFile, CertFile: p.CertFile, KeyFile: p.KeyFile}}
}

// TestSecurityGoodConfigurations connects with each good configuration,
// checks what the driver says it negotiated, and carries one message from
// a producer to a consumer (both clients of the driver, with its security).
func TestSecurityGoodConfigurations(t *testing.T) {
	kafkaCluster(t)
	f := fixture
	grants := f.issuer.Grants.Load()
	tests := []struct {
		name     string
		listener string
		sec      *driver.Security
		want     v1alpha1.SecurityInfo
	}{
		{"SASL_SSL SCRAM-SHA-512", listenerSASL, f.sasl(v1alpha1.AuthScramSHA512, testUser, f.passwordFile, true),
			v1alpha1.SecurityInfo{Protocol: "SASL_SSL", Mechanism: "SCRAM-SHA-512", TLSVersion: "TLS 1.3", Verification: "full"}},
		{"SASL_SSL SCRAM-SHA-256", listenerSASL, f.sasl(v1alpha1.AuthScramSHA256, testUser, f.passwordFile, true),
			v1alpha1.SecurityInfo{Protocol: "SASL_SSL", Mechanism: "SCRAM-SHA-256", TLSVersion: "TLS 1.3", Verification: "full"}},
		{"SASL_SSL PLAIN", listenerSASL, f.sasl(v1alpha1.AuthPlain, testUser, f.passwordFile, true),
			v1alpha1.SecurityInfo{Protocol: "SASL_SSL", Mechanism: "PLAIN", TLSVersion: "TLS 1.3", Verification: "full"}},
		{"SASL_SSL OAUTHBEARER", listenerSASL, f.oauth(f.issuer.TokenURL, f.secretFile),
			v1alpha1.SecurityInfo{Protocol: "SASL_SSL", Mechanism: "OAUTHBEARER", TLSVersion: "TLS 1.3", Verification: "full"}},
		{"SSL mutual TLS", listenerMTLS, f.mtls(f.client),
			v1alpha1.SecurityInfo{Protocol: "SSL", Mechanism: "TLS", TLSVersion: "TLS 1.3", ClientCertificate: true, Verification: "full"}},
		{"SSL TLS 1.2 only, hostname not verified", listenerTLS12, &driver.Security{TLS: &driver.TLSFiles{CAFile: f.ca.CertFile, ServerName: "not-the-broker.example", SkipHostnameVerification: true}},
			v1alpha1.SecurityInfo{Protocol: "SSL", TLSVersion: "TLS 1.2", Verification: "no-hostname"}},
		{"SASL_PLAINTEXT SCRAM-SHA-512", listenerSCRAM, f.sasl(v1alpha1.AuthScramSHA512, testUser, f.passwordFile, false),
			v1alpha1.SecurityInfo{Protocol: "SASL_PLAINTEXT", Mechanism: "SCRAM-SHA-512"}},
		{"PLAINTEXT", listenerPlain, nil, v1alpha1.SecurityInfo{Protocol: "PLAINTEXT"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			start := time.Now()
			d, err := New(ctx, securedConfig(t, tt.listener, tt.sec))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("connected in %s", time.Since(start).Round(time.Millisecond))
			defer func() {
				if err := d.DeleteTopics(ctx); err != nil {
					t.Errorf("DeleteTopics: %v", err)
				}
				if err := d.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			if got := d.SecurityInfo(); got != tt.want {
				t.Errorf("SecurityInfo() = %+v, want %+v", got, tt.want)
			}
			roundTrip(t, ctx, d)
		})
	}
	if n := f.issuer.Grants.Load() - grants; n != 1 {
		t.Errorf("the issuer granted %d tokens to one driver's clients (admin, producer, consumer); want 1, cached", n)
	}
}

// roundTrip sends one message through a producer and receives it with a
// consumer of the driver.
func roundTrip(t *testing.T, ctx context.Context, d *Driver) {
	t.Helper()
	topic := d.TopicName(0)
	if err := d.CreateTopics(ctx, []driver.Topic{{Name: topic, Partitions: 1}}); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	c, err := d.CreateConsumer(ctx, topic, "sec-sub", func(m driver.Message) {
		select {
		case got <- string(m.Payload):
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := d.CreateProducer(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	acked := make(chan error, 1)
	p.Send(ctx, nil, []byte("secured"), driver.Tag{}, driver.AckFunc(func(err error) { acked <- err }))
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-acked; err != nil {
		t.Fatalf("send: %v", err)
	}
	select {
	case m := <-got:
		if m != "secured" {
			t.Errorf("received %q, want %q", m, "secured")
		}
	case <-ctx.Done():
		t.Fatal("the consumer received nothing")
	}
}

// TestSecurityWrongConfigurationsFailFast gives New each wrong
// configuration: it must fail within failBound (not at the 30 s request
// timeout), with an error that names the cause and the fix, and holds no
// secret.
func TestSecurityWrongConfigurationsFailFast(t *testing.T) {
	kafkaCluster(t)
	f := fixture
	scram512 := func(user, pw string) *driver.Security { return f.sasl(v1alpha1.AuthScramSHA512, user, pw, true) }
	withTLS := func(s *driver.Security, tls *driver.TLSFiles) *driver.Security { s.TLS = tls; return s }
	tests := []struct {
		name     string
		listener string
		sec      *driver.Security
		want     []string
	}{
		{"SCRAM bad password", listenerSASL, scram512(testUser, f.wrongPasswordFile),
			[]string{"SCRAM-SHA-512 login of user alice", "the password is wrong", f.wrongPasswordFile, "spec.cluster.existing.authentication.password"}},
		{"SCRAM unknown user", listenerSASL, scram512("mallory", f.passwordFile),
			[]string{"no SCRAM-SHA-512 credential for user mallory", "fix spec.cluster.existing.authentication.username", "create the user"}},
		{"PLAIN bad password", listenerSASL, f.sasl(v1alpha1.AuthPlain, testUser, f.wrongPasswordFile, true),
			[]string{"PLAIN login of user alice", "unknown to the listener or the password is wrong", f.wrongPasswordFile}},
		{"untrusted CA", listenerSASL, withTLS(scram512(testUser, f.passwordFile), &driver.TLSFiles{CAFile: f.other.CertFile}),
			[]string{"signed by a CA the client does not trust", "spec.cluster.existing.tls.ca"}},
		{"wrong server name", listenerSASL, withTLS(scram512(testUser, f.passwordFile), &driver.TLSFiles{CAFile: f.ca.CertFile, ServerName: "kafka.example.com"}),
			[]string{"not for the name", "kafka.example.com", "spec.cluster.existing.tls.serverName"}},
		{"expired broker certificate", listenerExpired, &driver.Security{TLS: f.trustCA()},
			[]string{"expired", "renew"}},
		{"expired client certificate", listenerMTLS, f.mtls(f.expiredClient),
			[]string{"refused the client certificate", f.expiredClient.CertFile, "spec.cluster.existing.tls.clientCertificate"}},
		{"client certificate of another CA", listenerMTLS, f.mtls(f.otherClient),
			[]string{"refused the client certificate", f.otherClient.CertFile, "truststore"}},
		{"no client certificate on mutual TLS", listenerMTLS, &driver.Security{TLS: f.trustCA()},
			[]string{"requires a client certificate", "spec.cluster.existing.tls.clientCertificate"}},
		{"plaintext client on a TLS listener", listenerMTLS, nil,
			[]string{"is a TLS listener", "set spec.cluster.existing.tls"}},
		{"plaintext SASL client on a SASL_SSL listener", listenerSASL, f.sasl(v1alpha1.AuthScramSHA512, testUser, f.passwordFile, false),
			[]string{"is a TLS listener", "set spec.cluster.existing.tls"}},
		{"TLS client on a plaintext listener", listenerPlain, &driver.Security{TLS: f.trustCA()},
			[]string{"not a TLS listener", "remove spec.cluster.existing.tls"}},
		{"no SASL on a SASL listener", listenerSCRAM, nil,
			[]string{"requires SASL authentication", "set spec.cluster.existing.authentication"}},
		{"SASL on a listener without SASL", listenerTLS12, scram512(testUser, f.passwordFile),
			[]string{"does not use SASL", "remove spec.cluster.existing.authentication"}},
		{"mechanism not enabled", listenerSCRAM, f.sasl(v1alpha1.AuthPlain, testUser, f.passwordFile, false),
			[]string{"does not enable SASL mechanism PLAIN", "it enables SCRAM-SHA-512", "spec.cluster.existing.authentication.mechanism"}},
		{"missing password file", listenerSASL, scram512(testUser, filepath.Join(f.dir, "no-such-password")),
			[]string{"reading the SASL password of user alice", "no-such-password", "spec.cluster.existing.authentication.password", "no such file"}},
		{"token endpoint refuses the client", listenerSASL, f.oauth(f.issuer.TokenURL, f.wrongSecretFile),
			[]string{"refused client sb-kafka-client", "invalid_client", f.wrongSecretFile, "spec.cluster.existing.authentication.oauth2.clientID"}},
		{"token signed by a key the brokers do not know", listenerSASL, f.oauth(f.stranger.TokenURL, f.secretFile),
			[]string{"refused the OAUTHBEARER token", "invalid_token", "sasl.oauthbearer.jwks.endpoint.url"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			d, err := New(context.Background(), securedConfig(t, tt.listener, tt.sec))
			took := time.Since(start)
			if err == nil {
				d.Close()
				t.Fatalf("New succeeded in %s; want an error", took)
			}
			t.Logf("failed in %s: %v", took.Round(time.Millisecond), err)
			if took > failBound {
				t.Errorf("took %s to fail; want under %s", took.Round(time.Millisecond), failBound)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error lacks %q", w)
				}
			}
			for _, s := range secrets {
				if strings.Contains(err.Error(), s) {
					t.Errorf("the error holds a secret value")
				}
			}
		})
	}
}

// TestLoadSecurityRefusesBeforeConnecting: settings that cannot work are
// refused without a broker, naming the setting.
func TestLoadSecurityRefusesBeforeConnecting(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		sec  *driver.Security
		want string
	}{
		{"empty password file", &driver.Security{Mechanism: "SCRAM-SHA-512", Username: "u", PasswordFile: empty}, "is empty"},
		{"no user", &driver.Security{Mechanism: "PLAIN", PasswordFile: empty}, "authentication.username is empty"},
		{"Pulsar's mechanism", &driver.Security{Mechanism: "Token", TokenFile: empty}, `mechanism "Token": Kafka takes`},
		{"OAUTHBEARER without a token endpoint", &driver.Security{Mechanism: "OAUTHBEARER", OAuth2: &driver.OAuth2Files{ClientID: "c", ClientSecretFile: empty}}, "oauth2.tokenEndpoint is empty"},
		{"client certificate without key", &driver.Security{TLS: &driver.TLSFiles{CertFile: "c.crt"}}, "needs both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadSecurity(tt.sec)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("LoadSecurity() = %v; want an error with %q", err, tt.want)
			}
		})
	}
}

// TestSecurityInfoBeforeConnecting: protocol, mechanism, client
// certificate and verification follow from the settings; the TLS version
// only from a connection.
func TestSecurityInfoBeforeConnecting(t *testing.T) {
	dir := t.TempDir()
	ca, err := testcerts.NewCA(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.Issue("client", testcerts.Options{Client: true})
	if err != nil {
		t.Fatal(err)
	}
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("pw"), 0o600); err != nil {
		t.Fatal(err)
	}
	tlsFiles := func(f driver.TLSFiles) *driver.TLSFiles { f.CAFile = ca.CertFile; return &f }
	tests := []struct {
		name string
		sec  *driver.Security
		want v1alpha1.SecurityInfo
	}{
		{"nothing", nil, v1alpha1.SecurityInfo{Protocol: "PLAINTEXT"}},
		{"TLS", &driver.Security{TLS: tlsFiles(driver.TLSFiles{})}, v1alpha1.SecurityInfo{Protocol: "SSL", Verification: "full"}},
		{"mutual TLS", &driver.Security{TLS: tlsFiles(driver.TLSFiles{CertFile: client.CertFile, KeyFile: client.KeyFile})},
			v1alpha1.SecurityInfo{Protocol: "SSL", Mechanism: "TLS", ClientCertificate: true, Verification: "full"}},
		{"SCRAM over TLS without verification", &driver.Security{TLS: tlsFiles(driver.TLSFiles{InsecureSkipVerify: true}), Mechanism: "SCRAM-SHA-512", Username: "u", PasswordFile: pw},
			v1alpha1.SecurityInfo{Protocol: "SASL_SSL", Mechanism: "SCRAM-SHA-512", Verification: "none"}},
		{"SCRAM and a client certificate", &driver.Security{TLS: tlsFiles(driver.TLSFiles{CertFile: client.CertFile, KeyFile: client.KeyFile}), Mechanism: "SCRAM-SHA-256", Username: "u", PasswordFile: pw},
			v1alpha1.SecurityInfo{Protocol: "SASL_SSL", Mechanism: "SCRAM-SHA-256", ClientCertificate: true, Verification: "full"}},
		{"PLAIN without TLS", &driver.Security{Mechanism: "PLAIN", Username: "u", PasswordFile: pw}, v1alpha1.SecurityInfo{Protocol: "SASL_PLAINTEXT", Mechanism: "PLAIN"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LoadSecurity(tt.sec)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Info(); got != tt.want {
				t.Errorf("Info() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestCheckTriesEverySeed: a seed that refuses connections is passed over;
// when none accepts, the error names each.
func TestCheckTriesEverySeed(t *testing.T) {
	s, err := LoadSecurity(nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = s.Check(context.Background(), []string{"127.0.0.1:1", "127.0.0.1:2"})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") || !strings.Contains(err.Error(), "127.0.0.1:2") || !strings.Contains(err.Error(), "no bootstrap server accepts connections") {
		t.Fatalf("Check() = %v; want an error naming both seeds", err)
	}
	if took := time.Since(start); took > failBound {
		t.Errorf("took %s", took)
	}
	t.Log(err)
}
