package localrun

// An OMB driver file given with --driver-file.

import (
	"fmt"
	"os"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/ombdriver"
)

// LoadDriverFile reads an OMB driver file and maps it onto spec.driver for
// a run of system at the effective durability eff, with its security keys
// (nil for a plaintext, anonymous client; its secrets are read when
// written, by prepareSecurity); errors name the file.
func LoadDriverFile(path string, system v1alpha1.System, eff v1alpha1.EffectiveDurability) (*v1alpha1.DriverSpec, *ombdriver.Security, []ombdriver.Dropped, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--driver: %w", err)
	}
	f, err := ombdriver.Parse(data)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--driver %s: %w", path, err)
	}
	drv, sec, dropped, err := ombdriver.MapWithSecurity(f, system, eff)
	if err != nil {
		return nil, nil, dropped, fmt.Errorf("--driver %s: %w", path, err)
	}
	return drv, sec, dropped, nil
}
