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

func TestMapSecurityKafka(t *testing.T) {
	const scram = `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-secret";`
	tests := []struct {
		name    string
		file    string
		want    *sec
		dropped []string
		err     []string
	}{
		{
			name: "SASL_SSL, SCRAM-SHA-512, JKS trust store (Strimzi, MSK)",
			file: kafkaHead + "commonConfig: |\n  bootstrap.servers=b:9093\n  security.protocol=SASL_SSL\n  sasl.mechanism=SCRAM-SHA-512\n  sasl.jaas.config=" + scram + "\n  ssl.truststore.location=/etc/kafka/truststore.jks\n  ssl.truststore.password=changeit\n",
			want: &sec{protocol: "SASL_SSL", mechanism: "SCRAM-SHA-512", username: "alice", trust: "commonConfig: ssl.truststore.location", trustType: "JKS",
				password: "commonConfig: sasl.jaas.config (password)",
				keys:     []string{"commonConfig: sasl.jaas.config", "commonConfig: sasl.mechanism", "commonConfig: security.protocol", "commonConfig: ssl.truststore.location", "commonConfig: ssl.truststore.password"}},
		},
		{
			name: "SASL_SSL, PLAIN, a JAAS over three lines, PEM CAs inline, no hostname check (Confluent Cloud's shape)",
			file: kafkaHead + "commonConfig: |\n  security.protocol=sasl_ssl\n  sasl.mechanism=PLAIN\n  sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n    username=\"alice\" \\\n    password=\"alice-secret\";\n  ssl.truststore.type=PEM\n  ssl.truststore.certificates=-----BEGIN CERTIFICATE-----\n  ssl.endpoint.identification.algorithm=\n  ssl.enabled.protocols=TLSv1.2,TLSv1.3\n  sasl.login.refresh.buffer.seconds=300\n",
			want: &sec{protocol: "SASL_SSL", mechanism: "PLAIN", username: "alice", trust: "commonConfig: ssl.truststore.certificates", trustType: "PEM", skipHostname: true,
				password: "commonConfig: sasl.jaas.config (password)"},
			dropped: []string{"commonConfig: sasl.login.refresh.buffer.seconds=300", "commonConfig: ssl.enabled.protocols=TLSv1.2,TLSv1.3"},
		},
		{
			name: "SSL with a client certificate from a PKCS12 key store (mTLS)",
			file: kafkaHead + "commonConfig: |\n  security.protocol=SSL\n  ssl.truststore.location=/t.p12\n  ssl.truststore.type=PKCS12\n  ssl.truststore.password=changeit\n  ssl.keystore.location=/k.p12\n  ssl.keystore.type=PKCS12\n  ssl.keystore.password=storepass\n  ssl.key.password=storepass\n",
			want: &sec{protocol: "SSL", trust: "commonConfig: ssl.truststore.location", client: "commonConfig: ssl.keystore.location", trustType: "PKCS12"},
		},
		{
			name: "SASL_SSL, OAUTHBEARER client credentials (KIP-768)",
			file: kafkaHead + "commonConfig: |\n  security.protocol=SASL_SSL\n  sasl.mechanism=OAUTHBEARER\n  sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler\n  sasl.oauthbearer.token.endpoint.url=https://idp.example/token\n  sasl.oauthbearer.scope.claim.name=scp\n  sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=\"bench\" clientSecret=\"s3cr3t-client\" scope=\"kafka\";\n",
			want: &sec{protocol: "SASL_SSL", mechanism: "OAUTHBEARER", oauth: &OAuth2{TokenEndpoint: "https://idp.example/token", ClientID: "bench", Scope: "kafka",
				ClientSecret: Secret{From: "commonConfig: sasl.jaas.config (clientSecret)"}}},
			dropped: []string{"commonConfig: sasl.oauthbearer.scope.claim.name=scp"},
		},
		{
			name: "SASL_PLAINTEXT, SCRAM-SHA-256, in producerConfig and consumerConfig alike",
			file: kafkaHead + "producerConfig: |\n  security.protocol=SASL_PLAINTEXT\n  sasl.mechanism=SCRAM-SHA-256\n  sasl.jaas.config=" + scram + "\nconsumerConfig: |\n  security.protocol=SASL_PLAINTEXT\n  sasl.mechanism=SCRAM-SHA-256\n  sasl.jaas.config=" + scram + "\n",
			want: &sec{protocol: "SASL_PLAINTEXT", mechanism: "SCRAM-SHA-256", username: "alice", password: "consumerConfig: sasl.jaas.config (password)"},
		},
		{
			name:    "PLAINTEXT: ssl and sasl keys are what the Java client ignores",
			file:    kafkaHead + "commonConfig: |\n  security.protocol=PLAINTEXT\n  ssl.truststore.location=/t.jks\n  sasl.mechanism=PLAIN\n",
			dropped: []string{"commonConfig: security.protocol=PLAINTEXT", "commonConfig: sasl.mechanism", "commonConfig: ssl.truststore.location"},
		},
		{
			name: "SASL without a mechanism is Kerberos",
			file: kafkaHead + "commonConfig: |\n  security.protocol=SASL_SSL\n  sasl.jaas.config=" + scram + "\n",
			err:  []string{"commonConfig: security.protocol: SASL_SSL without sasl.mechanism is GSSAPI (Kerberos)", "set sasl.mechanism"},
		},
		{
			name: "MSK IAM is refused by name",
			file: kafkaHead + "commonConfig: |\n  security.protocol=SASL_SSL\n  sasl.mechanism=AWS_MSK_IAM\n  sasl.jaas.config=software.amazon.msk.auth.iam.IAMLoginModule required;\n  sasl.client.callback.handler.class=software.amazon.msk.auth.iam.IAMClientCallbackHandler\n",
			err:  []string{`commonConfig: sasl.mechanism: "AWS_MSK_IAM": AWS MSK IAM is not supported`, "commonConfig: sasl.client.callback.handler.class: software.amazon.msk.auth.iam.IAMClientCallbackHandler is a Java class"},
		},
		{
			name: "a login module of another mechanism",
			file: kafkaHead + "commonConfig: |\n  security.protocol=SASL_SSL\n  sasl.mechanism=SCRAM-SHA-512\n  sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"alice\" password=\"alice-secret\";\n",
			err:  []string{"commonConfig: sasl.jaas.config: the login module org.apache.kafka.common.security.plain.PlainLoginModule does not go with sasl.mechanism SCRAM-SHA-512; use org.apache.kafka.common.security.scram.ScramLoginModule"},
		},
		{
			name: "SASL without sasl.jaas.config",
			file: kafkaHead + "commonConfig: |\n  security.protocol=SASL_SSL\n  sasl.mechanism=PLAIN\n",
			err:  []string{"commonConfig: sasl.mechanism: PLAIN needs sasl.jaas.config", "does not read a JVM's JAAS file"},
		},
		{
			name: "unsecured OAUTHBEARER tokens and SASL extensions",
			file: kafkaHead + "commonConfig: |\n  security.protocol=SASL_SSL\n  sasl.mechanism=OAUTHBEARER\n  sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"alice\";\n",
			err:  []string{"option unsecuredLoginStringClaim_sub asks for an unsecured (unsigned) token"},
		},
		{
			name: "Confluent Cloud's OAUTHBEARER extensions",
			file: kafkaHead + "commonConfig: |\n  security.protocol=SASL_SSL\n  sasl.mechanism=OAUTHBEARER\n  sasl.oauthbearer.token.endpoint.url=https://idp.example/token\n  sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=\"bench\" clientSecret=\"s3cr3t-client\" extension_logicalCluster=\"lkc-1\";\n",
			err:  []string{"option extension_logicalCluster is a SASL extension"},
		},
		{
			name: "OAUTHBEARER without a token endpoint",
			file: kafkaHead + "commonConfig: |\n  security.protocol=SASL_SSL\n  sasl.mechanism=OAUTHBEARER\n  sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=\"bench\" clientSecret=\"s3cr3t-client\";\n",
			err:  []string{"OAUTHBEARER needs sasl.oauthbearer.token.endpoint.url"},
		},
		{
			name: "cipher suites, an unknown ssl key, a bad hostname algorithm",
			file: kafkaHead + "commonConfig: |\n  security.protocol=SSL\n  ssl.cipher.suites=TLS_AES_128_GCM_SHA256\n  ssl.truststore.locaton=/t.jks\n  ssl.endpoint.identification.algorithm=dns\n",
			err: []string{"commonConfig: ssl.cipher.suites: streambench's clients use Go's TLS cipher suites",
				"commonConfig: ssl.truststore.locaton: streambench does not map this TLS setting",
				`commonConfig: ssl.endpoint.identification.algorithm: "dns"`},
		},
		{
			name: "an old TLS version only",
			file: kafkaHead + "commonConfig: |\n  security.protocol=SSL\n  ssl.enabled.protocols=TLSv1.2\n",
			err:  []string{"commonConfig: ssl.enabled.protocols: \"TLSv1.2\": streambench's clients offer TLS 1.2 and 1.3 and cannot be held to an older version"},
		},
		{
			name: "producers and consumers with different security",
			file: kafkaHead + "producerConfig: |\n  security.protocol=SSL\n",
			err:  []string{"security.protocol is set in producerConfig for the producers and not set for the consumers", "put it in commonConfig once"},
		},
		{
			name: "a security protocol Kafka does not have",
			file: kafkaHead + "commonConfig: |\n  security.protocol=TLS\n",
			err:  []string{`commonConfig: security.protocol: "TLS" is not a Kafka security protocol`},
		},
		{
			name: "SCRAM delegation tokens",
			file: kafkaHead + "commonConfig: |\n  security.protocol=SASL_SSL\n  sasl.mechanism=SCRAM-SHA-256\n  sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\"alice-secret\" tokenauth=\"true\";\n",
			err:  []string{"option tokenauth (delegation tokens) is not supported"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, dropped, err := MapSecurity(f)
			for _, d := range dropped {
				noSecret(t, "a dropped key", d.String())
			}
			if len(tt.err) > 0 {
				if err == nil {
					t.Fatalf("accepted, want an error with %q", tt.err)
				}
				for _, w := range tt.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				noSecret(t, "the error", err.Error())
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			check(t, got, tt.want)
			var keys []string
			for _, d := range dropped {
				keys = append(keys, d.Key)
			}
			if !reflect.DeepEqual(keys, tt.dropped) {
				t.Errorf("dropped %q, want %q", keys, tt.dropped)
			}
		})
	}
}

func TestMapSecurityPulsar(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		want    *sec
		dropped []string
		err     []string
	}{
		{
			name: "OMB's names: TLS by the service URL, hostname not verified (OMB's default), token inline",
			file: pulsarHead + "client:\n  serviceUrl: pulsar+ssl://b:6651\n  httpUrl: https://b:8443\n  tlsAllowInsecureConnection: false\n  tlsTrustCertsFilePath: /etc/pulsar/ca.pem\n  authentication:\n    plugin: org.apache.pulsar.client.impl.auth.AuthenticationToken\n    data: token:eyJhbGciOiJSUzI1NiJ9.payload.sig\n",
			want: &sec{protocol: "pulsar+ssl", mechanism: "Token", trust: "client: tlsTrustCertsFilePath", trustType: "PEM", skipHostname: true, token: "client: authentication.data",
				keys: []string{"client: authentication.data", "client: authentication.plugin", "client: tlsAllowInsecureConnection", "client: tlsTrustCertsFilePath"}},
		},
		{
			name: "the Java client's names: token file, hostname verified",
			file: pulsarHead + "client:\n  serviceUrl: pulsar://b:6650\n  tlsTrustCertsFilePath: /etc/pulsar/ca.pem\n  tlsHostnameVerificationEnable: true\n  authPlugin: org.apache.pulsar.client.impl.auth.AuthenticationToken\n  authParams: file:///etc/pulsar/token\n",
			want: &sec{protocol: "pulsar+ssl", mechanism: "Token", trust: "client: tlsTrustCertsFilePath", token: "client: authParams"},
		},
		{
			name: "OAuth2 client credentials (StreamNative)",
			file: pulsarHead + "client:\n  serviceUrl: pulsar+ssl://b:6651\n  tlsEnableHostnameVerification: true\n  authPluginClassName: org.apache.pulsar.client.impl.auth.oauth2.AuthenticationOAuth2\n  authParams: '{\"type\":\"client_credentials\",\"issuerUrl\":\"https://auth.example\",\"privateKey\":\"file:///etc/pulsar/key.json\",\"audience\":\"urn:sn:pulsar:o:i\"}'\n",
			want: &sec{protocol: "pulsar+ssl", mechanism: "OAuth2", oauth: &OAuth2{IssuerURL: "https://auth.example", Audience: "urn:sn:pulsar:o:i",
				KeyFile: Secret{From: "client: authParams (privateKey)", Path: "/etc/pulsar/key.json"}}},
		},
		{
			name: "AuthenticationTls: the client certificate, TLS on by it",
			file: pulsarHead + "client:\n  tlsTrustCertsFilePath: /ca.pem\n  authPlugin: org.apache.pulsar.client.impl.auth.AuthenticationTls\n  authParams: tlsCertFile:/c.pem,tlsKeyFile:/k.pem\n",
			want: &sec{protocol: "pulsar+ssl", trust: "client: tlsTrustCertsFilePath", client: "client: authParams", skipHostname: true},
		},
		{
			name: "a key store trust store (useKeyStoreTls)",
			file: pulsarHead + "client:\n  useKeyStoreTls: true\n  tlsTrustStorePath: /t.jks\n  tlsTrustStorePassword: changeit\n  tlsAllowInsecureConnection: true\n",
			want: &sec{protocol: "pulsar+ssl", trust: "client: tlsTrustStorePath", trustType: "JKS", skipHostname: true, insecure: true},
		},
		{
			name:    "TLS booleans with a plain service URL and no certificates: nothing to apply",
			file:    pulsarHead + "client:\n  serviceUrl: pulsar://localhost:6650\n  tlsAllowInsecureConnection: false\n  tlsEnableHostnameVerification: false\n  tlsTrustStorePath: /t.jks\n",
			dropped: []string{"client: tlsTrustStorePath", "client: tlsAllowInsecureConnection=false", "client: tlsEnableHostnameVerification=false"},
		},
		{
			name: "an authentication plugin streambench does not map",
			file: pulsarHead + "client:\n  authPlugin: org.apache.pulsar.client.impl.auth.AuthenticationBasic\n  authParams: '{\"userId\":\"alice\",\"password\":\"alice-secret\"}'\n",
			err:  []string{"client: authPlugin: org.apache.pulsar.client.impl.auth.AuthenticationBasic is not an authentication plugin streambench's Pulsar client maps"},
		},
		{
			name: "OMB's and the Java client's name disagree",
			file: pulsarHead + "client:\n  serviceUrl: pulsar+ssl://b:6651\n  tlsEnableHostnameVerification: true\n  tlsHostnameVerificationEnable: false\n",
			err:  []string{"client: tlsHostnameVerificationEnable: disagrees with tlsEnableHostnameVerification; keep one"},
		},
		{
			name: "TLS ciphers and protocols",
			file: pulsarHead + "client:\n  serviceUrl: pulsar+ssl://b:6651\n  tlsCiphers: [TLS_AES_128_GCM_SHA256]\n",
			err:  []string{"client: tlsCiphers: streambench's clients use Go's TLS"},
		},
		{
			name: "OAuth2 without an issuer",
			file: pulsarHead + "client:\n  authPlugin: org.apache.pulsar.client.impl.auth.oauth2.AuthenticationOAuth2\n  authParams: '{\"privateKey\":\"file:///k.json\"}'\n",
			err:  []string{"client: authParams: AuthenticationOAuth2 needs issuerUrl"},
		},
		{
			name: "a token left as a ${...} placeholder",
			file: pulsarHead + "client:\n  authentication:\n    plugin: org.apache.pulsar.client.impl.auth.AuthenticationToken\n    data: token:${astraToken}\n",
			err:  []string{"client: authentication.data: the token holds a ${...} placeholder: substitute it"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, dropped, err := MapSecurity(f)
			if len(tt.err) > 0 {
				if err == nil {
					t.Fatalf("accepted, want an error with %q", tt.err)
				}
				for _, w := range tt.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				noSecret(t, "the error", err.Error())
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			check(t, got, tt.want)
			var keys []string
			for _, d := range dropped {
				keys = append(keys, d.Key)
			}
			if !reflect.DeepEqual(keys, tt.dropped) {
				t.Errorf("dropped %q, want %q", keys, tt.dropped)
			}
		})
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
