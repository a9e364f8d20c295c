package clientsecurity

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
)

func TestManagedKafka(t *testing.T) {
	run := func(name string, sec *v1alpha1.ManagedSecurity) *v1alpha1.BenchmarkRun {
		return &v1alpha1.BenchmarkRun{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench"},
			Spec: v1alpha1.BenchmarkRunSpec{System: v1alpha1.SystemKafka,
				Cluster: v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{Brokers: 1, Security: sec}}},
		}
	}
	tests := []struct {
		name     string
		run      *v1alpha1.BenchmarkRun
		wantRefs []string // name/key
		want     *driver.Security
		wantErr  string
	}{
		{"plaintext", run("r", nil), nil, nil, ""},
		{"empty security is plaintext", run("r", &v1alpha1.ManagedSecurity{}), nil, nil, ""},
		{"TLS alone: Strimzi's cluster CA", run("r", &v1alpha1.ManagedSecurity{TLS: true}),
			[]string{"r-cluster-ca-cert/ca.crt"},
			&driver.Security{TLS: &driver.TLSFiles{CAFile: "/s/r-cluster-ca-cert/ca.crt"}}, ""},
		{"SASL_SSL SCRAM-SHA-512: the CA and the KafkaUser's password", run("r", &v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthScramSHA512}),
			[]string{"r-cluster-ca-cert/ca.crt", "r-client/password"},
			&driver.Security{TLS: &driver.TLSFiles{CAFile: "/s/r-cluster-ca-cert/ca.crt"}, Mechanism: "SCRAM-SHA-512", Username: "r-client", PasswordFile: "/s/r-client/password"}, ""},
		{"SASL_PLAINTEXT SCRAM-SHA-512", run("r", &v1alpha1.ManagedSecurity{Authentication: v1alpha1.ManagedAuthScramSHA512}),
			[]string{"r-client/password"},
			&driver.Security{Mechanism: "SCRAM-SHA-512", Username: "r-client", PasswordFile: "/s/r-client/password"}, ""},
		{"mutual TLS: the KafkaUser's certificate and key", run("r", &v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthTLS}),
			[]string{"r-cluster-ca-cert/ca.crt", "r-client/user.crt", "r-client/user.key"},
			&driver.Security{TLS: &driver.TLSFiles{CAFile: "/s/r-cluster-ca-cert/ca.crt", CertFile: "/s/r-client/user.crt", KeyFile: "/s/r-client/user.key"}}, ""},
		{"names follow the cluster's, sanitized", run("Solo.Run", &v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthScramSHA512}),
			[]string{"solo-run-8714a71a-cluster-ca-cert/ca.crt", "solo-run-8714a71a-client/password"},
			&driver.Security{TLS: &driver.TLSFiles{CAFile: "/s/solo-run-8714a71a-cluster-ca-cert/ca.crt"}, Mechanism: "SCRAM-SHA-512", Username: "solo-run-8714a71a-client", PasswordFile: "/s/solo-run-8714a71a-client/password"}, ""},
		{"mutual TLS without TLS", run("r", &v1alpha1.ManagedSecurity{Authentication: v1alpha1.ManagedAuthTLS}), nil, nil, "set spec.cluster.managed.security.tls: true"},
		{"Pulsar's token", run("r", &v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthToken}), nil, nil, `"token" is not for Kafka`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refs, err := RunRefs(tt.run)
			sec, rerr := RunResolve(tt.run, path)
			if tt.wantErr != "" {
				for _, e := range []error{err, rerr} {
					if e == nil || !strings.Contains(e.Error(), tt.wantErr) {
						t.Errorf("error %v, want one containing %q", e, tt.wantErr)
					}
				}
				return
			}
			if err != nil || rerr != nil {
				t.Fatalf("RunRefs: %v; RunResolve: %v", err, rerr)
			}
			var got []string
			mounted := map[string]bool{}
			for _, r := range refs {
				got = append(got, r.Name+"/"+r.Key)
				mounted[path(r.SecretKeyRef)] = true
				if r.Field != "spec.cluster.managed.security" {
					t.Errorf("ref %s/%s names field %q", r.Name, r.Key, r.Field)
				}
			}
			if !reflect.DeepEqual(got, tt.wantRefs) {
				t.Errorf("RunRefs = %v, want %v", got, tt.wantRefs)
			}
			if !reflect.DeepEqual(sec, tt.want) {
				t.Errorf("RunResolve = %+v, want %+v", sec, tt.want)
			}
			// Every file the clients open is one the Jobs mount.
			if sec != nil {
				files := []string{sec.PasswordFile, sec.TokenFile}
				if sec.TLS != nil {
					files = append(files, sec.TLS.CAFile, sec.TLS.CertFile, sec.TLS.KeyFile)
				}
				for _, f := range files {
					if f != "" && !mounted[f] {
						t.Errorf("RunResolve reads %s, which RunRefs does not mount", f)
					}
				}
			}
		})
	}
}

// The Secrets the clients read are the ones Strimzi writes for the objects
// the run creates: the CA of the Kafka the builder names, the Secret of
// the KafkaUser it builds (named like it: no secretPrefix).
func TestManagedKafkaNamesAreTheBuilders(t *testing.T) {
	run := &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "a-run", Namespace: "bench"},
		Spec: v1alpha1.BenchmarkRunSpec{System: v1alpha1.SystemKafka, Cluster: v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{
			Brokers: 1, Security: &v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthScramSHA512}}}},
	}
	user, err := strimzi.KafkaUser(run)
	if err != nil || user == nil {
		t.Fatalf("KafkaUser = %v, %v", user, err)
	}
	m, err := managedKafka(run)
	if err != nil {
		t.Fatal(err)
	}
	if m.Password.Name != user.GetName() || m.Username != user.GetName() {
		t.Errorf("password in Secret %s as user %s; the KafkaUser is %s", m.Password.Name, m.Username, user.GetName())
	}
	if want := strimzi.ClusterName(run) + "-cluster-ca-cert"; m.CA.Name != want {
		t.Errorf("CA Secret %s, Strimzi writes %s", m.CA.Name, want)
	}
}

// path is where the tests' clients find a Secret's key.
func path(r v1alpha1.SecretKeyRef) string { return "/s/" + r.Name + "/" + r.Key }
