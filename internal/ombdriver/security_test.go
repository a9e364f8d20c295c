package ombdriver

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// The secret values of the tests: no error, drop reason or print may hold
// one.
var testSecrets = []string{"alice-secret", "s3cr3t-client", "eyJhbGciOiJSUzI1NiJ9.payload.sig", "storepass", "keypass", "changeit"}

func noSecret(t *testing.T, what, s string) {
	t.Helper()
	for _, v := range testSecrets {
		if strings.Contains(s, v) {
			t.Errorf("%s shows the secret %q: %s", what, v, s)
		}
	}
}

func TestParsePropertiesAsJava(t *testing.T) {
	got := ParseProperties(`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
    username="alice" \
    password="alice-secret";
# a comment ending in a backslash does not go on \
ssl.truststore.location = /etc/kafka/truststore.jks
path\ with\ spaces:C:\\dir
unicode=caf\u00e9
a==b
`)
	want := map[string]string{
		"sasl.jaas.config":        `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-secret";`,
		"ssl.truststore.location": "/etc/kafka/truststore.jks",
		"path with spaces":        `C:\dir`,
		"unicode":                 "café",
		"a":                       "=b",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestParseJAAS(t *testing.T) {
	tests := []struct {
		in      string
		module  string
		options map[string]string
		err     string
	}{
		{in: `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";`,
			module: "org.apache.kafka.common.security.plain.PlainLoginModule", options: map[string]string{"username": "alice", "password": "alice-secret"}},
		{in: "org.apache.kafka.common.security.scram.ScramLoginModule required\n username=alice /* the user */ password=\"al\\\"ice-secret\" ;",
			module: "org.apache.kafka.common.security.scram.ScramLoginModule", options: map[string]string{"username": "alice", "password": `al"ice-secret`}},
		{in: `org.apache.kafka.common.security.plain.PlainLoginModule username="alice" password="alice-secret";`, err: "has no control flag"},
		{in: `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret"`, err: "does not end with ';'"},
		{in: `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret`, err: "not closed"},
		{in: `org.apache.kafka.common.security.plain.PlainLoginModule required password alice-secret;`, err: "option 1 of org.apache.kafka.common.security.plain.PlainLoginModule is not key=value"},
		{in: `a.B required x=1; c.D required y=2;`, err: "more than one login module"},
	}
	for _, tt := range tests {
		j, err := parseJAAS(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: error %v, want %q", tt.in, err, tt.err)
			}
			if err != nil {
				noSecret(t, "a JAAS error", err.Error())
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if j.module != tt.module || !reflect.DeepEqual(j.options, tt.options) {
			t.Errorf("%s: got %s %v", tt.in, j.module, j.options)
		}
	}
}

// sec is what a table test expects of a Security (its secrets by where
// they come from, never by value).
type sec struct {
	protocol, mechanism, username string
	keys                          []string
	trust, client                 string // Store.Key, "" for none
	trustType                     string
	skipHostname, insecure        bool
	password, token               string // Secret.From
	oauth                         *OAuth2
}

func check(t *testing.T, got *Security, want *sec) {
	t.Helper()
	if want == nil {
		if got != nil {
			t.Fatalf("got security %+v, want none", got)
		}
		return
	}
	if got == nil {
		t.Fatal("got no security")
	}
	if got.Protocol != want.protocol || got.Mechanism != want.mechanism || got.Username != want.username {
		t.Errorf("protocol %q mechanism %q username %q, want %q %q %q", got.Protocol, got.Mechanism, got.Username, want.protocol, want.mechanism, want.username)
	}
	if want.keys != nil && !reflect.DeepEqual(got.Keys, want.keys) {
		t.Errorf("keys %q, want %q", got.Keys, want.keys)
	}
	tlsWanted := strings.Contains(want.protocol, "SSL") || want.protocol == "pulsar+ssl"
	if (got.TLS != nil) != tlsWanted {
		t.Fatalf("TLS %+v, want TLS: %v", got.TLS, tlsWanted)
	}
	if got.TLS != nil {
		storeKey := func(s *Store) string {
			if s == nil {
				return ""
			}
			return s.Key
		}
		if storeKey(got.TLS.Trust) != want.trust || storeKey(got.TLS.Client) != want.client {
			t.Errorf("trust %q client %q, want %q %q", storeKey(got.TLS.Trust), storeKey(got.TLS.Client), want.trust, want.client)
		}
		if want.trustType != "" && got.TLS.Trust.Type != want.trustType {
			t.Errorf("trust store type %q, want %q", got.TLS.Trust.Type, want.trustType)
		}
		if got.TLS.SkipHostnameVerification != want.skipHostname || got.TLS.InsecureSkipVerify != want.insecure {
			t.Errorf("skip hostname %v insecure %v, want %v %v", got.TLS.SkipHostnameVerification, got.TLS.InsecureSkipVerify, want.skipHostname, want.insecure)
		}
	}
	if got.Password.From != want.password || got.Token.From != want.token {
		t.Errorf("password from %q token from %q, want %q %q", got.Password.From, got.Token.From, want.password, want.token)
	}
	if want.oauth != nil {
		o := got.OAuth2
		if o == nil {
			t.Fatal("no OAuth2")
		}
		w := want.oauth
		if o.TokenEndpoint != w.TokenEndpoint || o.IssuerURL != w.IssuerURL || o.ClientID != w.ClientID || o.Scope != w.Scope || o.Audience != w.Audience ||
			o.ClientSecret.From != w.ClientSecret.From || o.KeyFile.From != w.KeyFile.From || o.KeyFile.Path != w.KeyFile.Path {
			t.Errorf("oauth2 %+v, want %+v", o, w)
		}
	}
	noSecret(t, "the printed security", fmt.Sprintf("%v %+v %#v %v", got, got, got, got.TLS))
	if got.TLS != nil {
		noSecret(t, "the printed stores", fmt.Sprintf("%+v %+v", got.TLS.Trust, got.TLS.Client))
	}
}

// TestMapRefusesSecurityInCluster: the cluster's Map names every security
// key and says how a cluster run takes its security; local mode's
// MapWithSecurity maps the same file, and its client settings are the
// same as without the security keys.
func TestMapRefusesSecurityInCluster(t *testing.T) {
	level := eff(t, v1alpha1.SystemKafka, 2)
	file := kafkaHead + "commonConfig: |\n  security.protocol=SASL_SSL\n  sasl.mechanism=SCRAM-SHA-512\n  sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\"alice-secret\";\nproducerConfig: |\n  linger.ms=1\n"
	f, err := Parse([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Map(f, v1alpha1.SystemKafka, level)
	if err == nil {
		t.Fatal("a cluster run took a driver file's security")
	}
	for _, w := range []string{"commonConfig: sasl.jaas.config, commonConfig: sasl.mechanism, commonConfig: security.protocol:",
		"a ConfigMap is not a Secret", "do not exist in the pods", "spec.cluster.existing.tls and spec.cluster.existing.authentication"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
	noSecret(t, "the cluster's refusal", err.Error())

	drv, s, dropped, err := MapWithSecurity(f, v1alpha1.SystemKafka, level)
	if err != nil {
		t.Fatal(err)
	}
	if s == nil || s.Mechanism != "SCRAM-SHA-512" {
		t.Errorf("local mode's security %+v", s)
	}
	if !reflect.DeepEqual(drv.Kafka.Producer, map[string]string{"linger.ms": "1"}) || len(drv.Kafka.Consumer) != 0 || len(dropped) != 0 {
		t.Errorf("security keys leaked into the client settings: %+v, dropped %v", drv.Kafka, dropped)
	}

	// A plaintext file with security.protocol=PLAINTEXT runs in a cluster.
	f, err = Parse([]byte(kafkaHead + "commonConfig: |\n  security.protocol=PLAINTEXT\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, dropped, err := Map(f, v1alpha1.SystemKafka, level); err != nil || len(dropped) != 1 {
		t.Errorf("PLAINTEXT: %v, dropped %v", err, dropped)
	}
	// A refusal of the mapping itself also says how a cluster does it.
	f, err = Parse([]byte(kafkaHead + "commonConfig: |\n  security.protocol=SASL_SSL\n  sasl.mechanism=GSSAPI\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Map(f, v1alpha1.SystemKafka, level); err == nil || !strings.Contains(err.Error(), "Kerberos") || !strings.Contains(err.Error(), "spec.cluster.existing.tls") {
		t.Errorf("GSSAPI in a cluster: %v", err)
	}
}
