package pulsar

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// imageConf is the configuration directory of the Pulsar image the local
// cluster runs the chart with (hack/images/pulsar.sh).
var imageConf = filepath.Join("..", "..", "..", "hack", "images", "pulsar", "conf")

// renderChart renders the upstream chart with the run's values and the
// release's post-render, as helm install would, and returns the
// manifests.
func renderChart(t *testing.T, run *v1alpha1.BenchmarkRun) []map[string]any {
	t.Helper()
	return renderChartWith(t, run, true)
}

// renderChartWith renders as renderChart, without the post-render unless
// postRender.
func renderChartWith(t *testing.T, run *v1alpha1.BenchmarkRun, postRender bool) []map[string]any {
	t.Helper()
	ch, err := loader.LoadDir(upstreamChart)
	if err != nil {
		t.Fatalf("loading the upstream chart (testdata/upstream): %v", err)
	}
	rel, err := ReleaseFor(run, translate(t, run))
	if err != nil {
		t.Fatal(err)
	}
	in := action.NewInstall(&action.Configuration{Releases: storage.Init(driver.NewMemory()), Capabilities: chartutil.DefaultCapabilities})
	in.ReleaseName, in.Namespace = rel.Name, run.Namespace
	in.DryRun, in.ClientOnly = true, true
	in.KubeVersion = &chartutil.KubeVersion{Version: "v1.36.3", Major: "1", Minor: "36"}
	if postRender {
		in.PostRenderer = releaseRenderer(rel)
	}
	out, err := in.Run(ch, rel.Values)
	if err != nil {
		t.Fatalf("rendering the chart: %v", err)
	}
	var docs []map[string]any
	for _, doc := range strings.Split(out.Manifest, "\n---") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("rendered manifest: %v\n%s", err, doc)
		}
		if m != nil {
			docs = append(docs, m)
		}
	}
	return docs
}

// confKeys reads the keys of a properties file.
func confKeys(t *testing.T, name string) map[string]bool {
	t.Helper()
	f, err := os.Open(filepath.Join(imageConf, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys := map[string]bool{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if k, _, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			keys[strings.TrimSpace(k)] = true
		}
	}
	return keys
}

// envOnly are configData entries the image's scripts read as environment
// variables, not configuration keys.
var envOnly = map[string]bool{"PULSAR_MEM": true, "PULSAR_GC": true, "PULSAR_EXTRA_OPTS": true, "BOOKIE_MEM": true, "BOOKIE_GC": true, "BOOKIE_EXTRA_OPTS": true}

// TestImageConfHasEveryPlainKey: bin/apply-config-from-env.py (the image's,
// like upstream's) drops a plain configData key its configuration file
// lacks, without a word, so every key the chart and streambench's values
// set plainly, for every level and with the samples' placement and
// resources, plain and with each of the security settings (TLS, token
// authentication, both), must be in the image's file for its component. This is what
// keeps the local cluster's Pulsar running with the settings status
// reports. (The reverse is pinned by
// TestPrefixedKeysAreTheTranslationsMissingKeys: the file must lack, as
// upstream's does, the keys streambench prefixes.)
func TestImageConfHasEveryPlainKey(t *testing.T) {
	files := map[string]string{ // ConfigMap <release>-<component> -> file
		ComponentZooKeeper: "zookeeper.conf",
		ComponentBookie:    "bookkeeper.conf",
		ComponentRecovery:  "bookkeeper.conf",
		ComponentBroker:    "broker.conf",
	}
	securities := []*v1alpha1.ManagedSecurity{
		nil,
		{TLS: true},
		{Authentication: v1alpha1.ManagedAuthToken},
		{TLS: true, Authentication: v1alpha1.ManagedAuthToken},
	}
	for i := 0; i < int(v1alpha1.Level4)+len(securities)-1; i++ {
		// Every level plain, then level 1 with each security setting.
		l, sec := v1alpha1.Level(i+1), (*v1alpha1.ManagedSecurity)(nil)
		if l > v1alpha1.Level4 {
			l, sec = v1alpha1.Level1, securities[i-int(v1alpha1.Level4)+1]
		}
		run := newRun(level(l), func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Cluster.Managed.Resources.Broker.Requests = corev1.ResourceList{corev1.ResourceMemory: *qty("1Gi")}
			r.Spec.Cluster.Managed.Resources.Bookie.Requests = corev1.ResourceList{corev1.ResourceMemory: *qty("1Gi")}
			r.Spec.Cluster.Managed.Resources.MetadataStore.Requests = corev1.ResourceList{corev1.ResourceMemory: *qty("512Mi")}
			r.Spec.Cluster.Managed.Security = sec
		})
		seen := map[string]bool{}
		for _, doc := range renderChart(t, run) {
			if doc["kind"] != "ConfigMap" {
				continue
			}
			name := doc["metadata"].(map[string]any)["name"].(string)
			component := strings.TrimPrefix(name, ReleaseName(run)+"-")
			file, ok := files[component]
			if !ok {
				continue
			}
			seen[component] = true
			keys := confKeys(t, file)
			data, _ := doc["data"].(map[string]any)
			for k := range data {
				if strings.HasPrefix(k, PulsarPrefix) || envOnly[k] {
					continue
				}
				if !keys[k] {
					t.Errorf("level %d, security %+v: ConfigMap %s sets %s plainly, which hack/images/pulsar/conf/%s lacks: the image would drop it; add the key to the file (with its upstream default)", l, sec, name, k, file)
				}
			}
		}
		for c := range files {
			if !seen[c] {
				t.Errorf("level %d: the chart rendered no ConfigMap of component %s", l, c)
			}
		}
	}
	if keys := confKeys(t, "bookkeeper.conf"); keys["journalPageCacheFlushIntervalMSec"] {
		t.Error("hack/images/pulsar/conf/bookkeeper.conf has journalPageCacheFlushIntervalMSec, which upstream's lacks: the image would hide a missing prefix")
	}
}
