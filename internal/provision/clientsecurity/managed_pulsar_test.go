package clientsecurity

import (
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
)

func managedPulsarRun(name string, sec *v1alpha1.ManagedSecurity) *v1alpha1.BenchmarkRun {
	return &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench"},
		Spec: v1alpha1.BenchmarkRunSpec{System: v1alpha1.SystemPulsar,
			Cluster: v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{Brokers: 1, Bookies: 1, Security: sec}}},
	}
}

func TestManagedPulsar(t *testing.T) {
	run := managedPulsarRun
	tests := []struct {
		name     string
		run      *v1alpha1.BenchmarkRun
		wantRefs []string // name/key
		want     *driver.Security
		wantErr  string
	}{
		{"plaintext", run("r", nil), nil, nil, ""},
		{"empty security is plaintext", run("r", &v1alpha1.ManagedSecurity{}), nil, nil, ""},
		{"TLS alone: the run's CA", run("r", &v1alpha1.ManagedSecurity{TLS: true}),
			[]string{"r-pulsar-ca-tls/ca.crt"},
			&driver.Security{TLS: &driver.TLSFiles{CAFile: "/s/r-pulsar-ca-tls/ca.crt"}}, ""},
		{"TLS and token: the CA and the benchmark role's token", run("r", &v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthToken}),
			[]string{"r-pulsar-ca-tls/ca.crt", "r-pulsar-token-streambench/TOKEN"},
			&driver.Security{TLS: &driver.TLSFiles{CAFile: "/s/r-pulsar-ca-tls/ca.crt"}, Mechanism: "Token", TokenFile: "/s/r-pulsar-token-streambench/TOKEN"}, ""},
		{"token over plaintext", run("r", &v1alpha1.ManagedSecurity{Authentication: v1alpha1.ManagedAuthToken}),
			[]string{"r-pulsar-token-streambench/TOKEN"},
			&driver.Security{Mechanism: "Token", TokenFile: "/s/r-pulsar-token-streambench/TOKEN"}, ""},
		{"names follow the release's, sanitized", run("Solo.Run", &v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthToken}),
			[]string{"solo-run-8714a7-pulsar-ca-tls/ca.crt", "solo-run-8714a7-pulsar-token-streambench/TOKEN"},
			&driver.Security{TLS: &driver.TLSFiles{CAFile: "/s/solo-run-8714a7-pulsar-ca-tls/ca.crt"}, Mechanism: "Token", TokenFile: "/s/solo-run-8714a7-pulsar-token-streambench/TOKEN"}, ""},
		{"a KafkaUser's SCRAM", run("r", &v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthScramSHA512}), nil, nil, "a managed Pulsar takes token, or none"},
		{"mutual TLS", run("r", &v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthTLS}), nil, nil, "a managed Pulsar takes token, or none"},
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
			if sec != nil {
				files := []string{sec.TokenFile}
				if sec.TLS != nil {
					files = append(files, sec.TLS.CAFile)
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

// The keys the clients read are keys of the Secrets the operator makes for
// the run (pulsar.Secrets), and never the signing key or a broker's token.
func TestManagedPulsarReadsWhatTheRunMakes(t *testing.T) {
	for _, sec := range []v1alpha1.ManagedSecurity{{TLS: true}, {Authentication: v1alpha1.ManagedAuthToken}, {TLS: true, Authentication: v1alpha1.ManagedAuthToken}} {
		run := managedPulsarRun("a-run", &sec)
		secrets, err := pulsar.Secrets(run, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		made := map[string]bool{}
		for _, s := range secrets {
			for k := range s.Data {
				made[s.Name+"/"+k] = true
			}
		}
		refs, err := RunRefs(run)
		if err != nil {
			t.Fatal(err)
		}
		if len(refs) == 0 {
			t.Fatalf("%+v: the clients read nothing", sec)
		}
		for _, r := range refs {
			if !made[r.Name+"/"+r.Key] {
				t.Errorf("%+v: the clients read %s/%s, which pulsar.Secrets does not make", sec, r.Name, r.Key)
			}
			if r.Key == pulsar.KeySecretKey || strings.HasSuffix(r.Name, "-"+pulsar.SubjectBroker) {
				t.Errorf("%+v: the clients read %s/%s, which is the brokers'", sec, r.Name, r.Key)
			}
		}
	}
}
