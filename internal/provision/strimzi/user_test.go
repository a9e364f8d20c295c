package strimzi

import (
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func TestKafkaUser(t *testing.T) {
	tests := []struct {
		name string
		run  *v1alpha1.BenchmarkRun
		want string // "" for no KafkaUser
	}{
		{
			name: "SCRAM-SHA-512 over TLS",
			run:  newRun(withSecurity(true, v1alpha1.ManagedAuthScramSHA512)),
			want: `
apiVersion: kafka.strimzi.io/v1
kind: KafkaUser
metadata:
  name: run-a-client
  namespace: bench
  labels:
    app.kubernetes.io/managed-by: streambench
    streambench.io/run: run-a
    strimzi.io/cluster: run-a
spec:
  authentication: {type: scram-sha-512}
`,
		},
		{
			// The name follows the cluster's, sanitized like it.
			name: "mutual TLS, a run name that is no DNS label",
			run: newRun(withSecurity(true, v1alpha1.ManagedAuthTLS), func(r *v1alpha1.BenchmarkRun) {
				r.Name = "Solo.Run"
			}),
			want: `
apiVersion: kafka.strimzi.io/v1
kind: KafkaUser
metadata:
  name: solo-run-8714a71a-client
  namespace: bench
  labels:
    app.kubernetes.io/managed-by: streambench
    streambench.io/run: Solo.Run
    strimzi.io/cluster: solo-run-8714a71a
spec:
  authentication: {type: tls}
`,
		},
		{
			name: "SCRAM-SHA-512 without TLS",
			run:  newRun(withSecurity(false, v1alpha1.ManagedAuthScramSHA512)),
			want: `
apiVersion: kafka.strimzi.io/v1
kind: KafkaUser
metadata:
  name: run-a-client
  namespace: bench
  labels:
    app.kubernetes.io/managed-by: streambench
    streambench.io/run: run-a
    strimzi.io/cluster: run-a
spec:
  authentication: {type: scram-sha-512}
`,
		},
		{name: "no security", run: newRun()},
		{name: "TLS alone", run: newRun(withSecurity(true, ""))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := KafkaUser(tc.run)
			if err != nil {
				t.Fatalf("KafkaUser: %v", err)
			}
			if NeedsUser(tc.run) != (tc.want != "") {
				t.Errorf("NeedsUser = %t, want %t", NeedsUser(tc.run), tc.want != "")
			}
			if tc.want == "" {
				if got != nil {
					t.Fatalf("KafkaUser = %v, want none", got.Object)
				}
				return
			}
			assertObject(t, got, tc.want)
			assertClientSafe(t, got)
			if got.GetName() != UserName(tc.run) {
				t.Errorf("name %q, UserName says %q", got.GetName(), UserName(tc.run))
			}
		})
	}
}

func TestKafkaUserErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  *v1alpha1.BenchmarkRun
		want string
	}{
		{"mutual TLS without TLS", newRun(withSecurity(false, v1alpha1.ManagedAuthTLS)), "spec.cluster.managed.security.authentication tls is mutual TLS: set spec.cluster.managed.security.tls: true"},
		{"Pulsar's token", newRun(withSecurity(true, v1alpha1.ManagedAuthToken)), `"token" is not for Kafka`},
		{"pulsar run", newRun(withSecurity(true, v1alpha1.ManagedAuthToken), func(r *v1alpha1.BenchmarkRun) { r.Spec.System = v1alpha1.SystemPulsar }), `spec.system is "pulsar"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := KafkaUser(tc.run)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("KafkaUser = %v, %v; want an error containing %q", got, err, tc.want)
			}
		})
	}
}

// The controller finds the run's listener on the Kafka it built with
// SelectListener and ManagedNeeds: for every security a Kafka run may ask,
// the builder's listener must be the one picked, or a run would wait for a
// bootstrap that never comes.
func TestManagedNeedsSelectTheBuiltListener(t *testing.T) {
	for _, tc := range []struct {
		tls       bool
		auth      v1alpha1.ManagedAuthentication
		want      ClientNeeds
		name      string
		port      int64
		authType  string
		needsUser bool
	}{
		{false, "", ClientNeeds{}, ListenerName, ListenerPort, "", false},
		{true, "", ClientNeeds{TLS: true}, TLSListenerName, TLSListenerPort, "", false},
		{false, v1alpha1.ManagedAuthScramSHA512, ClientNeeds{Mechanism: v1alpha1.AuthScramSHA512}, ListenerName, ListenerPort, "scram-sha-512", true},
		{true, v1alpha1.ManagedAuthScramSHA512, ClientNeeds{TLS: true, Mechanism: v1alpha1.AuthScramSHA512}, TLSListenerName, TLSListenerPort, "scram-sha-512", true},
		{true, v1alpha1.ManagedAuthTLS, ClientNeeds{TLS: true, ClientCertificate: true}, TLSListenerName, TLSListenerPort, "tls", true},
	} {
		run := newRun(withSecurity(tc.tls, tc.auth))
		if got := ManagedNeeds(run); got != tc.want {
			t.Errorf("tls %t, authentication %q: ManagedNeeds = %+v, want %+v", tc.tls, tc.auth, got, tc.want)
		}
		kafka, err := Kafka(run, translate(t, run))
		if err != nil {
			t.Fatalf("tls %t, authentication %q: Kafka: %v", tc.tls, tc.auth, err)
		}
		l, err := SelectListener(kafka, ManagedNeeds(run))
		if err != nil {
			t.Errorf("tls %t, authentication %q: %v", tc.tls, tc.auth, err)
			continue
		}
		want := Listener{Name: tc.name, Port: tc.port, Type: "internal", TLS: tc.tls, AuthType: tc.authType, EnableOAuthBearer: true}
		if l != want {
			t.Errorf("tls %t, authentication %q: SelectListener = %+v, want %+v", tc.tls, tc.auth, l, want)
		}
		if NeedsUser(run) != tc.needsUser {
			t.Errorf("tls %t, authentication %q: NeedsUser = %t, want %t", tc.tls, tc.auth, NeedsUser(run), tc.needsUser)
		}
	}
	// A run without spec.cluster.managed.security is the plaintext one.
	if n := ManagedNeeds(newRun()); n != (ClientNeeds{}) {
		t.Errorf("no security: ManagedNeeds = %+v", n)
	}
}

func TestUserReady(t *testing.T) {
	tests := []struct {
		name   string
		status string
		gen    int64
		ready  bool
		reason string
	}{
		{
			name: "ready with its Secret",
			gen:  1,
			status: `
  observedGeneration: 1
  username: run-a-client
  secret: run-a-client
  conditions:
  - {type: Ready, status: "True", lastTransitionTime: "2026-01-01T00:00:00Z"}
`,
			ready: true,
		},
		{
			name:   "no status yet",
			gen:    1,
			reason: "KafkaUser run-a-client: no Ready condition yet (the User Operator of Kafka run-a has not reported on it; it starts with the Kafka's entity operator)",
		},
		{
			// Strimzi's words are kept: the User Operator could not reach
			// the brokers, say.
			name: "the User Operator failed",
			gen:  1,
			status: `
  observedGeneration: 1
  conditions:
  - {type: NotReady, status: "True", reason: TimeoutException, message: "Timed out waiting for a node assignment. Call: describeUserScramCredentials"}
`,
			reason: "KafkaUser run-a-client: NotReady=True (TimeoutException: Timed out waiting for a node assignment. Call: describeUserScramCredentials)",
		},
		{
			name: "ready for an older generation",
			gen:  2,
			status: `
  observedGeneration: 1
  secret: run-a-client
  conditions:
  - {type: Ready, status: "True"}
`,
			reason: "KafkaUser run-a-client: Ready=True is stale: status.observedGeneration is 1, metadata.generation is 2",
		},
		{
			name: "ready without the Secret's name",
			gen:  1,
			status: `
  observedGeneration: 1
  conditions:
  - {type: Ready, status: "True"}
`,
			reason: `KafkaUser run-a-client: Ready=True but status.secret is "", not "run-a-client"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			user, err := KafkaUser(newRun(withSecurity(true, v1alpha1.ManagedAuthScramSHA512)))
			if err != nil {
				t.Fatal(err)
			}
			user.SetGeneration(tc.gen)
			if tc.status != "" {
				user.Object["status"] = statusObject(t, "apiVersion: kafka.strimzi.io/v1\nkind: KafkaUser\nstatus:"+tc.status).Object["status"]
			}
			ready, reason := UserReady(user)
			if ready != tc.ready || !strings.HasPrefix(reason, tc.reason) || (tc.reason == "") != (reason == "") {
				t.Errorf("UserReady = %t, %q\nwant %t, %q", ready, reason, tc.ready, tc.reason)
			}
		})
	}
}
