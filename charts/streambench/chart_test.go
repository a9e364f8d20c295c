// Package streambench_test checks the operator's Helm chart with the Helm SDK:
// lint, render in both RBAC modes, the RBAC against controller-gen's
// generated role, Pod Security, and the values schema.
package streambench_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

const releaseNS = "streambench-system"

var watched = map[string]any{"watchNamespaces": []any{"team-a", "team-b"}}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	c, err := loader.Load(".")
	if err != nil {
		t.Fatalf("loading the chart: %v", err)
	}
	return c
}

// rendered is the chart's objects for the values, by kind.
type rendered struct {
	clusterRoles []rbacv1.ClusterRole
	// tenantRoles are the ClusterRoles for the tenants (tenant-roles.yaml),
	// not the manager's.
	tenantRoles []rbacv1.ClusterRole
	roles       []rbacv1.Role
	bindings    []rbacv1.RoleBinding
	crBindings  []rbacv1.ClusterRoleBinding
	deployment  *appsv1.Deployment
	services    []corev1.Service
	configMaps  []corev1.ConfigMap
	kinds       []string
}

func render(t *testing.T, values map[string]any) rendered {
	t.Helper()
	c := loadChart(t)
	vals, err := chartutil.ToRenderValues(c, values, chartutil.ReleaseOptions{Name: "streambench", Namespace: releaseNS, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatalf("values: %v", err)
	}
	files, err := engine.Render(c, vals)
	if err != nil {
		t.Fatalf("rendering: %v", err)
	}
	var out rendered
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range strings.Split(files[name], "\n---") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			var u unstructured.Unstructured
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, doc)
			}
			if u.Object == nil {
				continue // only comments
			}
			out.kinds = append(out.kinds, u.GetKind())
			into := func(v any) {
				if err := yaml.Unmarshal([]byte(doc), v); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			switch u.GetKind() {
			case "ClusterRole":
				var r rbacv1.ClusterRole
				into(&r)
				if name == "streambench/templates/tenant-roles.yaml" {
					out.tenantRoles = append(out.tenantRoles, r)
					break
				}
				out.clusterRoles = append(out.clusterRoles, r)
			case "Role":
				var r rbacv1.Role
				into(&r)
				out.roles = append(out.roles, r)
			case "RoleBinding":
				var b rbacv1.RoleBinding
				into(&b)
				out.bindings = append(out.bindings, b)
			case "ClusterRoleBinding":
				var b rbacv1.ClusterRoleBinding
				into(&b)
				out.crBindings = append(out.crBindings, b)
			case "Deployment":
				out.deployment = &appsv1.Deployment{}
				into(out.deployment)
			case "Service":
				var s corev1.Service
				into(&s)
				out.services = append(out.services, s)
			case "ConfigMap":
				var cm corev1.ConfigMap
				into(&cm)
				out.configMaps = append(out.configMaps, cm)
			}
		}
	}
	return out
}

// grants are rules as "group/resource verb" strings, the unit in which
// least privilege is compared.
func grants(t *testing.T, rules []rbacv1.PolicyRule) []string {
	t.Helper()
	var out []string
	for _, r := range rules {
		if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			t.Fatalf("rule %+v: resourceNames/nonResourceURLs are not expected", r)
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out = append(out, g+"/"+res+" "+v)
				}
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// generatedRules are controller-gen's rules from the +kubebuilder:rbac
// markers: what the operator's code asks for.
func generatedRules(t *testing.T) []rbacv1.PolicyRule {
	t.Helper()
	raw, err := os.ReadFile("../../config/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(raw, &role); err != nil {
		t.Fatal(err)
	}
	if len(role.Rules) == 0 {
		t.Fatal("config/rbac/role.yaml has no rules")
	}
	return role.Rules
}

func TestLint(t *testing.T) {
	for name, values := range map[string]map[string]any{"cluster-wide": nil, "watchNamespaces": watched} {
		t.Run(name, func(t *testing.T) {
			l := lint.AllWithKubeVersion(".", values, releaseNS, nil)
			for _, m := range l.Messages {
				if m.Severity >= support.WarningSev {
					t.Errorf("helm lint: %s", m)
				}
			}
		})
	}
}

func TestClusterWideRBACIsTheGeneratedRole(t *testing.T) {
	r := render(t, nil)
	if len(r.clusterRoles) != 1 || len(r.crBindings) != 1 {
		t.Fatalf("want one ClusterRole and one ClusterRoleBinding, got %d and %d", len(r.clusterRoles), len(r.crBindings))
	}
	if got, want := grants(t, r.clusterRoles[0].Rules), grants(t, generatedRules(t)); !slices.Equal(got, want) {
		t.Fatalf("the chart's ClusterRole is not controller-gen's role (run make manifests):\n got %v\nwant %v", got, want)
	}
	b := r.crBindings[0]
	if b.RoleRef.Name != r.clusterRoles[0].Name || len(b.Subjects) != 1 || b.Subjects[0].Namespace != releaseNS || b.Subjects[0].Name != r.deployment.Spec.Template.Spec.ServiceAccountName {
		t.Fatalf("ClusterRoleBinding %+v does not bind the manager's ServiceAccount", b)
	}
	for _, a := range r.deployment.Spec.Template.Spec.Containers[0].Args {
		if strings.HasPrefix(a, "--watch-namespaces") {
			t.Fatalf("cluster-wide mode passes %s", a)
		}
	}
	// Only the leader election Role, in the release namespace: the
	// ClusterRole covers the privileged Jobs there.
	for _, role := range r.roles {
		if role.Namespace != releaseNS || !strings.HasSuffix(role.Name, "-leader-election") {
			t.Fatalf("unexpected Role %s/%s", role.Namespace, role.Name)
		}
	}
}

func TestWatchNamespacesRBACIsLeastPrivilege(t *testing.T) {
	r := render(t, watched)
	generated := grants(t, generatedRules(t))

	// Cluster-wide: only cluster-scoped resources (the run's Namespace; the
	// StorageClasses, read so that the testbed probe claims no broker's
	// disk), never written, and never a secret or a Job.
	var clusterWide []string
	for _, cr := range r.clusterRoles {
		for _, g := range grants(t, cr.Rules) {
			if !strings.HasPrefix(g, "/namespaces ") && !slices.Contains([]string{
				"storage.k8s.io/storageclasses get", "storage.k8s.io/storageclasses list", "storage.k8s.io/storageclasses watch",
				// The run queue's overlap and disk checks (phase_queued.go).
				"/nodes list", "/persistentvolumes list"}, g) {
				t.Errorf("ClusterRole %s grants %q: in watchNamespaces mode only cluster-scoped resources may be granted cluster-wide", cr.Name, g)
			}
			clusterWide = append(clusterWide, g)
		}
	}

	// One manager Role per watched namespace, each the namespaced part of
	// the generated rules; Jobs and secrets nowhere else but for Helm's
	// release records in the release namespace.
	perNS := map[string][]string{}
	var records []string
	for _, role := range r.roles {
		if strings.HasSuffix(role.Name, "-release-records") {
			if role.Namespace != releaseNS {
				t.Errorf("release records Role in %s, want %s", role.Namespace, releaseNS)
			}
			records = grants(t, role.Rules)
			continue
		}
		if strings.HasSuffix(role.Name, "-leader-election") {
			if role.Namespace != releaseNS {
				t.Errorf("leader election Role in %s, want %s", role.Namespace, releaseNS)
			}
			for _, g := range grants(t, role.Rules) {
				if !strings.HasPrefix(g, "coordination.k8s.io/leases ") && !strings.HasPrefix(g, "events.k8s.io/events ") && g != "/events create" && g != "/events patch" {
					t.Errorf("leader election Role grants %q", g)
				}
			}
			continue
		}
		if strings.HasSuffix(role.Name, "-privileged-jobs") {
			continue // TestWatchNamespacesGrantsThePrivilegedJobs
		}
		if role.Namespace != "team-a" && role.Namespace != "team-b" {
			t.Errorf("manager Role in %s, which is not watched", role.Namespace)
		}
		perNS[role.Namespace] = grants(t, role.Rules)
	}
	if len(perNS) != 2 {
		t.Fatalf("manager Roles in %v, want team-a and team-b", perNS)
	}
	for ns, g := range perNS {
		union := append(slices.Clone(g), clusterWide...)
		sort.Strings(union)
		if !slices.Equal(slices.Compact(union), generated) {
			t.Errorf("the Role in %s with the ClusterRole grants\n %v\nwant controller-gen's\n %v", ns, union, generated)
		}
		if !slices.Contains(g, "batch/jobs create") || !slices.Contains(g, "/secrets get") {
			t.Errorf("the Role in %s misses Jobs or secrets the operator needs: %v", ns, g)
		}
	}
	// Helm's release records (pulsar.InstallerOptions.StorageNamespace):
	// Secrets in the manager's own namespace, with no more verbs than
	// the generated role holds for them.
	wantRecords := []string{"/secrets create", "/secrets delete", "/secrets get", "/secrets list", "/secrets update", "/secrets watch"}
	if !slices.Equal(records, wantRecords) {
		t.Errorf("the release records Role grants %v, want %v", records, wantRecords)
	}
	for _, g := range records {
		if !slices.Contains(generated, g) {
			t.Errorf("the release records Role grants %q, which controller-gen's role lacks", g)
		}
	}
	bound := map[string]bool{}
	recordsBound := false
	for _, b := range r.bindings {
		if b.RoleRef.Kind != "Role" || len(b.Subjects) != 1 || b.Subjects[0].Namespace != releaseNS {
			t.Errorf("RoleBinding %s/%s: %+v", b.Namespace, b.Name, b)
		}
		if strings.HasSuffix(b.Name, "-release-records") {
			recordsBound = b.Namespace == releaseNS && b.RoleRef.Name == b.Name && b.Subjects[0].Name == r.deployment.Spec.Template.Spec.ServiceAccountName
			continue
		}
		bound[b.Namespace] = true
	}
	if !bound["team-a"] || !bound["team-b"] {
		t.Errorf("RoleBindings in %v, want team-a and team-b", bound)
	}
	if !recordsBound {
		t.Errorf("no RoleBinding in %s binds the release records Role to the manager's ServiceAccount", releaseNS)
	}
	if !slices.Contains(r.deployment.Spec.Template.Spec.Containers[0].Args, "--watch-namespaces=team-a,team-b") {
		t.Errorf("the manager is not told to cache only the watched namespaces: %v", r.deployment.Spec.Template.Spec.Containers[0].Args)
	}
}

// TestTenantRoles: a tenant with edit in a namespace may run benchmarks
// there (runs and suites, not their status) and nothing more; view may read
// them. The roles aggregate into the built-in ones unless told not to.
func TestTenantRoles(t *testing.T) {
	byName := func(r rendered) map[string]rbacv1.ClusterRole {
		out := map[string]rbacv1.ClusterRole{}
		for _, cr := range r.tenantRoles {
			out[cr.Name] = cr
		}
		return out
	}
	roles := byName(render(t, nil))
	edit, view := roles["streambench-edit"], roles["streambench-view"]
	if len(roles) != 2 || edit.Name == "" || view.Name == "" {
		t.Fatalf("tenant roles = %v, want streambench-edit and streambench-view", roles)
	}
	var want []string
	for _, res := range []string{"benchmarkruns", "benchmarksuites"} {
		for _, v := range []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"} {
			want = append(want, "streambench.io/"+res+" "+v)
		}
		for _, v := range []string{"get", "list", "watch"} {
			want = append(want, "streambench.io/"+res+"/status "+v)
		}
	}
	sort.Strings(want)
	if got := grants(t, edit.Rules); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("streambench-edit grants\n %v\nwant\n %v", got, want)
	}
	for _, g := range grants(t, view.Rules) {
		if !strings.HasSuffix(g, " get") && !strings.HasSuffix(g, " list") && !strings.HasSuffix(g, " watch") {
			t.Errorf("streambench-view grants %q: it only reads", g)
		}
	}
	for role, labels := range map[string][]string{
		"streambench-edit": {"rbac.authorization.k8s.io/aggregate-to-edit", "rbac.authorization.k8s.io/aggregate-to-admin"},
		"streambench-view": {"rbac.authorization.k8s.io/aggregate-to-view"},
	} {
		for _, l := range labels {
			if roles[role].Labels[l] != "true" {
				t.Errorf("%s lacks label %s=true", role, l)
			}
		}
		if roles[role].Labels["rbac.authorization.k8s.io/aggregate-to-view"] == "true" && role == "streambench-edit" {
			t.Errorf("streambench-edit aggregates into view: view users could create runs")
		}
	}
	plain := byName(render(t, map[string]any{"tenantRoles": map[string]any{"aggregate": false}}))
	for name, cr := range plain {
		for l := range cr.Labels {
			if strings.HasPrefix(l, "rbac.authorization.k8s.io/aggregate-to-") {
				t.Errorf("aggregate: false, but %s has %s", name, l)
			}
		}
	}
	if off := render(t, map[string]any{"tenantRoles": map[string]any{"enabled": false}}); len(off.tenantRoles) != 0 {
		t.Errorf("enabled: false renders %d tenant roles", len(off.tenantRoles))
	}
}

func TestManagerPodIsRestricted(t *testing.T) {
	d := render(t, nil).deployment
	if d == nil {
		t.Fatal("no Deployment")
	}
	pod := d.Spec.Template.Spec
	ps := pod.SecurityContext
	if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Fatalf("pod securityContext %+v is not Pod Security restricted (runAsNonRoot, seccomp RuntimeDefault)", ps)
	}
	for _, c := range pod.Containers {
		sc := c.SecurityContext
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
			sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
			sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 ||
			(sc.Privileged != nil && *sc.Privileged) {
			t.Fatalf("container %s securityContext %+v is not restricted", c.Name, sc)
		}
	}
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		t.Fatal("the manager uses a host namespace")
	}
}

func TestDefaultsAreTheRelease(t *testing.T) {
	c := loadChart(t)
	want := "ghcr.io/streambench/streambench:" + c.Metadata.AppVersion
	r := render(t, nil)
	ctr := r.deployment.Spec.Template.Spec.Containers[0]
	if ctr.Image != want {
		t.Errorf("default image %s, want the released %s", ctr.Image, want)
	}
	for _, a := range []string{"--worker-image=" + want, "--pulsar-chart-version=4.7.0", "--leader-elect=true", "--zap-log-level=info", "--metrics-bind-address=:8080", "--worker-node-check=true"} {
		if !slices.Contains(ctr.Args, a) {
			t.Errorf("manager args %v miss %s", ctr.Args, a)
		}
	}
	if len(r.services) != 1 || r.services[0].Spec.Ports[0].Name != "metrics" {
		t.Errorf("want the metrics Service, got %+v", r.services)
	}
	// config/manager (kustomize) names the same release image.
	raw, err := os.ReadFile("../../config/manager/manager.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), want); n != 2 {
		t.Errorf("config/manager/manager.yaml names %s %d times, want 2 (image and --worker-image)", want, n)
	}
	// The values set what they say.
	r = render(t, map[string]any{"image": map[string]any{"tag": "e2e"}, "workerImage": "example.org/w:1", "logLevel": "debug", "leaderElection": false,
		"pulsarChart": map[string]any{"repository": "https://charts.example.org", "version": "4.8.0"}, "workerNodeCheck": false})
	ctr = r.deployment.Spec.Template.Spec.Containers[0]
	for _, a := range []string{"--worker-image=example.org/w:1", "--zap-log-level=debug", "--leader-elect=false", "--pulsar-chart-repo=https://charts.example.org", "--pulsar-chart-version=4.8.0", "--worker-node-check=false"} {
		if !slices.Contains(ctr.Args, a) {
			t.Errorf("manager args %v miss %s", ctr.Args, a)
		}
	}
	if ctr.Image != "ghcr.io/streambench/streambench:e2e" {
		t.Errorf("image %s with tag e2e", ctr.Image)
	}
	for _, role := range r.roles {
		if strings.HasSuffix(role.Name, "-leader-election") {
			t.Errorf("leader election off, yet Role %s", role.Name)
		}
	}
}

// allowedWorkerImages reaches the manager as --allowed-worker-images, and
// only when set: by default a run may name no image but workerImage.
func TestAllowedWorkerImages(t *testing.T) {
	flags := func(values map[string]any) []string {
		var out []string
		for _, a := range render(t, values).deployment.Spec.Template.Spec.Containers[0].Args {
			if strings.HasPrefix(a, "--allowed-worker-images") {
				out = append(out, a)
			}
		}
		return out
	}
	if got := flags(nil); len(got) != 0 {
		t.Errorf("by default the manager got %v; want no --allowed-worker-images (workerImage only)", got)
	}
	got := flags(map[string]any{"allowedWorkerImages": []any{"registry.example/streambench:0.2.0", "registry.example/streambench-dev:*"}})
	if want := "--allowed-worker-images=registry.example/streambench:0.2.0,registry.example/streambench-dev:*"; !slices.Equal(got, []string{want}) {
		t.Errorf("manager args %v, want %s", got, want)
	}
}

func TestCRDsAreTheGeneratedOnes(t *testing.T) {
	c := loadChart(t)
	for _, f := range c.Files {
		if strings.HasSuffix(f.Name, ".go") {
			t.Errorf("the packaged chart carries %s: .helmignore must leave the Go tests out", f.Name)
		}
	}
	// Every CRD controller-gen generates is in the chart, byte for byte,
	// and nothing else is.
	gen, err := filepath.Glob("../../config/crd/bases/*.yaml")
	if err != nil || len(gen) == 0 {
		t.Fatalf("no generated CRDs in config/crd/bases (%v): run make manifests", err)
	}
	crds := c.CRDObjects()
	if len(crds) != len(gen) {
		t.Fatalf("the chart has %d CRDs, config/crd/bases %d: run make manifests", len(crds), len(gen))
	}
	inChart := map[string]string{}
	for _, crd := range crds {
		inChart[filepath.Base(crd.File.Name)] = string(crd.File.Data)
	}
	for _, g := range gen {
		want, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := inChart[filepath.Base(g)]; !ok || got != string(want) {
			t.Errorf("charts/streambench/crds/%s is missing or differs from config/crd/bases: run make manifests", filepath.Base(g))
		}
	}
	role, err := os.ReadFile("files/manager-role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	genRole, err := os.ReadFile("../../config/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(role) != string(genRole) {
		t.Fatal("charts/streambench/files/manager-role.yaml differs from config/rbac/role.yaml: run make manifests")
	}
}

func TestSchemaRejectsBadValues(t *testing.T) {
	c := loadChart(t)
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   *regexp.Regexp
	}{
		{"log level", map[string]any{"logLevel": "verbose"}, regexp.MustCompile(`logLevel.*(debug|must be one of)`)},
		{"namespace name", map[string]any{"watchNamespaces": []any{"Team_A"}}, regexp.MustCompile(`watchNamespaces`)},
		{"unpinned Pulsar chart", map[string]any{"pulsarChart": map[string]any{"version": "latest"}}, regexp.MustCompile(`pulsarChart.*version`)},
		{"misspelt key", map[string]any{"imag": map[string]any{"tag": "x"}}, regexp.MustCompile(`imag`)},
		{"leader election as text", map[string]any{"leaderElection": "yes"}, regexp.MustCompile(`leaderElection`)},
		{"an allowed image with '*' inside", map[string]any{"allowedWorkerImages": []any{"registry.example/*/x:1"}}, regexp.MustCompile(`allowedWorkerImages`)},
		{"an empty allowed image", map[string]any{"allowedWorkerImages": []any{""}}, regexp.MustCompile(`allowedWorkerImages`)},
		{"allowed images as one string", map[string]any{"allowedWorkerImages": "a.example/x:1,b.example/y:1"}, regexp.MustCompile(`allowedWorkerImages`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := chartutil.ToRenderValues(c, tc.values, chartutil.ReleaseOptions{Name: "streambench", Namespace: releaseNS, IsInstall: true}, chartutil.DefaultCapabilities)
			if err == nil {
				t.Fatalf("values %v accepted", tc.values)
			}
			if !tc.want.MatchString(err.Error()) {
				t.Fatalf("error does not name the field (%s): %v", tc.want, err)
			}
		})
	}
}

// TestInstallDryRun runs helm install client-side, as the e2e suite's
// install does on a cluster: the CRD and every template go in one release.
func TestInstallDryRun(t *testing.T) {
	for name, values := range map[string]map[string]any{"cluster-wide": nil, "watchNamespaces": watched} {
		t.Run(name, func(t *testing.T) {
			install := action.NewInstall(&action.Configuration{})
			install.DryRun, install.ClientOnly, install.IncludeCRDs = true, true, true
			install.ReleaseName, install.Namespace = "streambench", releaseNS
			rel, err := install.Run(loadChart(t), values)
			if err != nil {
				t.Fatalf("helm install --dry-run: %v", err)
			}
			for _, k := range []string{"kind: CustomResourceDefinition", "kind: Deployment", "kind: ServiceAccount", "kind: Service"} {
				if !strings.Contains(rel.Manifest, k) {
					t.Errorf("the release has no %s", k)
				}
			}
		})
	}
}

// TestWatchNamespacesGrantsThePrivilegedJobs: the privileged signal and
// page-cache Jobs run in the release namespace, never a watched one
// (controllers/privileged_jobs.go), so in watchNamespaces mode a Role
// there grants what the manager does with them (create, get, list,
// watch, delete) and with their pods (get, list, watch: their termination
// messages), nothing more, and is bound to the manager; the manager
// caches only Jobs and pods there (cmd/streambench, cacheOptions).
func TestWatchNamespacesGrantsThePrivilegedJobs(t *testing.T) {
	r := render(t, watched)
	generated := grants(t, generatedRules(t))
	var role *rbacv1.Role
	for i := range r.roles {
		if strings.HasSuffix(r.roles[i].Name, "-privileged-jobs") {
			if role != nil {
				t.Fatalf("two privileged-jobs Roles")
			}
			role = &r.roles[i]
		}
	}
	if role == nil || role.Namespace != releaseNS {
		t.Fatalf("no privileged-jobs Role in the release namespace %s: %+v", releaseNS, role)
	}
	want := []string{"/pods get", "/pods list", "/pods watch",
		"batch/jobs create", "batch/jobs delete", "batch/jobs get", "batch/jobs list", "batch/jobs watch"}
	got := grants(t, role.Rules)
	if !slices.Equal(got, want) {
		t.Errorf("the privileged-jobs Role grants\n %v\nwant\n %v", got, want)
	}
	for _, g := range got {
		if !slices.Contains(generated, g) {
			t.Errorf("the privileged-jobs Role grants %q, which controller-gen's role does not", g)
		}
	}
	bound := false
	for _, b := range r.bindings {
		if b.RoleRef.Name == role.Name && b.Namespace == releaseNS {
			bound = len(b.Subjects) == 1 && b.Subjects[0].Namespace == releaseNS && b.Subjects[0].Name == r.deployment.Spec.Template.Spec.ServiceAccountName
		}
	}
	if !bound {
		t.Errorf("the privileged-jobs Role is not bound to the manager's ServiceAccount: %+v", r.bindings)
	}
	if !slices.Contains(r.deployment.Spec.Template.Spec.Containers[0].Args, "--operator-namespace="+releaseNS) {
		t.Errorf("the manager is not told its namespace: %v", r.deployment.Spec.Template.Spec.Containers[0].Args)
	}
}

// TestReleaseNamespaceMustAdmitPrivilegedPods: the chart says, where an
// installer reads it, that the privileged Jobs run in the release
// namespace and how a cluster admin lets them, and never sends anyone to
// label a tenant's namespace.
func TestReleaseNamespaceMustAdmitPrivilegedPods(t *testing.T) {
	fix := "kubectl label namespace " + releaseNS + " pod-security.kubernetes.io/enforce=privileged --overwrite"
	c := loadChart(t)
	vals, err := chartutil.ToRenderValues(c, watched, chartutil.ReleaseOptions{Name: "streambench", Namespace: releaseNS, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(c, vals)
	if err != nil {
		t.Fatal(err)
	}
	notes := files["streambench/templates/NOTES.txt"]
	if !strings.Contains(notes, fix) || !strings.Contains(notes, "run in\n"+releaseNS+", never in the runs' namespaces") {
		t.Errorf("NOTES.txt does not say where the privileged Jobs run and the fix %q:\n%s", fix, notes)
	}
	raw, err := os.ReadFile("values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "The release namespace must admit privileged pods") || !strings.Contains(string(raw), "pod-security.kubernetes.io/enforce=privileged") {
		t.Error("values.yaml does not document that the release namespace must admit privileged pods")
	}
	dep, err := os.ReadFile(filepath.Join("templates", "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(dep), "run in the runs' namespaces") || !strings.Contains(string(dep), "run in this, its own namespace") {
		t.Error("deployment.yaml's comment does not say the privileged Jobs run in the release namespace")
	}
}
