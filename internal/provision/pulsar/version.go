package pulsar

import (
	"context"
	"fmt"
)

// ChartInfo is what a release was installed from: the chart's version and
// the Pulsar version it deploys by default (its appVersion, the tag of
// apachepulsar/pulsar-all the chart's images take when no tag is set).
type ChartInfo struct {
	Name       string
	Version    string
	AppVersion string
}

// PulsarVersion is the Pulsar a managed run deployed, and a note when it is
// not the chart's default: the version the spec pins
// (spec.cluster.managed.version) wins over the chart's appVersion. A
// report reader comparing with the chart's own defaults, or with a run
// that took them, sees which Pulsar ran and that the spec chose it; the
// durability experiment's coverage is per version (internal/durability).
func PulsarVersion(pinned string, ch ChartInfo) (version, note string) {
	switch {
	case pinned == "":
		return ch.AppVersion, ""
	case ch.AppVersion == "" || pinned == ch.AppVersion:
		return pinned, ""
	}
	return pinned, fmt.Sprintf("Pulsar %s, not %s (the default of chart %s %s): spec.cluster.managed.version pins it, so the brokers ran the image apachepulsar/pulsar-all:%s",
		pinned, ch.AppVersion, ch.Name, ch.Version, pinned)
}

// ReleaseChart reads the chart a release was installed from (the
// release's own record, not the Installer's configured source: a release
// installed before the operator's chart setting changed keeps its chart).
// It blocks no longer than ctx allows (Helm's storage calls take no
// context).
func (i *Installer) ReleaseChart(ctx context.Context, namespace, name string) (ChartInfo, error) {
	last, err := i.lastRelease(ctx, namespace, name)
	switch {
	case err != nil:
		return ChartInfo{}, err
	case last == nil:
		return ChartInfo{}, fmt.Errorf("release %s/%s is not installed", namespace, name)
	case last.Chart == nil || last.Chart.Metadata == nil:
		return ChartInfo{}, fmt.Errorf("release %s/%s records no chart", namespace, name)
	}
	md := last.Chart.Metadata
	return ChartInfo{Name: md.Name, Version: md.Version, AppVersion: md.AppVersion}, nil
}
