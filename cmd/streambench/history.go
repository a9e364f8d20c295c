package main

import (
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/streambench/streambench-operator/internal/changepoint"
	"github.com/streambench/streambench-operator/internal/history"
	"github.com/streambench/streambench-operator/internal/report"
	"github.com/streambench/streambench-operator/internal/results"
)

func init() { rootCmd.AddCommand(newHistoryCmd()) }

func newHistoryCmd() *cobra.Command {
	var failOnRegression bool
	var minChange, pValue float64
	cmd := &cobra.Command{
		Use:   "history <results dir>",
		Short: "Group archived runs into series of one configuration and find where their figures changed",
		Long: `history reads every run's summary.json under a directory (each run's
results directory, as run --local writes them under results/; a repeated
run counts as its median, its repeats' own directories are passed over),
groups the runs into series of one configuration (system and version,
durability achieved, topology and envelopes, workload, client security,
testbed class: a changed setting starts another series), and prints, for
each series and figure (publish MB/s; publish p50, p99, p99.9; corrected
p99; end-to-end p50, p99, p99.9; broker CPU per 1000 msg/s), its newest
value and the runs where it changed: E-divisive means with a t-test
corrected for the splits searched (internal/changepoint), the change with
its 95 % interval and p-value.

--fail-on-regression exits non-zero when a figure's last change point made
it worse by at least --min-change (relative to the segment before): the
newest runs are in a worse segment.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			runs, err := archivedRuns(args[0])
			if err != nil {
				return err
			}
			if len(runs) == 0 {
				return fmt.Errorf("%s holds no run's %s", args[0], results.KeySummary)
			}
			series := history.Analyze(history.Group(runs), changepoint.Options{PValue: pValue})
			writeHistory(cmd.OutOrStdout(), series)
			regs := history.Regressions(series, minChange)
			if failOnRegression && len(regs) > 0 {
				var b strings.Builder
				for _, r := range regs {
					b.WriteString("\n  " + r.String())
				}
				return fmt.Errorf("--fail-on-regression: %d figures regressed by %.0f %% or more:%s", len(regs), minChange*100, b.String())
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&failOnRegression, "fail-on-regression", false, "exit non-zero when the newest runs of a series start a worse segment of a figure")
	fl.Float64Var(&minChange, "min-change", 0.05, "the smallest relative change --fail-on-regression fails on (0.05 = 5 %)")
	fl.Float64Var(&pValue, "p-value", 0.01, "the significance threshold of a change point, over the splits its segment could have had")
	return cmd
}

// archivedRuns reads every summary.json under dir but those of a repeated
// run's repeats (results.RepeatDir).
func archivedRuns(dir string) ([]history.Run, error) {
	var runs []history.Run
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != dir && strings.HasPrefix(d.Name(), "repeat-") {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != results.KeySummary {
			return nil
		}
		n, err := report.Load(filepath.Dir(path))
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(path))
		runs = append(runs, history.Run{Name: n.Name, Dir: rel, Start: n.Summary.Start, Summary: n.Summary})
		return nil
	})
	return runs, err
}

// writeHistory prints each series: its configuration, its runs, and each
// figure's newest value and change points.
func writeHistory(w io.Writer, series []history.Series) {
	for _, s := range series {
		c := s.Config
		head := []string{strings.TrimSpace(string(c.System) + " " + c.BrokerVersion), fmt.Sprintf("level %d", c.Level)}
		if c.Brokers > 0 {
			head = append(head, fmt.Sprintf("%d brokers", c.Brokers))
		}
		if c.Bookies > 0 {
			head = append(head, fmt.Sprintf("%d bookies", c.Bookies))
		}
		head = append(head, fmt.Sprintf("%d B messages at %d msg/s", c.Workload.MessageSize, c.Workload.ProducerRate))
		if c.Testbed != "" {
			head = append(head, c.Testbed)
		}
		fmt.Fprintf(w, "series %s: %s", s.Key, strings.Join(head, ", "))
		first, last := s.Runs[0], s.Runs[len(s.Runs)-1]
		fmt.Fprintf(w, "\n  %d runs, %s (%s) to %s (%s)\n", len(s.Runs), first.Name, first.Start.UTC().Format("2006-01-02 15:04"), last.Name, last.Start.UTC().Format("2006-01-02 15:04"))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  figure\tnewest\tchange points")
		for _, t := range s.Tracks {
			if len(t.Values) == 0 {
				continue
			}
			var cps []string
			for _, ch := range t.Changes {
				verdict := "better"
				if ch.Worse {
					verdict = "WORSE"
				}
				cps = append(cps, fmt.Sprintf("run %d (%s): %+.1f %% (%.4g → %.4g, 95 %% interval %.3g..%.3g, p %.2g), %s",
					ch.Run+1, s.Runs[ch.Run].Name, ch.Relative*100, ch.Before, ch.After, ch.Low, ch.High, ch.PValue, verdict))
			}
			text := "none"
			if len(t.Values) < 6 {
				text = fmt.Sprintf("none: %d runs, a change needs 3 on each side", len(t.Values))
			}
			if len(cps) > 0 {
				text = strings.Join(cps, "; ")
			}
			fmt.Fprintf(tw, "  %s (%s)\t%.4g\t%s\n", t.Figure.Name, t.Figure.Unit, t.Values[len(t.Values)-1], text)
		}
		_ = tw.Flush()
		fmt.Fprintln(w)
	}
}
