package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/streambench/streambench-operator/internal/results"
)

// Named is one run's results under the name it is shown with.
type Named struct {
	Name    string
	Summary *results.Summary
	// OMB may be nil: the report and the comparison need only the summary.
	OMB *results.OMBResult
}

// StatusFaultsFile is a BenchmarkRun's status.faults as JSON, written
// beside a cluster run's summary.json by `streambench report` and
// `compare`: the controller injects a cluster run's faults and records
// them in the run's status, which the coordinator's summary.json does not
// hold. Local mode's summary.json has its own faults.
const StatusFaultsFile = "status-faults.json"

// Load reads dir/summary.json and, if present, dir/omb-result.json. The
// name is the summary's run name, or the directory's name when it has none.
// A summary without faults takes them from dir/status-faults.json, if
// there is one.
func Load(dir string) (Named, error) {
	raw, err := os.ReadFile(filepath.Join(dir, results.KeySummary))
	if err != nil {
		return Named{}, fmt.Errorf("%s: %w (a results directory holds %s from `streambench run --local` or the coordinator's --output-dir)", dir, err, results.KeySummary)
	}
	var s results.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		return Named{}, fmt.Errorf("%s: %w", filepath.Join(dir, results.KeySummary), err)
	}
	if len(s.Faults) == 0 {
		raw, err := os.ReadFile(filepath.Join(dir, StatusFaultsFile))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return Named{}, err
		default:
			if err := json.Unmarshal(raw, &s.Faults); err != nil {
				return Named{}, fmt.Errorf("%s: %w", filepath.Join(dir, StatusFaultsFile), err)
			}
		}
	}
	n := Named{Name: s.Run, Summary: &s}
	if n.Name == "" {
		n.Name = filepath.Base(filepath.Clean(dir))
	}
	raw, err = os.ReadFile(filepath.Join(dir, results.KeyOMB))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return Named{}, err
	default:
		var o results.OMBResult
		if err := json.Unmarshal(raw, &o); err != nil {
			return Named{}, fmt.Errorf("%s: %w", filepath.Join(dir, results.KeyOMB), err)
		}
		n.OMB = &o
	}
	return n, nil
}

// RenderDir reads the results in dir, writes dir/report.html and returns
// its path.
func RenderDir(dir string) (string, error) {
	return RenderDirWith(dir, Options{})
}
