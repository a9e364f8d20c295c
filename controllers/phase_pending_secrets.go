package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/security"
)

// Reasons of a run refused in Pending for its cluster's credentials.
const (
	ReasonSecretMissing    = "SecretMissing"
	ReasonSecretKeyMissing = "SecretKeyMissing"
	ReasonSecurityInvalid  = "SecurityInvalid"
)

// The operator reads the Secrets a run names to check them (names of keys
// only; no value leaves this file): get, from the API server, so no Secret
// of the cluster is cached in the operator's memory. The coordinator and
// the workers never read Secrets through the API: they get the keys as
// files (workers.SecretPath).
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// checkSecrets checks, before anything is deployed, that every Secret key
// the run's clients read (security.Refs) exists in the run's namespace and
// is not empty, and that security.Resolve takes the spec. Bad input is a
// refusal whose message names the field, the Secret, the key asked for and
// the fix; never the Secret's other keys, not even their names: whoever
// may create a run need not be someone who may read the namespace's
// Secrets (issue 58). A Secret that Strimzi writes itself
// (the CA of spec.cluster.existing.strimziCluster, a KafkaUser's) may not
// exist yet when the run is created with its Kafka or KafkaUser: it is
// waited for, as the Kafka is, within spec.timeouts.provisioning; waiting
// says for what.
func (r *BenchmarkRunReconciler) checkSecrets(ctx context.Context, run *v1alpha1.BenchmarkRun) (refused *refusal, waiting string, err error) {
	e := run.Spec.Cluster.Existing
	if e == nil || (e.TLS == nil && e.Authentication == nil) {
		return nil, "", nil
	}
	if _, err := security.Resolve(&run.Spec, workers.SecretPath); err != nil {
		return &refusal{ReasonSecurityInvalid, err.Error()}, "", nil
	}
	if msg := strimziCAElsewhere(run); msg != "" {
		return &refusal{ReasonSecurityInvalid, msg}, "", nil
	}
	refs := security.Refs(&run.Spec)
	var names []string
	bySecret := map[string][]security.Ref{}
	for _, ref := range refs {
		if _, ok := bySecret[ref.Name]; !ok {
			names = append(names, ref.Name)
		}
		bySecret[ref.Name] = append(bySecret[ref.Name], ref)
	}
	for _, name := range names {
		refs := bySecret[name]
		var s corev1.Secret
		err := r.apiReader().Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: name}, &s)
		switch {
		case apierrors.IsNotFound(err):
			if wait := strimziWrites(run, refs[0]); wait != "" {
				if time.Now().Before(provisioningDeadline(run)) {
					return nil, fmt.Sprintf("waiting for Secret %s in namespace %s (%s), which %s", name, run.Namespace, fields(refs), wait), nil
				}
				return &refusal{ReasonSecretMissing, fmt.Sprintf(
					"%s: Secret %s was not found in namespace %s within spec.timeouts.provisioning (%s); %s, so check that it exists and is Ready, or name a Secret of your own (%s)",
					fields(refs), name, run.Namespace, provisioningTimeout(run), wait, createSecret(run.Namespace, name, refs))}, "", nil
			}
			return &refusal{ReasonSecretMissing, missingSecret(run, name, refs)}, "", nil
		case apierrors.IsForbidden(err):
			return &refusal{ReasonSecretMissing, fmt.Sprintf(
				"%s: the operator may not read Secret %s in namespace %s (%v): the operator's role must grant get on secrets in the run's namespace (in the chart's watchNamespaces mode, list the namespace there)",
				fields(refs), name, run.Namespace, err)}, "", nil
		case err != nil:
			return nil, "", err
		}
		for _, ref := range refs {
			v, ok := s.Data[ref.Key]
			if !ok {
				return &refusal{ReasonSecretKeyMissing, missingKey(run, ref, refs)}, "", nil
			}
			if len(v) == 0 {
				return &refusal{ReasonSecretKeyMissing, fmt.Sprintf(
					"%s: key %s of Secret %s is empty; put the file in it (%s), then create the run again",
					ref.Field, ref.Key, name, createSecret(run.Namespace, name, refs))}, "", nil
			}
		}
	}
	return nil, "", nil
}

// strimziCAElsewhere refuses a run that would trust a Strimzi cluster's CA
// (tls without ca) in a namespace other than the run's: Strimzi writes the
// CA Secret in the Kafka's namespace, and a run reads Secrets of its own.
func strimziCAElsewhere(run *v1alpha1.BenchmarkRun) string {
	e := run.Spec.Cluster.Existing
	sc := e.StrimziCluster
	if sc == nil || e.TLS == nil || e.TLS.CA != nil || e.TLS.InsecureSkipVerify || sc.Namespace == "" || sc.Namespace == run.Namespace {
		return ""
	}
	ca := security.StrimziCASecret(sc.Name)
	return fmt.Sprintf(
		"spec.cluster.existing.tls.ca is not set, so the run would trust the CA of Kafka %s, Secret %s (key %s), which Strimzi writes in the Kafka's namespace %s; a run reads Secrets of its own namespace (%s) only: copy it (%s) and set spec.cluster.existing.tls.ca to {name: %s, key: %s}, or create the run in namespace %s",
		sc.Name, ca, security.StrimziCAKey, sc.Namespace, run.Namespace,
		copySecret(sc.Namespace, run.Namespace, ca, []string{security.StrimziCAKey}), ca, security.StrimziCAKey, sc.Namespace)
}

// strimziWrites says who writes the Secret of ref when Strimzi does, in the
// run's namespace: the cluster's CA, or a KafkaUser's credentials (the
// User Operator writes them in the KafkaUser's namespace, by default the
// Kafka's). "" when the user must create it.
func strimziWrites(run *v1alpha1.BenchmarkRun, ref security.Ref) string {
	e := run.Spec.Cluster.Existing
	sc := e.StrimziCluster
	if sc == nil || (sc.Namespace != "" && sc.Namespace != run.Namespace) {
		return ""
	}
	if e.TLS != nil && e.TLS.CA == nil && ref.Name == security.StrimziCASecret(sc.Name) {
		return fmt.Sprintf("Strimzi writes with the CA of Kafka %s once its cluster operator has deployed it", sc.Name)
	}
	if a := e.Authentication; a != nil && a.StrimziKafkaUser != nil && ref.Name == a.StrimziKafkaUser.SecretName {
		return fmt.Sprintf("Strimzi's User Operator writes for KafkaUser %s of Kafka %s", a.StrimziKafkaUser.SecretName, sc.Name)
	}
	return ""
}

// missingSecret is the refusal of a Secret that does not exist, with the
// command that creates it, or copies a KafkaUser's from the Kafka's
// namespace.
func missingSecret(run *v1alpha1.BenchmarkRun, name string, refs []security.Ref) string {
	e := run.Spec.Cluster.Existing
	msg := fmt.Sprintf("%s: Secret %s not found in namespace %s; ", fields(refs), name, run.Namespace)
	if a := e.Authentication; a != nil && a.StrimziKafkaUser != nil && a.StrimziKafkaUser.SecretName == name &&
		e.StrimziCluster != nil && e.StrimziCluster.Namespace != "" && e.StrimziCluster.Namespace != run.Namespace {
		src := e.StrimziCluster.Namespace
		return msg + fmt.Sprintf("Strimzi's User Operator writes a KafkaUser's Secret in the KafkaUser's namespace (usually the Kafka's, %s), and a run reads Secrets of its own namespace only: copy it (%s), or create the run in namespace %s",
			src, copySecret(src, run.Namespace, name, refKeys(refs)), src)
	}
	return msg + fmt.Sprintf("create it (%s), then create the run again", createSecret(run.Namespace, name, refs))
}

// missingKey is the refusal of a key the Secret lacks, with what to set.
// It names the key asked for and the Secret only: the keys the Secret has
// are for those who may read it to list (kubectl describe secret), which
// the run's author need not be.
func missingKey(run *v1alpha1.BenchmarkRun, ref security.Ref, refs []security.Ref) string {
	e := run.Spec.Cluster.Existing
	head := fmt.Sprintf("Secret %s has no key %s", ref.Name, ref.Key)
	if a := e.Authentication; a != nil && a.StrimziKafkaUser != nil && a.StrimziKafkaUser.SecretName == ref.Name {
		return fmt.Sprintf("%s: %s: Strimzi writes key %s for a KafkaUser of type scram-sha-512, and %s and %s for one of type tls; set spec.cluster.existing.authentication.strimziKafkaUser.type to the KafkaUser's spec.authentication.type",
			ref.Field, head, security.StrimziPasswordKey, security.StrimziUserCertKey, security.StrimziUserKeyKey)
	}
	if e.TLS != nil && e.TLS.CA == nil && e.StrimziCluster != nil && ref.Name == security.StrimziCASecret(e.StrimziCluster.Name) {
		return fmt.Sprintf("%s: %s, so it is not the Strimzi cluster CA Secret it is named like; set spec.cluster.existing.tls.ca to the Secret and key of the brokers' CA",
			ref.Field, head)
	}
	field := ref.Field + ".key"
	if c := tlsClientCert(e); c != nil && ref.Field == "spec.cluster.existing.tls.clientCertificate" {
		field = ref.Field + ".privateKeyKey"
		if ref.Key == orDefault(c.CertificateKey, "tls.crt") {
			field = ref.Field + ".certificateKey"
		}
	}
	return fmt.Sprintf("%s: %s; set it to the key that holds the file (kubectl describe secret %s -n %s lists the Secret's keys, for those who may read it), or create the Secret with the key (%s)",
		field, head, ref.Name, run.Namespace, createSecret(run.Namespace, ref.Name, refs))
}

func tlsClientCert(e *v1alpha1.ExistingCluster) *v1alpha1.ClientCertificate {
	if e.TLS == nil {
		return nil
	}
	return e.TLS.ClientCertificate
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// fields names the spec fields that read a Secret.
func fields(refs []security.Ref) string {
	var fs []string
	for _, r := range refs {
		if !slices.Contains(fs, r.Field) {
			fs = append(fs, r.Field)
		}
	}
	return strings.Join(fs, " and ")
}

func refKeys(refs []security.Ref) []string {
	keys := make([]string, len(refs))
	for i, r := range refs {
		keys[i] = r.Key
	}
	return keys
}

// createSecret is the command that creates Secret name with the keys the
// run reads from it, each from a file (a value on a command line would end
// up in the shell's history).
func createSecret(ns, name string, refs []security.Ref) string {
	cmd := fmt.Sprintf("kubectl create secret generic %s -n %s", name, ns)
	for _, k := range refKeys(refs) {
		cmd += fmt.Sprintf(" --from-file=%s=FILE", k)
	}
	return cmd
}

// copySecret is the command that copies keys of Secret name from namespace
// src to dst, without a value on the command line.
func copySecret(src, dst, name string, keys []string) string {
	cmd := fmt.Sprintf("kubectl create secret generic %s -n %s", name, dst)
	for _, k := range keys {
		cmd += fmt.Sprintf(" --from-file=%s=<(kubectl get secret %s -n %s -o jsonpath='{.data.%s}' | base64 -d)",
			k, name, src, strings.ReplaceAll(k, ".", `\.`))
	}
	return cmd
}
