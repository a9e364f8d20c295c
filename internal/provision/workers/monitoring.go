package workers

import (
	"fmt"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/monitoring"
)

// monitoringArgs make the coordinator serve /metrics on its http port
// (the run's PodMonitor scrapes it) and, with a Prometheus to ask, read
// the brokers' resources over the measured phase from it.
func monitoringArgs(run *v1alpha1.BenchmarkRun) []string {
	args := []string{fmt.Sprintf("--metrics-address=:%d", Port)}
	if u := monitoring.PrometheusURL(run); u != "" {
		args = append(args, "--prometheus-url="+u, "--broker-namespace="+run.Namespace)
		if pods := monitoring.BrokerPods(run); pods != "" {
			args = append(args, "--broker-pods="+pods)
		}
	}
	return args
}
