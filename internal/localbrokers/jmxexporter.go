package localbrokers

import (
	"context"
	"fmt"
	"path/filepath"
)

// JMXExporterVersion is the Prometheus JMX exporter java agent the
// monitoring test attaches to local Kafka brokers, as Strimzi attaches it
// to its Kafka pods (metricsConfig of type jmxPrometheusExporter).
const JMXExporterVersion = "1.0.1"

// FetchJMXExporter fetches the JMX exporter java agent from Maven Central
// into CacheDir()/jmx-exporter-<version> and returns the jar's path.
func FetchJMXExporter(ctx context.Context) (string, error) {
	lib, err := FetchJars(ctx, filepath.Join(CacheDir(), "jmx-exporter-"+JMXExporterVersion),
		Artifact("io.prometheus.jmx:jmx_prometheus_javaagent:"+JMXExporterVersion))
	if err != nil {
		return "", err
	}
	jar := filepath.Join(lib, "jmx_prometheus_javaagent-"+JMXExporterVersion+".jar")
	return jar, nil
}

// JMXExporterArg attaches the agent to a JVM, serving /metrics on port
// with the exporter rules in config.
func JMXExporterArg(jar string, port int, config string) string {
	return fmt.Sprintf("-javaagent:%s=%d:%s", jar, port, config)
}
