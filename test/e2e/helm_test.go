//go:build e2e

package e2e

import (
	"errors"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// The release as docs/on-a-cluster.md's recipe installs it:
// helm install streambench charts/streambench --namespace streambench-system --create-namespace --wait
const releaseName = "streambench"

// helmConfig is Helm's client for the suite's cluster, releases stored in
// the operator's namespace (Secrets, Helm's default driver).
func helmConfig() *action.Configuration {
	settings := cli.New()
	settings.KubeConfig = kubeconfig
	settings.SetNamespace(operatorNamespace)
	cfg := new(action.Configuration)
	Expect(cfg.Init(settings.RESTClientGetter(), operatorNamespace, "secret", func(format string, v ...any) { logf("helm: "+format, v...) })).To(Succeed())
	return cfg
}

// installOperator installs charts/streambench with the Helm SDK, the image
// being the suite's (E2E_IMG). A release left by an earlier run
// (E2E_KEEP_OPERATOR) is removed first, so the suite tests a fresh install.
func installOperator() *release.Release {
	cfg := helmConfig()
	uninstall := action.NewUninstall(cfg)
	uninstall.Wait, uninstall.Timeout, uninstall.IgnoreNotFound = true, 2*time.Minute, true
	if _, err := uninstall.Run(releaseName); err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		Expect(err).NotTo(HaveOccurred(), "removing the previous release %s", releaseName)
	}
	// The operator of config/default, as suites before the chart installed
	// it: two managers would share the runs.
	_, _ = kubectlE(nil, "-n", operatorNamespace, "delete", "deployment", "streambench-controller-manager", "--ignore-not-found")
	// Helm installs a chart's CRDs but never upgrades them: a cluster that
	// has an older CRD gets this one as README tells users to.
	kubectl(nil, "apply", "--server-side", "--force-conflicts", "-f", filepath.Join(repoRoot, "charts", "streambench", "crds"))

	chart, err := loader.Load(filepath.Join(repoRoot, "charts", "streambench"))
	Expect(err).NotTo(HaveOccurred())
	repo, tag := splitImage(image)
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace = releaseName, operatorNamespace
	install.CreateNamespace, install.Wait, install.Timeout = true, true, 3*time.Minute
	values := map[string]any{
		// The image is imported into the node's runtime, never pulled.
		"image": map[string]any{"repository": repo, "tag": tag, "pullPolicy": "IfNotPresent"},
	}
	if pulsarChartRepo != "" {
		values["pulsarChart"] = map[string]any{"repository": pulsarChartRepo}
	}
	rel, err := install.Run(chart, values)
	if err != nil {
		dumpOperator()
	}
	Expect(err).NotTo(HaveOccurred(), "helm install %s charts/streambench", releaseName)
	return rel
}

func uninstallOperator() {
	uninstall := action.NewUninstall(helmConfig())
	uninstall.Wait, uninstall.Timeout, uninstall.IgnoreNotFound = false, time.Minute, true
	if _, err := uninstall.Run(releaseName); err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		logf("helm uninstall %s: %v", releaseName, err)
	}
}

// splitImage cuts repository:tag at the last colon after the last slash (a
// registry may have a port).
func splitImage(ref string) (repo, tag string) {
	i := strings.LastIndex(ref, ":")
	if i < 0 || i < strings.LastIndex(ref, "/") {
		Fail("E2E_IMG " + ref + " has no tag: give repository:tag")
	}
	return ref[:i], ref[i+1:]
}
