package workers

import (
	"encoding/json"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
)

func secured(e v1alpha1.ExistingCluster) *v1alpha1.BenchmarkRun {
	r := run(v1alpha1.SystemKafka)
	if e.StrimziCluster == nil {
		e.BootstrapServers = "kafka.example:9093"
	}
	r.Spec.Cluster = v1alpha1.ClusterSpec{Existing: &e}
	return r
}

// secretVolumes are a pod's Secret volumes (the run's token comes by env,
// not a volume), by Secret name, with where the container mounts them.
func secretVolumes(t *testing.T, job *batchv1.Job) (map[string]*corev1.SecretVolumeSource, map[string]corev1.VolumeMount) {
	t.Helper()
	pod := job.Spec.Template.Spec
	vols := map[string]*corev1.SecretVolumeSource{}
	byVolume := map[string]string{}
	for _, v := range pod.Volumes {
		if v.Secret != nil {
			vols[v.Secret.SecretName] = v.Secret
			byVolume[v.Name] = v.Secret.SecretName
		}
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range pod.Containers[0].VolumeMounts {
		if s, ok := byVolume[m.Name]; ok {
			mounts[s] = m
		}
	}
	return vols, mounts
}

// The coordinator and the workers mount the Secret keys the run reads and
// no other key of those Secrets, read-only, each at SecretPath; the
// coordinator gets their paths in --security-json.
func TestJobsMountOnlyTheSecretKeysTheRunReads(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    v1alpha1.ExistingCluster
		want map[string][]string // Secret -> keys
		// The driver's settings the coordinator gets; nil: no flag.
		wantSec *driver.Security
	}{
		{name: "plaintext and anonymous: nothing", e: v1alpha1.ExistingCluster{}},
		{name: "SCRAM over TLS: the CA and the password, each from its Secret",
			e: v1alpha1.ExistingCluster{
				TLS: &v1alpha1.ClientTLS{CA: &v1alpha1.SecretKeyRef{Name: "kafka-ca", Key: "ca.crt"}, ServerName: "kafka.example"},
				Authentication: &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthScramSHA512, Username: "alice",
					Password: &v1alpha1.SecretKeyRef{Name: "alice", Key: "password"}},
			},
			want: map[string][]string{"kafka-ca": {"ca.crt"}, "alice": {"password"}},
			wantSec: &driver.Security{
				TLS:       &driver.TLSFiles{CAFile: "/etc/streambench/secrets/kafka-ca/ca.crt", ServerName: "kafka.example"},
				Mechanism: "SCRAM-SHA-512", Username: "alice", PasswordFile: "/etc/streambench/secrets/alice/password",
			}},
		{name: "a Strimzi cluster's CA and an mTLS KafkaUser: the user's certificate and key, not its user.p12 or user.password",
			e: v1alpha1.ExistingCluster{
				StrimziCluster: &v1alpha1.StrimziClusterRef{Name: "prod"},
				TLS:            &v1alpha1.ClientTLS{},
				Authentication: &v1alpha1.ClientAuthentication{StrimziKafkaUser: &v1alpha1.StrimziKafkaUserRef{SecretName: "bench-user", Type: v1alpha1.KafkaUserTLS}},
			},
			want: map[string][]string{"prod-cluster-ca-cert": {"ca.crt"}, "bench-user": {"user.crt", "user.key"}},
			wantSec: &driver.Security{TLS: &driver.TLSFiles{
				CAFile:   "/etc/streambench/secrets/prod-cluster-ca-cert/ca.crt",
				CertFile: "/etc/streambench/secrets/bench-user/user.crt", KeyFile: "/etc/streambench/secrets/bench-user/user.key",
			}}},
		{name: "CA and client certificate in one Secret: one volume with three keys",
			e: v1alpha1.ExistingCluster{TLS: &v1alpha1.ClientTLS{
				CA:                &v1alpha1.SecretKeyRef{Name: "client-tls", Key: "ca.crt"},
				ClientCertificate: &v1alpha1.ClientCertificate{SecretName: "client-tls"},
			}},
			want: map[string][]string{"client-tls": {"ca.crt", "tls.crt", "tls.key"}},
			wantSec: &driver.Security{TLS: &driver.TLSFiles{
				CAFile:   "/etc/streambench/secrets/client-tls/ca.crt",
				CertFile: "/etc/streambench/secrets/client-tls/tls.crt", KeyFile: "/etc/streambench/secrets/client-tls/tls.key",
			}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := secured(tc.e)
			coord := mustCoordinatorJob(t, r, v1alpha1.BrokerEndpoints{BootstrapServers: "kafka.example:9093"})
			for _, job := range []*batchv1.Job{coord, WorkerJob(r, "img")} {
				vols, mounts := secretVolumes(t, job)
				if len(vols) != len(tc.want) {
					t.Errorf("%s: Secret volumes %v, want %v", job.Name, vols, tc.want)
				}
				for name, keys := range tc.want {
					v := vols[name]
					if v == nil {
						t.Errorf("%s: no volume of Secret %s", job.Name, name)
						continue
					}
					var got []string
					for _, it := range v.Items {
						if it.Path != it.Key {
							t.Errorf("%s: Secret %s key %s at %s, want at its own name", job.Name, name, it.Key, it.Path)
						}
						got = append(got, it.Key)
					}
					if strings.Join(got, ",") != strings.Join(keys, ",") {
						t.Errorf("%s: Secret %s mounts keys %v, want only %v", job.Name, name, got, keys)
					}
					if v.DefaultMode == nil || *v.DefaultMode != 0o440 || v.Optional != nil {
						t.Errorf("%s: Secret %s mode %v optional %v, want 0440 and required", job.Name, name, v.DefaultMode, v.Optional)
					}
					m := mounts[name]
					if m.MountPath != SecretsDir+"/"+name || !m.ReadOnly {
						t.Errorf("%s: Secret %s mounted %+v, want read-only at %s/%s", job.Name, name, m, SecretsDir, name)
					}
				}
				// Readable by the container's process whatever its user:
				// the fsGroup is one of its groups and the files' group.
				sc := job.Spec.Template.Spec.SecurityContext
				if len(tc.want) > 0 && (sc.FSGroup == nil || *sc.FSGroup != SecretGroup) {
					t.Errorf("%s: fsGroup %v, want %d so the non-root container reads the 0440 files", job.Name, sc.FSGroup, SecretGroup)
				}
				if len(tc.want) == 0 && sc.FSGroup != nil {
					t.Errorf("%s: fsGroup %d on a pod that mounts no Secret", job.Name, *sc.FSGroup)
				}
			}
			if _, ok := args(WorkerJob(r, "img"))["security-json"]; ok {
				t.Error("the workers got --security-json; the coordinator sends it in the driver's config")
			}
			raw, ok := args(coord)["security-json"]
			if tc.wantSec == nil {
				if ok {
					t.Errorf("--security-json=%s for a plaintext, anonymous run", raw)
				}
				return
			}
			var got driver.Security
			if err := json.Unmarshal([]byte(raw), &got); err != nil {
				t.Fatalf("--security-json=%s: %v", raw, err)
			}
			gotJS, _ := json.Marshal(got)
			wantJS, _ := json.Marshal(tc.wantSec)
			if string(gotJS) != string(wantJS) {
				t.Errorf("--security-json\n got %s\nwant %s", gotJS, wantJS)
			}
		})
	}
}

// A combination the drivers could not honour fails the builder with
// security.Resolve's words (Pending refuses such a run before this).
func TestCoordinatorJobRefusesWhatResolveRefuses(t *testing.T) {
	r := secured(v1alpha1.ExistingCluster{Authentication: &v1alpha1.ClientAuthentication{
		StrimziKafkaUser: &v1alpha1.StrimziKafkaUserRef{SecretName: "u", Type: v1alpha1.KafkaUserTLS}}})
	_, err := CoordinatorJob(r, "img", v1alpha1.BrokerEndpoints{BootstrapServers: "k:9093"})
	if err == nil || !strings.Contains(err.Error(), "is of type tls (mutual TLS): set spec.cluster.existing.tls") {
		t.Errorf("err = %v", err)
	}
}

func TestSecretPath(t *testing.T) {
	if got := SecretPath(v1alpha1.SecretKeyRef{Name: "prod-cluster-ca-cert", Key: "ca.crt"}); got != "/etc/streambench/secrets/prod-cluster-ca-cert/ca.crt" {
		t.Errorf("SecretPath = %s", got)
	}
}
