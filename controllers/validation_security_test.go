package controllers

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// The rules of spec.cluster.existing.tls and authentication
// (security_types.go, and benchmarkrun_types.go's that need spec.system),
// each refusing a bad spec through the real API server with its message,
// and the good specs of every mechanism accepted.
var _ = Describe("BenchmarkRun validation of TLS and authentication", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	ref := func(name, key string) *v1alpha1.SecretKeyRef { return &v1alpha1.SecretKeyRef{Name: name, Key: key} }
	oauth2 := func(tokenEndpoint, issuer string) *v1alpha1.OAuth2ClientCredentials {
		return &v1alpha1.OAuth2ClientCredentials{TokenEndpoint: tokenEndpoint, IssuerURL: issuer, ClientID: "bench", ClientSecret: *ref("oauth", "secret")}
	}
	// existing is a run of system against an existing cluster with tls and
	// auth (either may be nil).
	existing := func(system v1alpha1.System, tls *v1alpha1.ClientTLS, auth *v1alpha1.ClientAuthentication) *v1alpha1.BenchmarkRun {
		run := validRun(ns, system)
		e := &v1alpha1.ExistingCluster{TLS: tls, Authentication: auth}
		switch system {
		case v1alpha1.SystemKafka:
			e.BootstrapServers = "kafka.example:9093"
		default:
			e.ServiceURL, e.AdminURL = "pulsar+ssl://pulsar.example:6651", "https://pulsar.example:8443"
		}
		run.Spec.Cluster = v1alpha1.ClusterSpec{Existing: e}
		return run
	}
	scram := &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthScramSHA512, Username: "alice", Password: ref("alice", "password")}
	token := &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthToken, Token: ref("pulsar", "token")}
	tls := &v1alpha1.ClientTLS{CA: ref("ca", "ca.crt")}

	DescribeTable("accepts",
		func(run func() *v1alpha1.BenchmarkRun) {
			Expect(k8sClient.Create(ctx, run())).To(Succeed())
		},
		Entry("Kafka SASL_SSL with SCRAM-SHA-512", func() *v1alpha1.BenchmarkRun { return existing(v1alpha1.SystemKafka, tls, scram) }),
		Entry("Kafka SASL_PLAINTEXT with PLAIN", func() *v1alpha1.BenchmarkRun {
			return existing(v1alpha1.SystemKafka, nil, &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthPlain, Username: "alice", Password: ref("alice", "password")})
		}),
		Entry("Kafka mutual TLS with a client certificate", func() *v1alpha1.BenchmarkRun {
			return existing(v1alpha1.SystemKafka, &v1alpha1.ClientTLS{CA: ref("ca", "ca.crt"), ClientCertificate: &v1alpha1.ClientCertificate{SecretName: "client"}}, nil)
		}),
		Entry("Kafka OAUTHBEARER with a token endpoint", func() *v1alpha1.BenchmarkRun {
			return existing(v1alpha1.SystemKafka, tls, &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthOAuthBearer, OAuth2: oauth2("https://idp.example/token", "")})
		}),
		Entry("a Strimzi cluster with its CA and an mTLS KafkaUser", func() *v1alpha1.BenchmarkRun {
			run := existing(v1alpha1.SystemKafka, &v1alpha1.ClientTLS{}, &v1alpha1.ClientAuthentication{
				StrimziKafkaUser: &v1alpha1.StrimziKafkaUserRef{SecretName: "bench", Type: v1alpha1.KafkaUserTLS}})
			run.Spec.Cluster.Existing.BootstrapServers = ""
			run.Spec.Cluster.Existing.StrimziCluster = &v1alpha1.StrimziClusterRef{Name: "prod"}
			return run
		}),
		Entry("Pulsar TLS with a token", func() *v1alpha1.BenchmarkRun { return existing(v1alpha1.SystemPulsar, tls, token) }),
		Entry("Pulsar OAuth2 with an issuer", func() *v1alpha1.BenchmarkRun {
			return existing(v1alpha1.SystemPulsar, tls, &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthOAuth2, OAuth2: oauth2("", "https://idp.example")})
		}),
	)

	DescribeTable("rejects",
		func(run func() *v1alpha1.BenchmarkRun, wantMessage string) {
			err := k8sClient.Create(ctx, run())
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(wantMessage))
		},
		// security_types.go
		Entry("authentication with neither mechanism nor strimziKafkaUser", func() *v1alpha1.BenchmarkRun {
			return existing(v1alpha1.SystemKafka, tls, &v1alpha1.ClientAuthentication{})
		}, "spec.cluster.existing.authentication: set exactly one of mechanism (with its credentials) or strimziKafkaUser (a KafkaUser's Secret)"),
		Entry("authentication with both mechanism and strimziKafkaUser", func() *v1alpha1.BenchmarkRun {
			a := *scram
			a.StrimziKafkaUser = &v1alpha1.StrimziKafkaUserRef{SecretName: "bench", Type: v1alpha1.KafkaUserScramSHA512}
			return existing(v1alpha1.SystemKafka, tls, &a)
		}, "spec.cluster.existing.authentication: set exactly one of mechanism"),
		Entry("SCRAM without a username", func() *v1alpha1.BenchmarkRun {
			return existing(v1alpha1.SystemKafka, tls, &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthScramSHA256, Password: ref("alice", "password")})
		}, "spec.cluster.existing.authentication: mechanism PLAIN and SCRAM need username and password (a Secret key)"),
		Entry("Token without a token", func() *v1alpha1.BenchmarkRun {
			return existing(v1alpha1.SystemPulsar, tls, &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthToken})
		}, "spec.cluster.existing.authentication: mechanism Token needs token (a Secret key holding the JWT)"),
		Entry("OAUTHBEARER without oauth2", func() *v1alpha1.BenchmarkRun {
			return existing(v1alpha1.SystemKafka, tls, &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthOAuthBearer})
		}, "spec.cluster.existing.authentication: mechanism OAUTHBEARER and OAuth2 need oauth2 (the client-credentials grant)"),
		Entry("a password with Token", func() *v1alpha1.BenchmarkRun {
			a := *token
			a.Password = ref("alice", "password")
			return existing(v1alpha1.SystemPulsar, tls, &a)
		}, "spec.cluster.existing.authentication.password applies to mechanism PLAIN and SCRAM only; remove it"),
		Entry("a token with SCRAM", func() *v1alpha1.BenchmarkRun {
			a := *scram
			a.Token = ref("pulsar", "token")
			return existing(v1alpha1.SystemKafka, tls, &a)
		}, "spec.cluster.existing.authentication.token applies to mechanism Token only; remove it"),
		Entry("oauth2 with SCRAM", func() *v1alpha1.BenchmarkRun {
			a := *scram
			a.OAuth2 = oauth2("https://idp.example/token", "")
			return existing(v1alpha1.SystemKafka, tls, &a)
		}, "spec.cluster.existing.authentication.oauth2 applies to mechanism OAUTHBEARER and OAuth2 only; remove it"),
		Entry("a Secret key with a slash", func() *v1alpha1.BenchmarkRun {
			return existing(v1alpha1.SystemKafka, &v1alpha1.ClientTLS{CA: ref("ca", "../ca.crt")}, nil)
		}, "spec.cluster.existing.tls.ca.key"),

		// benchmarkrun_types.go
		Entry("a Pulsar mechanism on Kafka", func() *v1alpha1.BenchmarkRun { return existing(v1alpha1.SystemKafka, tls, token) },
			"spec.cluster.existing.authentication.mechanism: kafka takes PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER; pulsar takes Token or OAuth2"),
		Entry("a Kafka mechanism on Pulsar", func() *v1alpha1.BenchmarkRun { return existing(v1alpha1.SystemPulsar, tls, scram) },
			"spec.cluster.existing.authentication.mechanism: kafka takes PLAIN"),
		Entry("a KafkaUser on Pulsar", func() *v1alpha1.BenchmarkRun {
			return existing(v1alpha1.SystemPulsar, tls, &v1alpha1.ClientAuthentication{
				StrimziKafkaUser: &v1alpha1.StrimziKafkaUserRef{SecretName: "bench", Type: v1alpha1.KafkaUserScramSHA512}})
		}, "spec.cluster.existing.authentication.strimziKafkaUser applies to system kafka only; use mechanism Token or OAuth2 for pulsar"),
		Entry("an mTLS KafkaUser without tls", func() *v1alpha1.BenchmarkRun {
			return existing(v1alpha1.SystemKafka, nil, &v1alpha1.ClientAuthentication{
				StrimziKafkaUser: &v1alpha1.StrimziKafkaUserRef{SecretName: "bench", Type: v1alpha1.KafkaUserTLS}})
		}, "spec.cluster.existing.authentication.strimziKafkaUser of type tls is mutual TLS: set spec.cluster.existing.tls (its ca) and leave tls.clientCertificate out (the user's Secret has it)"),
		Entry("an mTLS KafkaUser beside a client certificate", func() *v1alpha1.BenchmarkRun {
			return existing(v1alpha1.SystemKafka, &v1alpha1.ClientTLS{ClientCertificate: &v1alpha1.ClientCertificate{SecretName: "client"}}, &v1alpha1.ClientAuthentication{
				StrimziKafkaUser: &v1alpha1.StrimziKafkaUserRef{SecretName: "bench", Type: v1alpha1.KafkaUserTLS}})
		}, "spec.cluster.existing.authentication.strimziKafkaUser of type tls is mutual TLS"),
		Entry("Kafka OAUTHBEARER with only an issuer", func() *v1alpha1.BenchmarkRun {
			return existing(v1alpha1.SystemKafka, tls, &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthOAuthBearer, OAuth2: oauth2("", "https://idp.example")})
		}, "spec.cluster.existing.authentication.oauth2.tokenEndpoint is required for kafka (sasl.oauthbearer.token.endpoint.url)"),
		Entry("Pulsar OAuth2 with only a token endpoint", func() *v1alpha1.BenchmarkRun {
			return existing(v1alpha1.SystemPulsar, tls, &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthOAuth2, OAuth2: oauth2("https://idp.example/token", "")})
		}, "spec.cluster.existing.authentication.oauth2.issuerURL is required for pulsar"),
		Entry("Pulsar TLS with a plaintext service URL", func() *v1alpha1.BenchmarkRun {
			run := existing(v1alpha1.SystemPulsar, tls, token)
			run.Spec.Cluster.Existing.ServiceURL = "pulsar://pulsar.example:6650"
			return run
		}, "spec.cluster.existing.tls for pulsar needs serviceURL pulsar+ssl://host:6651 and adminURL https://host:8443"),
		Entry("Pulsar TLS with a plaintext admin URL", func() *v1alpha1.BenchmarkRun {
			run := existing(v1alpha1.SystemPulsar, tls, token)
			run.Spec.Cluster.Existing.AdminURL = "http://pulsar.example:8080"
			return run
		}, "spec.cluster.existing.tls for pulsar needs serviceURL pulsar+ssl://host:6651 and adminURL https://host:8443"),
	)

	// A rule that reads an absent field fails with CEL's "no such key",
	// which says nothing to the user; the missing URL has its own rule.
	It("says only what is missing of a Pulsar TLS run without a service URL", func() {
		run := existing(v1alpha1.SystemPulsar, tls, token)
		run.Spec.Cluster.Existing.ServiceURL = ""
		err := k8sClient.Create(ctx, run)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.cluster.existing: system pulsar needs both serviceURL (pulsar://...) and adminURL (http://...)"))
		Expect(err.Error()).NotTo(ContainSubstring("no such key"))
		Expect(err.Error()).NotTo(ContainSubstring("spec.cluster.existing.tls for pulsar needs"))
	})
})
