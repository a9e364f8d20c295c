package strimzi

import (
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// A Kafka as a platform team runs it: the listeners of Strimzi's examples.
func kafkaWithListeners(t *testing.T, listeners string) string {
	t.Helper()
	return `
apiVersion: kafka.strimzi.io/v1
kind: Kafka
metadata: {name: prod, namespace: kafka}
spec:
  kafka:
    listeners:
` + listeners + `
status:
  listeners:
  - {name: plain, bootstrapServers: "prod-kafka-bootstrap.kafka.svc:9092"}
  - {name: tls, bootstrapServers: "prod-kafka-bootstrap.kafka.svc:9093"}
  - {name: scram, bootstrapServers: "prod-kafka-bootstrap.kafka.svc:9094"}
  - {name: external, bootstrapServers: "203.0.113.7:9095"}
`
}

const (
	plainL    = "    - {name: plain, port: 9092, type: internal, tls: false}\n"
	tlsL      = "    - {name: tls, port: 9093, type: internal, tls: true, authentication: {type: tls}}\n"
	scramL    = "    - {name: scram, port: 9094, type: internal, tls: true, authentication: {type: scram-sha-512}}\n"
	externalL = "    - {name: external, port: 9095, type: loadbalancer, tls: true, authentication: {type: scram-sha-512}}\n"
)

func TestNeedsOf(t *testing.T) {
	tls := &v1alpha1.ClientTLS{}
	for _, tc := range []struct {
		name string
		e    v1alpha1.ExistingCluster
		want ClientNeeds
	}{
		{"plaintext", v1alpha1.ExistingCluster{}, ClientNeeds{}},
		{"tls", v1alpha1.ExistingCluster{TLS: tls}, ClientNeeds{TLS: true}},
		{"SCRAM KafkaUser over TLS", v1alpha1.ExistingCluster{TLS: tls, Authentication: &v1alpha1.ClientAuthentication{
			StrimziKafkaUser: &v1alpha1.StrimziKafkaUserRef{SecretName: "alice", Type: v1alpha1.KafkaUserScramSHA512}}},
			ClientNeeds{TLS: true, Mechanism: v1alpha1.AuthScramSHA512}},
		{"mTLS KafkaUser", v1alpha1.ExistingCluster{TLS: tls, Authentication: &v1alpha1.ClientAuthentication{
			StrimziKafkaUser: &v1alpha1.StrimziKafkaUserRef{SecretName: "alice", Type: v1alpha1.KafkaUserTLS}}},
			ClientNeeds{TLS: true, ClientCertificate: true}},
		{"own client certificate", v1alpha1.ExistingCluster{TLS: &v1alpha1.ClientTLS{ClientCertificate: &v1alpha1.ClientCertificate{SecretName: "c"}}},
			ClientNeeds{TLS: true, ClientCertificate: true}},
		{"PLAIN without TLS", v1alpha1.ExistingCluster{Authentication: &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthPlain}},
			ClientNeeds{Mechanism: v1alpha1.AuthPlain}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NeedsOf(&tc.e); got != tc.want {
				t.Errorf("NeedsOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSelectListener(t *testing.T) {
	for _, tc := range []struct {
		name      string
		listeners string
		needs     ClientNeeds
		want      string // the listener's name
		wantErr   []string
	}{
		{name: "plaintext takes the plain listener", listeners: plainL + tlsL + scramL, needs: ClientNeeds{}, want: "plain"},
		{name: "SCRAM over TLS takes the scram listener", listeners: plainL + tlsL + scramL, needs: ClientNeeds{TLS: true, Mechanism: v1alpha1.AuthScramSHA512}, want: "scram"},
		{name: "mTLS takes the tls listener", listeners: plainL + tlsL + scramL, needs: ClientNeeds{TLS: true, ClientCertificate: true}, want: "tls"},
		{name: "an internal listener before an external one listed first", listeners: externalL + plainL + scramL,
			needs: ClientNeeds{TLS: true, Mechanism: v1alpha1.AuthScramSHA512}, want: "scram"},
		{name: "an external listener when it is the only one that fits", listeners: plainL + externalL,
			needs: ClientNeeds{TLS: true, Mechanism: v1alpha1.AuthScramSHA512}, want: "external"},
		{name: "a custom SASL listener serves SCRAM-SHA-256",
			listeners: plainL + "    - {name: custom, port: 9096, type: internal, tls: true, authentication: {type: custom, sasl: true}}\n",
			needs:     ClientNeeds{TLS: true, Mechanism: v1alpha1.AuthScramSHA256}, want: "custom"},
		{name: "an oauth listener serves PLAIN only with enablePlain",
			listeners: "    - {name: oauth, port: 9096, type: internal, tls: true, authentication: {type: oauth}}\n",
			needs:     ClientNeeds{TLS: true, Mechanism: v1alpha1.AuthPlain},
			wantErr:   []string{"has no listener for a TLS client with SASL PLAIN", "authentication type oauth with enablePlain: true"}},
		{name: "an oauth listener serves OAUTHBEARER",
			listeners: "    - {name: oauth, port: 9096, type: internal, tls: true, authentication: {type: oauth}}\n",
			needs:     ClientNeeds{TLS: true, Mechanism: v1alpha1.AuthOAuthBearer}, want: "oauth"},
		{name: "TLS without authentication does not take a listener that asks for a certificate",
			listeners: plainL + tlsL + scramL, needs: ClientNeeds{TLS: true},
			wantErr: []string{
				"Kafka kafka/prod has no listener for a TLS client without authentication (spec.cluster.existing.tls and authentication)",
				"its spec.kafka.listeners: plain (internal, port 9092, tls: false, no authentication); tls (internal, port 9093, tls: true, authentication tls); scram (internal, port 9094, tls: true, authentication scram-sha-512)",
				"Add a listener with tls: true and no authentication to the Kafka, or change spec.cluster.existing.tls and authentication to fit one of its listeners"}},
		{name: "SCRAM over TLS on a cluster without a SCRAM listener",
			listeners: plainL + tlsL, needs: ClientNeeds{TLS: true, Mechanism: v1alpha1.AuthScramSHA512},
			wantErr: []string{"has no listener for a TLS client with SASL SCRAM-SHA-512", "Add a listener with tls: true and authentication type scram-sha-512"}},
		{name: "plaintext SCRAM does not take the TLS one", listeners: scramL, needs: ClientNeeds{Mechanism: v1alpha1.AuthScramSHA512},
			wantErr: []string{"has no listener for a plaintext client with SASL SCRAM-SHA-512", "Add a listener with tls: false and authentication type scram-sha-512"}},
		{name: "no listeners in the spec", needs: ClientNeeds{}, wantErr: []string{"its spec.kafka.listeners: none"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SelectListener(statusObject(t, kafkaWithListeners(t, tc.listeners)), tc.needs)
			if tc.wantErr == nil {
				if err != nil || got.Name != tc.want {
					t.Fatalf("SelectListener = %+v, %v; want %s", got, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("SelectListener = %+v, want an error", got)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nmisses %q", err, w)
				}
			}
		})
	}
}

func TestListenerBootstrap(t *testing.T) {
	k := statusObject(t, kafkaWithListeners(t, plainL+scramL))
	if bs, waiting := ListenerBootstrap(k, "scram"); bs != "prod-kafka-bootstrap.kafka.svc:9094" || waiting != "" {
		t.Errorf("ListenerBootstrap(scram) = %q, %q", bs, waiting)
	}
	if bs, waiting := ListenerBootstrap(k, "oauth"); bs != "" || waiting != "Kafka prod: status.listeners[name=oauth] has no bootstrapServers yet; wait until it is Ready" {
		t.Errorf("ListenerBootstrap(oauth) = %q, %q", bs, waiting)
	}
}
