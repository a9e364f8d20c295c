package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/pflag"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/brokerres"
	"github.com/streambench/streambench-operator/internal/coordinator"
	"github.com/streambench/streambench-operator/internal/metrics"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

// monitoringFlags are the coordinator's monitoring options: its own
// /metrics, and the Prometheus it reads the brokers' resources from.
type monitoringFlags struct {
	metricsAddress  string
	prometheusURL   string
	brokerNamespace string
	brokerPods      string
}

func (m *monitoringFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&m.metricsAddress, "metrics-address", "", "serve the run's backlog and phase on http://<address>/metrics (e.g. :8080); empty: not served")
	fl.StringVar(&m.prometheusURL, "prometheus-url", "", "Prometheus to ask for the brokers' CPU, disk, network and GC over the measured phase (spec.monitoring.prometheusURL)")
	fl.StringVar(&m.brokerNamespace, "broker-namespace", "", "namespace of the broker pods (with --prometheus-url)")
	fl.StringVar(&m.brokerPods, "broker-pods", "", "regular expression of the broker pod names (with --prometheus-url)")
}

// serveMetrics serves the coordinator's /metrics until stop; the returned
// hook feeds it every collected snapshot.
func (m *monitoringFlags) serveMetrics(runID string, wl v1alpha1.WorkloadSpec) (onSnapshot func(stats.Snapshot), stop func(), err error) {
	if m.metricsAddress == "" {
		return nil, func() {}, nil
	}
	c := metrics.New()
	c.Reset(runID)
	c.SetSubscriptionsPerTopic(results.SubscriptionsPerTopic(wl))
	ln, err := net.Listen("tcp", m.metricsAddress)
	if err != nil {
		return nil, nil, fmt.Errorf("--metrics-address %s: %w", m.metricsAddress, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", c.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return func(s stats.Snapshot) { c.Add(s) }, func() { _ = srv.Close() }, nil
}

// brokerResources asks Prometheus for the brokers' resources over the
// measured phase. Nothing to ask, or a failure, is a note in the results,
// not a failed run: the latencies stand without the broker figures.
func (m *monitoringFlags) brokerResources(ctx context.Context, sys v1alpha1.System, res *coordinator.Result) (*brokerres.Report, string) {
	if m.prometheusURL == "" {
		return nil, "broker resources: not measured; no Prometheus to ask (spec.monitoring.prometheusURL, or install kube-prometheus-stack)"
	}
	if m.brokerPods == "" {
		return nil, "broker resources: not measured; the brokers are an existing cluster whose pods streambench does not know"
	}
	start, end, ok := res.MeasuredWindow()
	if !ok {
		return nil, "broker resources: not measured; the run has no measured phase"
	}
	// Prometheus sees the window's last samples one scrape later.
	if err := waitUntil(ctx, end.Add(30*time.Second)); err != nil {
		return nil, "broker resources: " + err.Error()
	}
	r, err := brokerres.QueryPrometheus(ctx, brokerres.PromTarget{URL: m.prometheusURL, Namespace: m.brokerNamespace, Pods: m.brokerPods, System: sys}, start, end)
	if err != nil {
		return nil, err.Error()
	}
	return r, ""
}

func waitUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return errors.New("interrupted before Prometheus was asked")
	case <-time.After(d):
		return nil
	}
}
