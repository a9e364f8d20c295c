package strimzi

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// ManagedNeeds is what the clients of a managed run need of its listener,
// from spec.cluster.managed.security; SelectListener finds the listener
// the Kafka builder made for them by it.
func ManagedNeeds(run *v1alpha1.BenchmarkRun) ClientNeeds {
	m := run.Spec.Cluster.Managed
	if m == nil || m.Security == nil {
		return ClientNeeds{}
	}
	n := ClientNeeds{TLS: m.Security.TLS}
	switch m.Security.Authentication {
	case v1alpha1.ManagedAuthScramSHA512:
		n.Mechanism = v1alpha1.AuthScramSHA512
	case v1alpha1.ManagedAuthTLS:
		n.ClientCertificate = true
	}
	return n
}

// NeedsUser says whether the run's clients authenticate, and so need the
// run's KafkaUser and the User Operator that serves it.
func NeedsUser(run *v1alpha1.BenchmarkRun) bool {
	n := ManagedNeeds(run)
	return n.Mechanism != "" || n.ClientCertificate
}

// Private mirror of the part of Strimzi's KafkaUser schema set here.
type kafkaUserSpec struct {
	Authentication kafkaUserAuthentication `json:"authentication"`
	// No authorization: the Kafka has none, so the user may do anything
	// (Strimzi refuses ACLs the brokers cannot enforce).
}

type kafkaUserAuthentication struct {
	// Type is scram-sha-512 (the User Operator makes a password and puts
	// the SCRAM credentials on the brokers through the admin API) or tls
	// (it issues a certificate with CN=<name> from the clients CA).
	Type string `json:"type"`
}

// KafkaUser builds the run's KafkaUser (UserName), or nil when its clients
// do not authenticate. The strimzi.io/cluster label ties it to the run's
// Kafka: the User Operator serves only the KafkaUsers labelled with its
// cluster. Its Secret, named like it, holds what the clients read (see
// internal/security's managed Kafka).
func KafkaUser(run *v1alpha1.BenchmarkRun) (*unstructured.Unstructured, error) {
	m, err := managed(run)
	if err != nil {
		return nil, err
	}
	if _, err := clientListener(m.Security); err != nil {
		return nil, err
	}
	if !NeedsUser(run) {
		return nil, nil
	}
	lbls := labels(run)
	maps.Copy(lbls, map[string]string{LabelCluster: ClusterName(run)})
	spec := kafkaUserSpec{Authentication: kafkaUserAuthentication{Type: string(m.Security.Authentication)}}
	return newObject(KafkaUserGVK, UserName(run), run.Namespace, lbls, &spec)
}

// UserReady reports whether the User Operator has served the KafkaUser's
// current spec: Ready=True at its generation, and status.secret naming the
// Secret it wrote (it sets Ready only after the Secret and the brokers'
// credentials are in place). reason says what is missing, with the User
// Operator's words when it failed (NotReady=True): such a failure is
// waited out, not fatal, since it retries, and the provisioning timeout
// bounds the wait.
func UserReady(user *unstructured.Unstructured) (ready bool, reason string) {
	cluster := user.GetLabels()[LabelCluster]
	if ok, why := readyAtGeneration(user, "KafkaUser",
		"the User Operator of Kafka "+cluster+" has not reported on it; it starts with the Kafka's entity operator",
		"the User Operator"); !ok {
		return false, why
	}
	prefix := fmt.Sprintf("KafkaUser %s: ", user.GetName())
	if s, _, _ := unstructured.NestedString(user.Object, "status", "secret"); s != user.GetName() {
		return false, fmt.Sprintf("%sReady=True but status.secret is %q, not %q (the Secret the clients read is named like the KafkaUser; is the User Operator's secretPrefix set?)", prefix, s, user.GetName())
	}
	return true, ""
}
