package pulsar

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// TestCheckManifest: what the operator installs, or deletes at an
// uninstall, is of a kind the chart renders for streambench and in the
// run's namespace; anything else is refused, however the manifest is
// spelt (Helm's splitting, JSON, a separator with a comment).
func TestCheckManifest(t *testing.T) {
	const ns = "bench"
	obj := func(apiVersion, kind, name, namespace string) string {
		s := "apiVersion: " + apiVersion + "\nkind: " + kind + "\nmetadata:\n  name: " + name + "\n"
		if namespace != "" {
			s += "  namespace: " + namespace + "\n"
		}
		return s
	}
	var every []string
	for _, gk := range slices.SortedFunc(maps.Keys(RenderedKinds), func(a, b schema.GroupKind) int { return strings.Compare(a.String(), b.String()) }) {
		gv := schema.GroupVersion{Group: gk.Group, Version: "v1"}
		every = append(every, "---\n# Source: pulsar/templates/x.yaml\n"+obj(gv.String(), gk.Kind, "run-a-pulsar-x", ""))
	}
	for _, tc := range []struct {
		name     string
		manifest string
		// want are substrings of the error; none: accepted.
		want []string
	}{
		{"every rendered kind, no namespace", strings.Join(every, ""), nil},
		{"the run's namespace", obj("v1", "ConfigMap", "c", ns), nil},
		{"empty and comment-only documents", "---\n# Source: pulsar/templates/empty.yaml\n---\n\n", nil},
		{"another namespace", obj("v1", "ConfigMap", "victim", "kube-system"), []string{"ConfigMap kube-system/victim names namespace kube-system, not the run's (bench)"}},
		{"cluster-scoped: ClusterRole", obj("rbac.authorization.k8s.io/v1", "ClusterRole", "admin", ""), []string{"ClusterRole admin (rbac.authorization.k8s.io/v1) is cluster-scoped"}},
		{"cluster-scoped: Namespace", obj("v1", "Namespace", "x", ""), []string{"Namespace x (v1) is cluster-scoped"}},
		{"cluster-scoped, though it names a namespace", obj("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "b", ns), []string{"ClusterRoleBinding bench/b (rbac.authorization.k8s.io/v1) is cluster-scoped"}},
		{"a kind the chart does not render for us: Secret", obj("v1", "Secret", "s", ns), []string{"Secret bench/s (v1) is not of a kind the chart renders for streambench (ConfigMap, Job.batch, PodDisruptionBudget.policy, PodMonitor.monitoring.coreos.com, Service, ServiceAccount, StatefulSet.apps)"}},
		{"a kind the chart does not render for us: Role", obj("rbac.authorization.k8s.io/v1", "Role", "r", ""), []string{"Role r (rbac.authorization.k8s.io/v1) is not of a kind"}},
		{"a kind of the list in another group", obj("example.com/v1", "StatefulSet", "s", ""), []string{"StatefulSet s (example.com/v1) is not of a kind"}},
		{"a List, which Helm's kube client flattens", "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(obj("v1", "ConfigMap", "c", "kube-system"), "\n", "\n  "), []string{"List (v1) is not of a kind"}},
		{"JSON", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "victim", "namespace": "kube-system"}}`, []string{"ConfigMap kube-system/victim names namespace kube-system"}},
		{"a separator with a comment, which Helm splits at", obj("v1", "ConfigMap", "c", "") + "--- # hidden\n" + obj("rbac.authorization.k8s.io/v1", "ClusterRole", "hidden", ""), []string{"ClusterRole hidden (rbac.authorization.k8s.io/v1) is cluster-scoped"}},
		{"no kind", "apiVersion: v1\nmetadata:\n  name: x\n", []string{`apiVersion "v1" and kind "" (name "x") names no kind`}},
		{"a bad apiVersion", obj("a/b/c", "ConfigMap", "x", ""), []string{`apiVersion "a/b/c"`}},
		{"a document that does not decode", "- a\n- b\n", []string{"a document does not decode"}},
		{"every offence is named", obj("v1", "ConfigMap", "c", "other") + "---\n" + obj("v1", "Secret", "s", ""), []string{"ConfigMap other/c names namespace other", "Secret s (v1) is not of a kind"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckManifest(tc.manifest, ns)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("CheckManifest: %v; want it accepted", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("CheckManifest accepted\n%s", tc.manifest)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestScopeRendererIsLast: the release's post-render passes what it
// checked through unchanged and refuses, with the fix, what CheckManifest
// refuses, whatever else the post-render does.
func TestScopeRendererIsLast(t *testing.T) {
	ok := "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
	out, err := ScopeRenderer{Namespace: "bench"}.Run(bytes.NewBufferString(ok))
	if err != nil || out.String() != ok {
		t.Fatalf("ScopeRenderer.Run = %q, %v; want the manifest unchanged", out, err)
	}
	run := newRun(func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Cluster.Managed.Security = &v1alpha1.ManagedSecurity{TLS: true}
		r.Spec.Cluster.Managed.Placement.Affinity = placementAffinity()
	})
	rel, err := ReleaseFor(run, translate(t, run))
	if err != nil {
		t.Fatal(err)
	}
	bad := ok + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: victim\n  namespace: kube-system\n"
	_, err = releaseRenderer(rel).Run(bytes.NewBufferString(bad))
	for _, w := range []string{"the rendered chart holds what streambench does not install into the run's namespace bench; nothing was created", "ConfigMap kube-system/victim names namespace kube-system", "use that chart (--pulsar-chart-version)"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("releaseRenderer on an object in another namespace: %v; want %q", err, w)
		}
	}
}

// renderVariants are the settings that change what the chart renders for
// a run: the PodMonitors (where the CRD is served), TLS (the chart's
// Certificate, left out), token authentication (its jwt-secret-init hook,
// off), the StorageClasses and placements the samples use.
var renderVariants = []struct {
	name     string
	run      func(*v1alpha1.BenchmarkRun)
	monitors bool
}{
	{"plain", func(*v1alpha1.BenchmarkRun) {}, false},
	{"PodMonitors", func(*v1alpha1.BenchmarkRun) {}, true},
	{"TLS", func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Cluster.Managed.Security = &v1alpha1.ManagedSecurity{TLS: true}
	}, false},
	{"token", func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Cluster.Managed.Security = &v1alpha1.ManagedSecurity{Authentication: v1alpha1.ManagedAuthToken}
	}, false},
	{"TLS, token and PodMonitors", func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Cluster.Managed.Security = &v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthToken}
	}, true},
	{"StorageClasses, placement, a pinned version", func(r *v1alpha1.BenchmarkRun) {
		m := r.Spec.Cluster.Managed
		m.Version = "4.0.12"
		m.Storage.Journal.StorageClassName = ptr.To("local-nvme")
		m.Storage.Ledgers.StorageClassName = ptr.To("local-nvme")
		m.Storage.MetadataStore.StorageClassName = ptr.To("standard")
		m.Placement.NodeSelector = map[string]string{"node-pool": "streaming"}
		m.Placement.Affinity = placementAffinity()
	}, true},
}

// renderRelease renders the upstream chart for rel as helm install
// would, post-render included, and returns the release: its manifest and
// its hooks, which Helm 3 keeps apart from the manifest and does not
// post-render.
func renderRelease(t *testing.T, rel Release) *release.Release {
	t.Helper()
	ch, err := loader.LoadDir(upstreamChart)
	if err != nil {
		t.Fatalf("loading the upstream chart (testdata/upstream): %v", err)
	}
	in := action.NewInstall(&action.Configuration{Releases: storage.Init(driver.NewMemory()), Capabilities: chartutil.DefaultCapabilities})
	in.ReleaseName, in.Namespace = rel.Name, rel.Namespace
	in.DryRun, in.ClientOnly = true, true
	in.KubeVersion = &chartutil.KubeVersion{Version: "v1.36.3", Major: "1", Minor: "36"}
	in.PostRenderer = releaseRenderer(rel)
	out, err := in.Run(ch, rel.Values)
	if err != nil {
		t.Fatalf("rendering the chart: %v", err)
	}
	return out
}

func variantRelease(t *testing.T, run func(*v1alpha1.BenchmarkRun), monitors bool) Release {
	t.Helper()
	r := newRun(run)
	rel, err := ReleaseFor(r, translate(t, r))
	if err != nil {
		t.Fatal(err)
	}
	if monitors {
		EnablePodMonitors(&rel, map[string]string{"release": "kube-prometheus-stack"})
	}
	return rel
}

// TestRenderedKindsAreWhatTheChartRenders: RenderedKinds is what chart
// 4.7.0 renders for streambench, neither more (a kind allowed that the
// chart never renders for us) nor less (an install refused), and every
// object of it passes CheckManifest in the run's namespace.
func TestRenderedKindsAreWhatTheChartRenders(t *testing.T) {
	seen := map[schema.GroupKind]bool{}
	for _, v := range renderVariants {
		rel := variantRelease(t, v.run, v.monitors)
		out := renderRelease(t, rel)
		if err := CheckManifest(out.Manifest, rel.Namespace); err != nil {
			t.Errorf("%s: CheckManifest refuses the chart's own render: %v", v.name, err)
		}
		for _, doc := range strings.Split(out.Manifest, "\n---") {
			var head struct{ APIVersion, Kind string }
			if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
				t.Fatal(err)
			}
			if head.Kind == "" {
				continue
			}
			gv, err := schema.ParseGroupVersion(head.APIVersion)
			if err != nil {
				t.Fatal(err)
			}
			seen[gv.WithKind(head.Kind).GroupKind()] = true
		}
	}
	for gk := range RenderedKinds {
		if !seen[gk] {
			t.Errorf("RenderedKinds allows %s, which the chart renders in none of the variants: remove it", gk)
		}
	}
	for gk := range seen {
		if !RenderedKinds[gk] {
			t.Errorf("the chart renders %s, which RenderedKinds does not allow", gk)
		}
	}
}

// TestChartHooks pins why the Installer disables hooks (disableHooks):
// with the values streambench gives, the chart's hooks are pre-upgrade
// only, and the Installer never upgrades.
func TestChartHooks(t *testing.T) {
	for _, v := range renderVariants {
		out := renderRelease(t, variantRelease(t, v.run, v.monitors))
		for _, h := range out.Hooks {
			for _, e := range h.Events {
				if e != release.HookPreUpgrade {
					t.Errorf("%s: the chart renders hook %s %s on %s: decide whether streambench needs it before disabling hooks (disableHooks)", v.name, h.Kind, h.Name, e)
				}
			}
		}
		if len(out.Hooks) == 0 {
			t.Logf("%s: no hooks", v.name)
		}
	}
}
