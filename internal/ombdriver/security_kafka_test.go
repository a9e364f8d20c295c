package ombdriver

import (
	"reflect"
	"strings"
	"testing"
)

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
