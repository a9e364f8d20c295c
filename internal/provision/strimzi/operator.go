package strimzi

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// ClusterOperatorName is the name Strimzi's install files and Helm chart
// give the cluster operator's Deployment.
const ClusterOperatorName = "strimzi-cluster-operator"

// watchedNamespacesEnv is the cluster operator's list of the namespaces
// whose Kafkas it deploys: "*" for all, names separated by commas, or (as
// in Strimzi's install files) its own namespace through the downward API.
const watchedNamespacesEnv = "STRIMZI_NAMESPACE"

// Operator is an installed Strimzi cluster operator, as its Deployment
// says: where it is and which Kafka versions it deploys.
type Operator struct {
	Namespace, Name string
	// Versions are read from KafkaImagesEnv; nil when Err says why they
	// could not be.
	Versions KafkaVersions
	Err      error
	// Watches says whether it deploys the Kafkas of the namespace
	// ClusterOperators was asked about (watchedNamespacesEnv).
	Watches bool
}

func (o Operator) String() string { return o.Namespace + "/" + o.Name }

// ClusterOperators are the Strimzi cluster operators among deps: the
// Deployments with a container that has KafkaImagesEnv, whatever their
// name (a Helm release or OLM may name them otherwise). The one to ask
// about a Kafka in namespace comes first: one that watches namespace
// before one that does not, then one named ClusterOperatorName, then by
// namespace and name, so that the choice among several is the same on
// every reconcile and the message can say why it was made.
func ClusterOperators(deps []appsv1.Deployment, namespace string) []Operator {
	var out []Operator
	for _, d := range deps {
		for _, c := range d.Spec.Template.Spec.Containers {
			images, ok := envOf(c, KafkaImagesEnv)
			if !ok {
				continue
			}
			op := Operator{Namespace: d.Namespace, Name: d.Name, Watches: watches(d.Namespace, c, namespace)}
			if images.ValueFrom != nil {
				op.Err = fmt.Errorf("%s is set from a ConfigMap or Secret (valueFrom), which streambench does not read", KafkaImagesEnv)
			} else {
				op.Versions, op.Err = ParseKafkaImages(images.Value)
			}
			out = append(out, op)
			break
		}
	}
	slices.SortFunc(out, func(a, b Operator) int {
		if a.Watches != b.Watches {
			return boolFirst(a.Watches)
		}
		if an, bn := a.Name == ClusterOperatorName, b.Name == ClusterOperatorName; an != bn {
			return boolFirst(an)
		}
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return out
}

// boolFirst orders a true before a false (the two differ).
func boolFirst(a bool) int {
	if a {
		return -1
	}
	return 1
}

// watches reports whether the cluster operator in container c of a
// Deployment in own deploys the Kafkas of namespace. A value it cannot
// read counts as not watching: it only orders the operators, never
// excludes one.
func watches(own string, c corev1.Container, namespace string) bool {
	env, ok := envOf(c, watchedNamespacesEnv)
	switch {
	case !ok:
		return false
	case env.ValueFrom != nil:
		ref := env.ValueFrom.FieldRef
		return ref != nil && ref.FieldPath == "metadata.namespace" && own == namespace
	}
	for _, ns := range strings.Split(env.Value, ",") {
		if ns = strings.TrimSpace(ns); ns == "*" || ns == namespace {
			return true
		}
	}
	return false
}

func envOf(c corev1.Container, name string) (corev1.EnvVar, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e, true
		}
	}
	return corev1.EnvVar{}, false
}
