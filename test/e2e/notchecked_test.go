//go:build e2e

package e2e

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
)

// notCheckedEntry names the report entries of checks a cluster cannot run.
const notCheckedEntry = "not checked"

// notChecked says that a check cannot run on this cluster, and why: in the
// spec's output and in its report, whose entries the suite counts at its
// end (ReportAfterSuite below), so a green run on a cluster that checks
// less (kind: its pods are not reachable from the runner, it has a default
// StorageClass) says what it left out instead of passing silently.
func notChecked(what, why string) {
	logf("NOT CHECKED on this cluster: %s (%s)", what, why)
	AddReportEntry(notCheckedEntry, what+" ("+why+")")
}

// The summary line: every check the specs that ran could not make here,
// across all parallel processes (process 1 reports for the suite).
var _ = ReportAfterSuite("checks this cluster could not run", func(r Report) {
	var lines []string
	for _, s := range r.SpecReports {
		for _, e := range s.ReportEntries {
			if e.Name == notCheckedEntry {
				lines = append(lines, fmt.Sprintf("  - %s: %s", s.FullText(), e.Value.String()))
			}
		}
	}
	fmt.Printf("e2e: %d checks not run on this cluster\n", len(lines))
	if len(lines) > 0 {
		fmt.Println(strings.Join(lines, "\n"))
	}
})
