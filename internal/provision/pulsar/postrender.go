package pulsar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"helm.sh/helm/v3/pkg/postrender"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// AffinityPostRenderer returns a Helm post-renderer that adds affinity to
// the pod templates of the release's bookie and broker StatefulSets, or
// nil when affinity is nil.
//
// The chart cannot take an affinity through its values: its
// <component>.affinity holds only the anti_affinity switch and type, from
// which the templates render one podAntiAffinity term; a nodeAffinity
// written there would be dropped without a word. So placement.affinity is
// applied after rendering. nodeSelector and tolerations do go through the
// values (the chart renders them as given).
func AffinityPostRenderer(release string, affinity *corev1.Affinity) *AffinityRenderer {
	if affinity == nil {
		return nil
	}
	return &AffinityRenderer{
		Affinity: affinity.DeepCopy(),
		StatefulSets: map[string]bool{
			release + "-" + ComponentBookie: true,
			release + "-" + ComponentBroker: true,
		},
	}
}

// AuxiliaryAffinityPostRenderer returns a Helm post-renderer that adds
// affinity to the pod templates of the release's components off the data
// path: the ZooKeeper and autorecovery StatefulSets and the init Jobs
// (pulsar-init, bookie-init); nil when affinity is nil. Their chart values
// take no affinity at all (the init Jobs' pulsar_metadata only a
// nodeSelector and tolerations), as with AffinityPostRenderer.
func AuxiliaryAffinityPostRenderer(release string, affinity *corev1.Affinity) *AffinityRenderer {
	if affinity == nil {
		return nil
	}
	jobs := map[string]bool{}
	for _, j := range InitJobNames(release) {
		jobs[j] = true
	}
	return &AffinityRenderer{
		Affinity: affinity.DeepCopy(),
		StatefulSets: map[string]bool{
			release + "-" + ComponentZooKeeper: true,
			release + "-" + ComponentRecovery:  true,
		},
		Jobs: jobs,
	}
}

// AffinityRenderer is a Helm post-renderer (helm.sh/helm/v3/pkg/postrender)
// that merges Affinity into the pod templates of the named StatefulSets
// and Jobs.
type AffinityRenderer struct {
	Affinity     *corev1.Affinity
	StatefulSets map[string]bool
	Jobs         map[string]bool
}

// docSeparator is the line between documents of Helm's rendered manifest.
var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// Run rewrites the target StatefulSets' documents and passes every other
// document through as it is, in order.
func (r *AffinityRenderer) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	return eachDocument(rendered, func(doc string) (string, bool, error) {
		patched, err := r.patch(doc)
		return patched, err == nil, err
	})
}

// eachDocument rewrites every document of a rendered manifest with f, in
// order; a document f does not keep is left out.
func eachDocument(rendered *bytes.Buffer, f func(doc string) (out string, keep bool, err error)) (*bytes.Buffer, error) {
	var out bytes.Buffer
	for _, doc := range docSeparator.Split(rendered.String(), -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		patched, keep, err := f(doc)
		if err != nil {
			return nil, err
		}
		if !keep {
			continue
		}
		out.WriteString("---")
		if !strings.HasPrefix(patched, "\n") {
			out.WriteString("\n")
		}
		out.WriteString(patched)
		if !strings.HasSuffix(patched, "\n") {
			out.WriteString("\n")
		}
	}
	return &out, nil
}

// docHead is the kind and name of a rendered document; false when it does
// not parse (not ours to judge: Helm reports unparsable manifests itself).
func docHead(doc string) (kind, name string, ok bool) {
	var head struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
		return "", "", false
	}
	return head.Kind, head.Metadata.Name, true
}

func (r *AffinityRenderer) patch(doc string) (string, error) {
	kind, name, ok := docHead(doc)
	if !ok || !(kind == "StatefulSet" && r.StatefulSets[name] || kind == "Job" && r.Jobs[name]) {
		return doc, nil
	}
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		return "", fmt.Errorf("post-render of %s %s: %w", kind, name, err)
	}
	podSpec, ok := nested(obj, "spec", "template", "spec")
	if !ok {
		return "", fmt.Errorf("post-render of %s %s: no spec.template.spec", kind, name)
	}
	var rendered corev1.Affinity
	if a, ok := podSpec["affinity"]; ok && a != nil {
		b, err := json.Marshal(a)
		if err != nil {
			return "", err
		}
		if err := json.Unmarshal(b, &rendered); err != nil {
			return "", fmt.Errorf("post-render of %s %s: affinity: %w", kind, name, err)
		}
	}
	merged, err := toValue(MergeAffinity(&rendered, r.Affinity))
	if err != nil {
		return "", err
	}
	podSpec["affinity"] = merged
	body, err := yaml.Marshal(obj)
	if err != nil {
		return "", err
	}
	// Keep Helm's "# Source: <template>" comment for error messages.
	var comments strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "# Source:") {
			comments.WriteString(strings.TrimSpace(line) + "\n")
		}
	}
	return "\n" + comments.String() + string(body), nil
}

// MergeAffinity returns the chart's rendered affinity with the placement's
// added: the placement's node affinity and pod affinity (the chart renders
// neither), and the pod anti-affinity terms of both, so the chart's
// spreading and the run's own rules hold together. Neither input is
// changed.
func MergeAffinity(rendered, placement *corev1.Affinity) *corev1.Affinity {
	out := rendered.DeepCopy()
	if out == nil {
		out = &corev1.Affinity{}
	}
	if placement == nil {
		return out
	}
	p := placement.DeepCopy()
	if p.NodeAffinity != nil {
		out.NodeAffinity = p.NodeAffinity
	}
	if p.PodAffinity != nil {
		out.PodAffinity = p.PodAffinity
	}
	if p.PodAntiAffinity != nil {
		if out.PodAntiAffinity == nil {
			out.PodAntiAffinity = &corev1.PodAntiAffinity{}
		}
		out.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(
			out.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
			p.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		out.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(
			out.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
			p.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution...)
	}
	return out
}

func nested(obj map[string]any, fields ...string) (map[string]any, bool) {
	cur := obj
	for _, f := range fields {
		next, ok := cur[f].(map[string]any)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

// BrokerRBACRenderer leaves out the Role (or ClusterRole) and its binding
// that the chart always renders for the broker's service account, granting
// it create, update, patch and delete on pods, services, secrets,
// deployments and statefulsets. Only the functions worker's Kubernetes
// runtime uses them, and functions are off here (values.go). An operator
// may grant only what it holds (the API server refuses a Role that
// escalates), so installing them would need the operator itself to hold
// all of that in every namespace it runs in; without them it needs none
// of it.
type BrokerRBACRenderer struct {
	// Drop is the kind/name of each document to leave out.
	Drop map[string]bool
}

// NewBrokerRBACRenderer names the broker's RBAC objects of release, as
// the chart (4.x, templates/broker-cluster-role-binding.yaml) names them
// with rbac.limit_to_namespace either way.
func NewBrokerRBACRenderer(release string) *BrokerRBACRenderer {
	prefix := release + "-" + ComponentBroker
	return &BrokerRBACRenderer{Drop: map[string]bool{
		"Role/" + prefix + "-role":                             true,
		"RoleBinding/" + prefix + "-rolebinding":               true,
		"ClusterRole/" + prefix + "-clusterrole":               true,
		"ClusterRoleBinding/" + prefix + "-clusterrolebinding": true,
	}}
}

// Run passes every document but the dropped ones through, in order.
func (r *BrokerRBACRenderer) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	return eachDocument(rendered, func(doc string) (string, bool, error) {
		kind, name, ok := docHead(doc)
		return doc, !ok || !r.Drop[kind+"/"+name], nil
	})
}

// chainRenderer runs post-renderers one after the other (Helm takes one).
type chainRenderer []postrender.PostRenderer

func (c chainRenderer) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	var err error
	for _, r := range c {
		if rendered, err = r.Run(rendered); err != nil {
			return nil, err
		}
	}
	return rendered, nil
}

// PodMonitorRenderer sets Labels on every PodMonitor of the manifest,
// replacing a label of the same key the chart rendered (its release:).
type PodMonitorRenderer struct {
	Labels map[string]string
}

// Run relabels the PodMonitor documents and passes the others through.
func (r *PodMonitorRenderer) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	return eachDocument(rendered, func(doc string) (string, bool, error) {
		if kind, _, ok := docHead(doc); !ok || kind != "PodMonitor" {
			return doc, true, nil
		}
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return "", false, fmt.Errorf("post-render of a PodMonitor: %w", err)
		}
		meta, ok := nested(obj, "metadata")
		if !ok {
			return "", false, errors.New("post-render of a PodMonitor: no metadata")
		}
		lbls, _ := meta["labels"].(map[string]any)
		if lbls == nil {
			lbls = map[string]any{}
		}
		for k, v := range r.Labels {
			lbls[k] = v
		}
		meta["labels"] = lbls
		body, err := yaml.Marshal(obj)
		return "\n" + string(body), err == nil, err
	})
}

// CertificateRenderer leaves out the cert-manager Certificates the chart
// renders with tls.enabled (templates/tls-certs-internal.yaml renders the
// brokers' whether or not certs.internal_issuer is on: cert-manager is
// assumed). The operator writes the Secret such a Certificate would make
// (Secrets), so the chart installs where cert-manager is not, and where
// it is, no cert-manager replaces the operator's certificate with one of
// a CA the clients do not trust.
type CertificateRenderer struct{}

// Run passes every document but cert-manager.io Certificates through.
func (CertificateRenderer) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	return eachDocument(rendered, func(doc string) (string, bool, error) {
		kind, _, ok := docHead(doc)
		if !ok || kind != "Certificate" {
			return doc, true, nil
		}
		return doc, !strings.HasPrefix(docAPIVersion(doc), "cert-manager.io/"), nil
	})
}

func docAPIVersion(doc string) string {
	var head struct {
		APIVersion string `json:"apiVersion"`
	}
	_ = yaml.Unmarshal([]byte(doc), &head) // docHead parsed it already
	return head.APIVersion
}

// releaseRenderer is the post-render of a release: the broker's RBAC left
// out, the chart's Certificates left out with TLS, the placement's
// affinity when there is one, the auxiliary components' when there is
// one, the monitoring labels on the PodMonitors when there are any, and
// last the check that every object is of a kind the chart renders for
// streambench, in the run's namespace (ScopeRenderer).
func releaseRenderer(rel Release) postrender.PostRenderer {
	c := chainRenderer{NewBrokerRBACRenderer(rel.Name)}
	if rel.TLS {
		c = append(c, CertificateRenderer{})
	}
	if r := AffinityPostRenderer(rel.Name, rel.Affinity); r != nil {
		c = append(c, r)
	}
	if r := AuxiliaryAffinityPostRenderer(rel.Name, rel.AuxiliaryAffinity); r != nil {
		c = append(c, r)
	}
	if len(rel.MonitorLabels) > 0 {
		c = append(c, &PodMonitorRenderer{Labels: rel.MonitorLabels})
	}
	// Last: what is checked is what Helm applies.
	return append(c, ScopeRenderer{Namespace: rel.Namespace})
}
