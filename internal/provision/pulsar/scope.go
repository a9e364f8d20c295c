package pulsar

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// RenderedKinds are the kinds the Pulsar chart (4.7.0) renders for a
// managed run with the values streambench gives (Values,
// EnablePodMonitors, securityValues) after releaseRenderer has left out
// the broker's RBAC and the cert-manager Certificates: all of them
// namespaced. TestRenderedKindsAreWhatTheChartRenders renders the chart
// for every setting that changes what it renders and checks the list
// against it, both ways. Helm installs a release with the operator's
// rights, so anything else in a manifest (a ClusterRole, a Namespace, a
// Secret) is refused rather than applied (CheckManifest).
var RenderedKinds = map[schema.GroupKind]bool{
	{Group: "", Kind: "ConfigMap"}:                       true,
	{Group: "", Kind: "Service"}:                         true,
	{Group: "", Kind: "ServiceAccount"}:                  true,
	{Group: "apps", Kind: "StatefulSet"}:                 true,
	{Group: "batch", Kind: "Job"}:                        true,
	{Group: "policy", Kind: "PodDisruptionBudget"}:       true,
	{Group: "monitoring.coreos.com", Kind: "PodMonitor"}: true,
}

// clusterScoped are cluster-scoped kinds a manifest might name, for the
// error's sake only: any kind not in RenderedKinds is refused.
var clusterScoped = map[schema.GroupKind]bool{
	{Group: "", Kind: "Namespace"}:                                                    true,
	{Group: "", Kind: "Node"}:                                                         true,
	{Group: "", Kind: "PersistentVolume"}:                                             true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                         true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                  true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:                 true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                   true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                               true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: true,
}

// CheckManifest refuses a release manifest (as rendered, or as stored in
// a release record) holding an object the operator may not create or
// delete for a run: one of a kind not in RenderedKinds (every
// cluster-scoped kind among them), or one that names a namespace other
// than namespace, the run's. An object without a namespace goes to the
// run's: Helm's kube client defaults it there.
//
// The manifest is split as Helm splits it (releaseutil.SplitManifests)
// and each part decoded as Helm's kube client decodes it (the YAML or
// JSON stream decoder of cli-runtime's builder), so no object reaches the
// API server that was not checked here; a part that does not decode is
// refused too.
func CheckManifest(manifest, namespace string) error {
	parts := releaseutil.SplitManifests(manifest)
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(parts)) {
		dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(parts[k]), 4096)
		for {
			var obj map[string]any
			err := dec.Decode(&obj)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("a document does not decode (%v)", err))
				break
			}
			if obj == nil {
				continue // empty, or only comments
			}
			if err := checkObject(obj, namespace); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func checkObject(obj map[string]any, namespace string) error {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	ns, _ := meta["namespace"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || kind == "" {
		return fmt.Errorf("an object with apiVersion %q and kind %q (name %q) names no kind", apiVersion, kind, name)
	}
	gk := gv.WithKind(kind).GroupKind()
	what := kind
	switch {
	case ns != "":
		what += " " + ns + "/" + name
	case name != "":
		what += " " + name
	}
	switch {
	case clusterScoped[gk]:
		return fmt.Errorf("%s (%s) is cluster-scoped", what, apiVersion)
	case !RenderedKinds[gk]:
		return fmt.Errorf("%s (%s) is not of a kind the chart renders for streambench (%s)", what, apiVersion, renderedKindList())
	case ns != "" && ns != namespace:
		return fmt.Errorf("%s names namespace %s, not the run's (%s)", what, ns, namespace)
	}
	return nil
}

func renderedKindList() string {
	var out []string
	for gk := range RenderedKinds {
		out = append(out, gk.String())
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// ScopeRenderer is the last post-render of a release: it passes the
// manifest through unchanged, or fails the install when CheckManifest
// refuses it, before Helm creates anything.
type ScopeRenderer struct {
	// Namespace is the run's, the release's.
	Namespace string
}

// Run checks the rendered manifest.
func (r ScopeRenderer) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	if err := CheckManifest(rendered.String(), r.Namespace); err != nil {
		return nil, fmt.Errorf("the rendered chart holds what streambench does not install into the run's namespace %s; nothing was created: %w; "+
			"streambench installs only the kinds chart %s renders for it, into the run's namespace: use that chart (--pulsar-chart-version)", r.Namespace, err, DefaultChartVersion)
	}
	return rendered, nil
}
