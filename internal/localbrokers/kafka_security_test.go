package localbrokers

import (
	"slices"
	"strings"
	"testing"
)

func TestCheckListeners(t *testing.T) {
	ssl := KafkaListener{Name: "MTLS", Protocol: ListenerSSL, CertFile: "b.crt", KeyFile: "b.key", ClientCAFile: "ca.crt", RequireClientCert: true}
	sasl := KafkaListener{Name: "SASL", Protocol: ListenerSASLSSL, CertFile: "b.crt", KeyFile: "b.key",
		Mechanisms: []string{MechanismPlain, MechanismSCRAMSHA512}, Users: []KafkaUser{{"alice", "pw1"}}}
	with := func(l KafkaListener, f func(*KafkaListener)) KafkaListener { f(&l); return l }
	tests := []struct {
		name string
		ls   []KafkaListener
		want string // "" = accepted
	}{
		{"none", nil, ""},
		{"SSL with mutual TLS and SASL_SSL", []KafkaListener{ssl, sasl}, ""},
		{"lower-case name", []KafkaListener{with(ssl, func(l *KafkaListener) { l.Name = "mtls" })}, "upper-case"},
		{"StartKafka's own name", []KafkaListener{with(ssl, func(l *KafkaListener) { l.Name = "CONTROLLER" })}, "StartKafka's own listener"},
		{"a name twice", []KafkaListener{ssl, ssl}, "given twice"},
		{"unknown protocol", []KafkaListener{with(ssl, func(l *KafkaListener) { l.Protocol = "TLS" })}, "want SSL, SASL_SSL or SASL_PLAINTEXT"},
		{"SSL without a certificate", []KafkaListener{with(ssl, func(l *KafkaListener) { l.KeyFile = "" })}, "needs CertFile and KeyFile"},
		{"mutual TLS without a client CA", []KafkaListener{with(ssl, func(l *KafkaListener) { l.ClientCAFile = "" })}, "needs ClientCAFile"},
		{"SASL without mechanisms", []KafkaListener{with(sasl, func(l *KafkaListener) { l.Mechanisms = nil })}, "set Mechanisms"},
		{"mechanisms on SSL", []KafkaListener{with(ssl, func(l *KafkaListener) { l.Mechanisms = []string{MechanismPlain} })}, "Mechanisms need SASL_SSL"},
		{"certificate on SASL_PLAINTEXT", []KafkaListener{with(sasl, func(l *KafkaListener) { l.Protocol = ListenerSASLPlaintext })}, "certificates need SSL"},
		{"unknown mechanism", []KafkaListener{with(sasl, func(l *KafkaListener) { l.Mechanisms = []string{"GSSAPI"} })}, `"GSSAPI" is not`},
		{"OAUTHBEARER without JWKS", []KafkaListener{with(sasl, func(l *KafkaListener) { l.Mechanisms = []string{MechanismOAuthBearer} })}, "set OAuth.JWKSURL"},
		{"password with a comma", []KafkaListener{with(sasl, func(l *KafkaListener) { l.Users = []KafkaUser{{"alice", "a,b"}} })}, "without quotes"},
		{"one SCRAM user, two passwords", []KafkaListener{sasl, with(sasl, func(l *KafkaListener) {
			l.Name, l.Users = "SASL2", []KafkaUser{{"alice", "pw2"}}
		})}, "another password on another listener"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkListeners(tt.ls)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("checkListeners() = %v; want an error with %q", err, tt.want)
			}
		})
	}
}

func TestAddListeners(t *testing.T) {
	ls := []KafkaListener{
		{Name: "SASL", Protocol: ListenerSASLSSL, CertFile: "b.crt", KeyFile: "b.key",
			Mechanisms: []string{MechanismPlain, MechanismSCRAMSHA512, MechanismOAuthBearer},
			Users:      []KafkaUser{{"alice", "pw1"}, {"bob", "pw2"}},
			OAuth:      &KafkaOAuth{JWKSURL: "http://127.0.0.1:9/jwks.json", Issuer: "http://127.0.0.1:9", Audience: "kafka"}},
		{Name: "MTLS", Protocol: ListenerSSL, CertFile: "b.crt", KeyFile: "b.key", ClientCAFile: "/ca.crt", RequireClientCert: true, TLSProtocols: []string{"TLSv1.2"}},
	}
	ports := map[string]int{"SASL": 9201, "MTLS": 9202}
	node1 := kafkaNodeSettings(1, 9101, 9300, 1, "/data", nil)
	addListeners(node1, ls, ports, "127.0.0.1", "/k")
	node2 := kafkaNodeSettings(2, 9102, 9300, 3, "/data", nil)
	addListeners(node2, ls, ports, "10.244.0.1", "/k")
	tests := []struct {
		name string
		p    map[string]string
		want map[string]string
	}{
		{"controller node: the plaintext listener first, the controller's last", node1, map[string]string{
			"listeners":                      "PLAINTEXT://127.0.0.1:9101,SASL://127.0.0.1:9201,MTLS://127.0.0.1:9202,CONTROLLER://127.0.0.1:9300",
			"advertised.listeners":           "PLAINTEXT://127.0.0.1:9101,SASL://127.0.0.1:9201,MTLS://127.0.0.1:9202,CONTROLLER://127.0.0.1:9300",
			"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL:SASL_SSL,MTLS:SSL",
			"inter.broker.listener.name":     "PLAINTEXT",
			"controller.listener.names":      "CONTROLLER",
		}},
		{"broker node on a host", node2, map[string]string{
			"listeners":            "PLAINTEXT://127.0.0.1:9102,SASL://10.244.0.1:9201,MTLS://10.244.0.1:9202",
			"advertised.listeners": "PLAINTEXT://127.0.0.1:9102,SASL://10.244.0.1:9201,MTLS://10.244.0.1:9202",
		}},
		{"SASL_SSL: PEM keystore, mechanisms, JAAS, OAuth validation", node1, map[string]string{
			"listener.name.sasl.ssl.keystore.type":                              "PEM",
			"listener.name.sasl.ssl.keystore.location":                          "/k/sasl-keystore.pem",
			"listener.name.sasl.ssl.client.auth":                                "none",
			"listener.name.sasl.sasl.enabled.mechanisms":                        "PLAIN,SCRAM-SHA-512,OAUTHBEARER",
			"listener.name.sasl.plain.sasl.jaas.config":                         `org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="pw1" user_bob="pw2";`,
			"listener.name.sasl.scram-sha-512.sasl.jaas.config":                 "org.apache.kafka.common.security.scram.ScramLoginModule required;",
			"listener.name.sasl.oauthbearer.sasl.jaas.config":                   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
			"listener.name.sasl.oauthbearer.sasl.server.callback.handler.class": "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
			"listener.name.sasl.sasl.oauthbearer.jwks.endpoint.url":             "http://127.0.0.1:9/jwks.json",
			"listener.name.sasl.sasl.oauthbearer.expected.issuer":               "http://127.0.0.1:9",
			"listener.name.sasl.sasl.oauthbearer.expected.audience":             "kafka",
		}},
		{"SSL with mutual TLS, TLS 1.2 only", node1, map[string]string{
			"listener.name.mtls.ssl.truststore.type":     "PEM",
			"listener.name.mtls.ssl.truststore.location": "/ca.crt",
			"listener.name.mtls.ssl.client.auth":         "required",
			"listener.name.mtls.ssl.enabled.protocols":   "TLSv1.2",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, want := range tt.want {
				if got := tt.p[k]; got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
		})
	}
	if _, ok := node1["listener.name.mtls.sasl.enabled.mechanisms"]; ok {
		t.Error("an SSL listener got SASL mechanisms")
	}
	if got, want := scramArgs(ls), []string{"--add-scram", "SCRAM-SHA-512=[name=alice,password=pw1]", "--add-scram", "SCRAM-SHA-512=[name=bob,password=pw2]"}; !slices.Equal(got, want) {
		t.Errorf("scramArgs = %q, want %q", got, want)
	}
	if got := oauthJVMArgs(ls); !slices.Equal(got, []string{"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=http://127.0.0.1:9/jwks.json"}) {
		t.Errorf("oauthJVMArgs = %q", got)
	}
	// Without listeners, a node's settings are as before.
	plain := kafkaNodeSettings(1, 9101, 9300, 1, "/data", nil)
	addListeners(plain, nil, nil, "127.0.0.1", "/k")
	if properties("", plain) != KafkaNodeProperties(1, 9101, 9300, 1, "/data", nil) {
		t.Error("addListeners without listeners changed the node's settings")
	}
}
