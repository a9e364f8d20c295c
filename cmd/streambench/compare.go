package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/streambench/streambench-operator/internal/report"
	"github.com/streambench/streambench-operator/internal/results"
)

func init() { rootCmd.AddCommand(newCompareCmd()) }

func newCompareCmd() *cobra.Command {
	var cf clusterFlags
	var html string
	var strict, failOnDifference bool
	fair := report.DefaultFairness
	cmd := &cobra.Command{
		Use:   "compare <results dir | run name>...",
		Short: "Compare runs: latency tables as the durability study's (docs/methodology.md), and overlaid latency curves",
		Long: `compare prints, for each run in the order given, Average, P50, P90, P99 and
P999 of publish and end-to-end latency (ms) of the measured phase, and the
throughput, as the tables of the Pulsar/Kafka durability benchmark; and writes
an HTML page with the same tables and the runs' latency curves overlaid.

Each argument is a results directory or the name of a BenchmarkRun in the
cluster (-n, --kubeconfig). The differences that make runs unlike (workload,
a durability level not achieved, lost messages) are printed as warnings.

Every pair of runs whose comparison is unfair is flagged, in the table and
the HTML: a different achieved durability, topology (broker or bookie count,
version), testbed (slowest write+fdatasync p99 or write MB/s further apart
than --testbed-tolerance), workload, or a load generator that fell behind
(send delay p99 above --max-send-delay-ms), or a different fault schedule
(spec.faults: a fault one run had and the other not, another action,
target or time, or a fault not injected in one). --strict exits non-zero
on any flag.

Runs with faults get a Faults table: for each fault, each run's time of
injection, dip, time to recover, worst p99 and the messages lost in the
fault's intervals (the run's total, marked "(whole run)", where the
losses were not placed in time).

Runs repeated (streambench run --local --repeats N) are compared figure by
figure, each run against the first: a verdict says whether B differs from A
beyond the runs' own spread ("B's publish p99 (ms) is 23 % lower, better
(95 % CI 14–31 % lower ...)") or not, from the exact Mann-Whitney test on
the repeats' figures (docs/methodology.md, "Repeats and differences"). Runs
that were not repeated are said to be unable to tell. --fail-on-difference
exits non-zero when any figure differs, or when the runs were not repeated
(a pipeline gate that cannot tell must not pass).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			runs, err := loadRuns(cmd.Context(), cf, args)
			if err != nil {
				return err
			}
			t, err := report.CompareWith(runs, fair)
			if err != nil {
				return err
			}
			if err := t.WriteText(cmd.OutOrStdout()); err != nil {
				return err
			}
			unfair := func() error {
				if strict && len(t.Flags) > 0 {
					return fmt.Errorf("--strict: %d unfair comparison flags (listed above)", len(t.Flags))
				}
				if failOnDifference {
					return differs(t)
				}
				return nil
			}
			if html == "" {
				return unfair()
			}
			f, err := os.Create(html)
			if err != nil {
				return err
			}
			if err := report.RenderCompareWith(f, runs, fair); err != nil {
				_ = f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "\nwrote %s\n", html)
			return unfair()
		},
	}
	cf.add(cmd)
	cmd.Flags().StringVar(&html, "html", "compare.html", `write the HTML comparison to this file ("" to skip)`)
	cmd.Flags().BoolVar(&strict, "strict", false, "exit non-zero when any pair of runs is flagged as an unfair comparison")
	cmd.Flags().BoolVar(&failOnDifference, "fail-on-difference", false, "exit non-zero when a run differs from the first beyond the runs' own spread in any figure, or when the runs were not repeated and so cannot tell")
	cmd.Flags().Float64Var(&fair.TestbedTolerance, "testbed-tolerance", report.DefaultFairness.TestbedTolerance, "how far apart two runs' slowest write MB/s may be, relative to the lower (0.25 = 25 %), unless a disk varied more over its own probe")
	cmd.Flags().Float64Var(&fair.FsyncTolerance, "fsync-tolerance", report.DefaultFairness.FsyncTolerance, "how far apart two runs' slowest fsync p50 may be, relative to the lower (1 = 2x: one disk's median drifts up to 1.8x between probes on a shared VM), unless a disk varied more over its own probe")
	cmd.Flags().Float64Var(&fair.MaxSendDelayP99Ms, "max-send-delay-ms", report.DefaultFairness.MaxSendDelayP99Ms, "send delay p99 (ms) above which the load generator fell behind")
	return cmd
}

// differs is --fail-on-difference's verdict over every pair.
func differs(t report.Table) error {
	if len(t.Differences) == 0 {
		return errors.New("--fail-on-difference: give at least two runs to compare")
	}
	var cannot []string
	for _, d := range t.Differences {
		if d.CannotTell != "" {
			cannot = append(cannot, d.B+" against "+d.A)
		}
	}
	if n := t.DifferentFigures(); n > 0 {
		return fmt.Errorf("--fail-on-difference: %d figure(s) differ beyond the runs' own spread (listed above)", n)
	}
	if len(cannot) > 0 {
		return fmt.Errorf("--fail-on-difference: cannot tell %s: a run that was not repeated has no spread to tell a difference from; repeat each run (--repeats)", strings.Join(cannot, ", "))
	}
	return nil
}

// loadRuns reads each argument as a results directory or a BenchmarkRun's
// results ConfigMap. Two directories of runs with the same name (two local
// runs both called "local") are told apart by their paths.
func loadRuns(ctx context.Context, cf clusterFlags, args []string) ([]report.Named, error) {
	var runs []report.Named
	seen := map[string]bool{}
	for _, arg := range args {
		var n report.Named
		if isDir(arg) {
			var err error
			if n, err = report.Load(arg); err != nil {
				return nil, err
			}
			if seen[n.Name] {
				n.Name = arg
			}
		} else {
			if err := checkRunName(arg); err != nil {
				return nil, err
			}
			var err error
			if n, err = loadClusterRun(ctx, cf, arg); err != nil {
				return nil, err
			}
		}
		seen[n.Name] = true
		runs = append(runs, n)
	}
	return runs, nil
}

func loadClusterRun(ctx context.Context, cf clusterFlags, run string) (report.Named, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	c, ns, err := cf.client()
	if err != nil {
		return report.Named{}, err
	}
	cm, faults, err := fetchResults(ctx, c, ns, run)
	if err != nil {
		return report.Named{}, err
	}
	s, err := results.Read(cm)
	if err != nil {
		return report.Named{}, err
	}
	// A cluster run's faults are in its status (report.StatusFaultsFile).
	if len(s.Faults) == 0 {
		s.Faults = faults
	}
	n := report.Named{Name: run, Summary: s}
	if _, ok := cm.Data[results.KeyOMB]; ok {
		if n.OMB, err = results.ReadOMB(cm); err != nil {
			return report.Named{}, err
		}
	}
	return n, nil
}
