package security

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
)

func path(r v1alpha1.SecretKeyRef) string { return "/s/" + r.Name + "/" + r.Key }

func key(name, k string) *v1alpha1.SecretKeyRef { return &v1alpha1.SecretKeyRef{Name: name, Key: k} }

func TestRefsAndResolve(t *testing.T) {
	kafka := func(e v1alpha1.ExistingCluster) *v1alpha1.BenchmarkRunSpec {
		if e.StrimziCluster == nil {
			e.BootstrapServers = "k:9093"
		}
		return &v1alpha1.BenchmarkRunSpec{System: v1alpha1.SystemKafka, Cluster: v1alpha1.ClusterSpec{Existing: &e}}
	}
	pulsar := func(e v1alpha1.ExistingCluster) *v1alpha1.BenchmarkRunSpec {
		e.ServiceURL, e.AdminURL = "pulsar+ssl://p:6651", "https://p:8443"
		return &v1alpha1.BenchmarkRunSpec{System: v1alpha1.SystemPulsar, Cluster: v1alpha1.ClusterSpec{Existing: &e}}
	}
	tests := []struct {
		name     string
		spec     *v1alpha1.BenchmarkRunSpec
		wantRefs []string // name/key
		want     *driver.Security
		wantErr  string
	}{
		{"plaintext", kafka(v1alpha1.ExistingCluster{}), nil, nil, ""},
		{"managed", &v1alpha1.BenchmarkRunSpec{System: v1alpha1.SystemKafka, Cluster: v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{}}}, nil, nil, ""},
		{"TLS with system roots", kafka(v1alpha1.ExistingCluster{TLS: &v1alpha1.ClientTLS{ServerName: "kafka.example"}}), nil,
			&driver.Security{TLS: &driver.TLSFiles{ServerName: "kafka.example"}}, ""},
		{"SASL_SSL SCRAM, CA and password in one Secret", kafka(v1alpha1.ExistingCluster{
			TLS:            &v1alpha1.ClientTLS{CA: key("kafka-creds", "ca.crt"), HostnameVerification: ptr.To(false)},
			Authentication: &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthScramSHA512, Username: "bench", Password: key("kafka-creds", "password")},
		}), []string{"kafka-creds/ca.crt", "kafka-creds/password"},
			&driver.Security{TLS: &driver.TLSFiles{CAFile: "/s/kafka-creds/ca.crt", SkipHostnameVerification: true}, Mechanism: "SCRAM-SHA-512", Username: "bench", PasswordFile: "/s/kafka-creds/password"}, ""},
		{"mutual TLS with default keys", kafka(v1alpha1.ExistingCluster{TLS: &v1alpha1.ClientTLS{CA: key("ca", "ca.crt"), ClientCertificate: &v1alpha1.ClientCertificate{SecretName: "me"}}}),
			[]string{"ca/ca.crt", "me/tls.crt", "me/tls.key"},
			&driver.Security{TLS: &driver.TLSFiles{CAFile: "/s/ca/ca.crt", CertFile: "/s/me/tls.crt", KeyFile: "/s/me/tls.key"}}, ""},
		{"Strimzi cluster's own CA and a SCRAM KafkaUser", kafka(v1alpha1.ExistingCluster{
			StrimziCluster: &v1alpha1.StrimziClusterRef{Name: "prod"},
			TLS:            &v1alpha1.ClientTLS{},
			Authentication: &v1alpha1.ClientAuthentication{StrimziKafkaUser: &v1alpha1.StrimziKafkaUserRef{SecretName: "bench", Type: v1alpha1.KafkaUserScramSHA512}},
		}), []string{"prod-cluster-ca-cert/ca.crt", "bench/password"},
			&driver.Security{TLS: &driver.TLSFiles{CAFile: "/s/prod-cluster-ca-cert/ca.crt"}, Mechanism: "SCRAM-SHA-512", Username: "bench", PasswordFile: "/s/bench/password"}, ""},
		{"a tls KafkaUser is mutual TLS", kafka(v1alpha1.ExistingCluster{
			StrimziCluster: &v1alpha1.StrimziClusterRef{Name: "prod"},
			TLS:            &v1alpha1.ClientTLS{},
			Authentication: &v1alpha1.ClientAuthentication{StrimziKafkaUser: &v1alpha1.StrimziKafkaUserRef{SecretName: "bench", Type: v1alpha1.KafkaUserTLS}},
		}), []string{"prod-cluster-ca-cert/ca.crt", "bench/user.crt", "bench/user.key"},
			&driver.Security{TLS: &driver.TLSFiles{CAFile: "/s/prod-cluster-ca-cert/ca.crt", CertFile: "/s/bench/user.crt", KeyFile: "/s/bench/user.key"}}, ""},
		{"a tls KafkaUser without TLS", kafka(v1alpha1.ExistingCluster{
			Authentication: &v1alpha1.ClientAuthentication{StrimziKafkaUser: &v1alpha1.StrimziKafkaUserRef{SecretName: "bench", Type: v1alpha1.KafkaUserTLS}},
		}), []string{"bench/user.crt", "bench/user.key"}, nil, "set spec.cluster.existing.tls"},
		{"OAUTHBEARER", kafka(v1alpha1.ExistingCluster{TLS: &v1alpha1.ClientTLS{}, Authentication: &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthOAuthBearer,
			OAuth2: &v1alpha1.OAuth2ClientCredentials{TokenEndpoint: "https://idp/token", ClientID: "bench", ClientSecret: v1alpha1.SecretKeyRef{Name: "idp", Key: "secret"}, Scope: "kafka"}}}),
			[]string{"idp/secret"},
			&driver.Security{TLS: &driver.TLSFiles{}, Mechanism: "OAUTHBEARER", OAuth2: &driver.OAuth2Files{TokenEndpoint: "https://idp/token", ClientID: "bench", ClientSecretFile: "/s/idp/secret", Scope: "kafka"}}, ""},
		{"Pulsar token", pulsar(v1alpha1.ExistingCluster{TLS: &v1alpha1.ClientTLS{CA: key("p", "ca.crt")}, Authentication: &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthToken, Token: key("p", "token")}}),
			[]string{"p/ca.crt", "p/token"},
			&driver.Security{TLS: &driver.TLSFiles{CAFile: "/s/p/ca.crt"}, Mechanism: "Token", TokenFile: "/s/p/token"}, ""},
		{"a Kafka mechanism for Pulsar", pulsar(v1alpha1.ExistingCluster{Authentication: &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthPlain, Username: "u", Password: key("p", "pw")}}),
			[]string{"p/pw"}, nil, "does not apply to system pulsar"},
		{"insecure skips the Strimzi CA", kafka(v1alpha1.ExistingCluster{StrimziCluster: &v1alpha1.StrimziClusterRef{Name: "prod"}, TLS: &v1alpha1.ClientTLS{InsecureSkipVerify: true}}),
			nil, &driver.Security{TLS: &driver.TLSFiles{InsecureSkipVerify: true}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var refs []string
			for _, r := range Refs(tt.spec) {
				refs = append(refs, r.Name+"/"+r.Key)
				if !strings.HasPrefix(r.Field, "spec.cluster.existing.") {
					t.Errorf("ref %s/%s names field %q, not a spec field", r.Name, r.Key, r.Field)
				}
			}
			if !reflect.DeepEqual(refs, tt.wantRefs) {
				t.Errorf("Refs = %v, want %v", refs, tt.wantRefs)
			}
			got, err := Resolve(tt.spec, path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Resolve error %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Resolve = %+v, want %+v", got, tt.want)
			}
			// Every path Resolve hands out is one of Refs': nothing is read
			// that is not mounted.
			for _, p := range pathsOf(got) {
				found := false
				for _, r := range refs {
					found = found || p == "/s/"+r
				}
				if !found {
					t.Errorf("Resolve reads %s, which Refs does not list (it would not be mounted)", p)
				}
			}
		})
	}
}

func pathsOf(s *driver.Security) []string {
	if s == nil {
		return nil
	}
	var out []string
	add := func(p string) {
		if p != "" {
			out = append(out, p)
		}
	}
	if s.TLS != nil {
		add(s.TLS.CAFile)
		add(s.TLS.CertFile)
		add(s.TLS.KeyFile)
	}
	add(s.PasswordFile)
	add(s.TokenFile)
	if s.OAuth2 != nil {
		add(s.OAuth2.ClientSecretFile)
	}
	return out
}
