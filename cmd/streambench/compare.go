package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/streambench/streambench-operator/internal/report"
	"github.com/streambench/streambench-operator/internal/results"
)

func init() { rootCmd.AddCommand(newCompareCmd()) }

func newCompareCmd() *cobra.Command {
	var cf clusterFlags
	var html string
	var strict bool
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
(send delay p99 above --max-send-delay-ms). --strict exits non-zero on any
flag.`,
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
	cmd.Flags().Float64Var(&fair.TestbedTolerance, "testbed-tolerance", report.DefaultFairness.TestbedTolerance, "how far apart two runs' slowest write MB/s may be, relative to the lower (0.25 = 25 %), unless a disk varied more over its own probe")
	cmd.Flags().Float64Var(&fair.FsyncTolerance, "fsync-tolerance", report.DefaultFairness.FsyncTolerance, "how far apart two runs' slowest fsync p50 may be, relative to the lower (1 = 2x: one disk's median drifts up to 1.8x between probes on a shared VM), unless a disk varied more over its own probe")
	cmd.Flags().Float64Var(&fair.MaxSendDelayP99Ms, "max-send-delay-ms", report.DefaultFairness.MaxSendDelayP99Ms, "send delay p99 (ms) above which the load generator fell behind")
	return cmd
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
	cm, err := fetchResults(ctx, c, ns, run)
	if err != nil {
		return report.Named{}, err
	}
	s, err := results.Read(cm)
	if err != nil {
		return report.Named{}, err
	}
	n := report.Named{Name: run, Summary: s}
	if _, ok := cm.Data[results.KeyOMB]; ok {
		if n.OMB, err = results.ReadOMB(cm); err != nil {
			return report.Named{}, err
		}
	}
	return n, nil
}
