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
	cmd := &cobra.Command{
		Use:   "compare <results dir | run name>...",
		Short: "Compare runs: latency tables as the durability seed's, and overlaid latency curves",
		Long: `compare prints, for each run in the order given, Average, P50, P90, P99 and
P999 of publish and end-to-end latency (ms) of the measured phase, and the
throughput, as the tables of the Pulsar/Kafka durability benchmark; and writes
an HTML page with the same tables and the runs' latency curves overlaid.

Each argument is a results directory or the name of a BenchmarkRun in the
cluster (-n, --kubeconfig). The differences that make runs unlike (workload,
a durability level not achieved, lost messages) are printed as warnings.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			runs, err := loadRuns(cmd.Context(), cf, args)
			if err != nil {
				return err
			}
			t, err := report.Compare(runs)
			if err != nil {
				return err
			}
			if err := t.WriteText(cmd.OutOrStdout()); err != nil {
				return err
			}
			if html == "" {
				return nil
			}
			f, err := os.Create(html)
			if err != nil {
				return err
			}
			if err := report.RenderCompare(f, runs); err != nil {
				_ = f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "\nwrote %s\n", html)
			return nil
		},
	}
	cf.add(cmd)
	cmd.Flags().StringVar(&html, "html", "compare.html", `write the HTML comparison to this file ("" to skip)`)
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
