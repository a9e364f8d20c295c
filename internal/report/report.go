// Package report renders a run's results (summary.json and, when present,
// omb-result.json; see docs/results.md) as one self-contained HTML page, and
// compares runs in the layout of the durability study's (docs/methodology.md) latency tables
// (rows per run; Average, P50, P90, P99, P999). Charts are inline SVG drawn
// by gonum.org/v1/plot: the page loads nothing when viewed, so it can be
// mailed, attached to an issue or opened from a ConfigMap dump.
package report

import (
	"io"

	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

// phaseCooldown is the coordinator's phase after the load stopped
// (coordinator.PhaseCooldown; not imported, to keep the coordinator's
// dependencies out of the report).
const phaseCooldown stats.Phase = "cooldown"

// FileName is the report RenderDir writes into a results directory.
const FileName = "report.html"

// Render writes the HTML report of one run; omb may be nil.
func Render(w io.Writer, s *results.Summary, omb *results.OMBResult) error {
	return RenderWith(w, s, omb, Options{})
}
