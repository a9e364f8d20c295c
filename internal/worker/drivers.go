package worker

import (
	"context"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/driver/kafka"
	"github.com/streambench/streambench-operator/internal/driver/pulsar"
)

// DefaultDrivers are the drivers of the systems streambench benchmarks.
func DefaultDrivers() map[v1alpha1.System]DriverFactory {
	return map[v1alpha1.System]DriverFactory{
		v1alpha1.SystemKafka: func(ctx context.Context, cfg driver.Config) (driver.Driver, error) {
			return kafka.New(ctx, cfg)
		},
		v1alpha1.SystemPulsar: func(ctx context.Context, cfg driver.Config) (driver.Driver, error) {
			return pulsar.New(ctx, cfg)
		},
	}
}
