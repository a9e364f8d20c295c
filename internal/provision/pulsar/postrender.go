package pulsar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

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

// AffinityRenderer is a Helm post-renderer (helm.sh/helm/v3/pkg/postrender)
// that merges Affinity into the pod templates of the named StatefulSets.
type AffinityRenderer struct {
	Affinity     *corev1.Affinity
	StatefulSets map[string]bool
}

// docSeparator is the line between documents of Helm's rendered manifest.
var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// Run rewrites the target StatefulSets' documents and passes every other
// document through as it is, in order.
func (r *AffinityRenderer) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	var out bytes.Buffer
	for _, doc := range docSeparator.Split(rendered.String(), -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		patched, err := r.patch(doc)
		if err != nil {
			return nil, err
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

func (r *AffinityRenderer) patch(doc string) (string, error) {
	var head struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
		// Not ours to judge: Helm reports unparsable manifests itself.
		return doc, nil
	}
	if head.Kind != "StatefulSet" || !r.StatefulSets[head.Metadata.Name] {
		return doc, nil
	}
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		return "", fmt.Errorf("post-render of StatefulSet %s: %w", head.Metadata.Name, err)
	}
	podSpec, ok := nested(obj, "spec", "template", "spec")
	if !ok {
		return "", fmt.Errorf("post-render of StatefulSet %s: no spec.template.spec", head.Metadata.Name)
	}
	var rendered corev1.Affinity
	if a, ok := podSpec["affinity"]; ok && a != nil {
		b, err := json.Marshal(a)
		if err != nil {
			return "", err
		}
		if err := json.Unmarshal(b, &rendered); err != nil {
			return "", fmt.Errorf("post-render of StatefulSet %s: affinity: %w", head.Metadata.Name, err)
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
