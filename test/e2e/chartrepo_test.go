//go:build e2e

package e2e

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/repo"

	"github.com/streambench/streambench-operator/internal/localbrokers"
)

// pulsarChartDir is the Apache Pulsar chart 4.7.0 as published, unchanged
// (testdata/upstream, or E2E_PULSAR_CHART): the chart the operator
// installs for managed Pulsar runs.
func pulsarChartDir() string {
	return envOr("E2E_PULSAR_CHART", filepath.Join(upstreamDir(), "pulsar-chart-4.7.0"))
}

// servePulsarChartRepo serves a Helm chart repository (index.yaml and the
// chart's archive) holding the Apache Pulsar chart, on this host where
// pods reach it (brokerHost), and returns its URL, which the operator is
// installed with (pulsarChart.repository) in place of
// https://pulsar.apache.org/charts: the suite has no internet. "" when the
// chart is not there (the managed Pulsar spec then fails saying so).
func servePulsarChartRepo() string {
	dir := pulsarChartDir()
	if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err != nil {
		logf("no Pulsar chart at %s (%v): the operator keeps its default chart repository", dir, err)
		return ""
	}
	ch, err := loader.LoadDir(dir)
	Expect(err).NotTo(HaveOccurred(), "loading the Pulsar chart %s", dir)
	out, err := os.MkdirTemp("", "streambench-e2e-charts-")
	Expect(err).NotTo(HaveOccurred())
	_, err = chartutil.Save(ch, out)
	Expect(err).NotTo(HaveOccurred())
	port, err := localbrokers.FreePort()
	Expect(err).NotTo(HaveOccurred())
	url := "http://" + net.JoinHostPort(brokerHost, strconv.Itoa(port))
	index, err := repo.IndexDirectory(out, url)
	Expect(err).NotTo(HaveOccurred())
	Expect(index.WriteFile(filepath.Join(out, "index.yaml"), 0o644)).To(Succeed())
	l, err := net.Listen("tcp", net.JoinHostPort(brokerHost, strconv.Itoa(port)))
	Expect(err).NotTo(HaveOccurred(), "serving the chart repository where pods reach this host")
	srv := &http.Server{Handler: http.FileServer(http.Dir(out))}
	go func() { _ = srv.Serve(l) }()
	DeferCleanup(func() {
		_ = srv.Close()
		_ = os.RemoveAll(out)
	})
	logf("serving the Pulsar chart %s %s at %s", ch.Name(), ch.Metadata.Version, url)
	return url
}
