package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/streambench/streambench-operator/internal/localrun"
)

func init() { rootCmd.AddCommand(newSuiteCmd()) }

func newSuiteCmd() *cobra.Command {
	var (
		o     localrun.SuiteOptions
		local bool
		arch  archiveFlags
	)
	cmd := &cobra.Command{
		Use:   "suite -f FILE --local",
		Short: "Run a BenchmarkSuite on this machine: each system's brokers started once per broker setting, cells one at a time",
		Long: `suite reads a BenchmarkSuite file (the same YAML kubectl apply takes) and runs
it as the operator does: the same plan of clusters and cells, each managed
system started as local brokers once per broker setting its cells need (one
Kafka for every level; one Pulsar per journal configuration), every cell a
local run in existing mode against them, one at a time. It writes each cell's
results to <results-dir>/<suite>/<cell>/ and the suite's tables to
<results-dir>/<suite>/tables.txt and suite.json, and prints the tables.

A repeated suite (spec.repeats > 1) on more than one cluster starts all its
clusters first and alternates the repeats across them: round 1 runs every
cell, round 2 every cell in reverse, and so on (A B C, C B A, A B C), so that
a drift of this machine over the suite weighs on every system alike instead
of reading as a difference between them. The cost: an idle cluster stands
beside the one measured. --clusters-one-at-a-time keeps one cluster at a
time (as the operator does), the repeats then alternating within each
cluster only.`,
		Example: `  streambench suite -f config/samples/suite-durability-matrix-local.yaml --local
  streambench suite -f config/samples/suite-quickstart-repeated-local.yaml --local
  streambench report results/matrix-local`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.SuiteFile == "" {
				return errors.New("-f FILE is required: the BenchmarkSuite to run (e.g. -f config/samples/suite-durability-matrix-local.yaml)")
			}
			if !local {
				return fmt.Errorf("only --local is supported by suite; on a cluster use kubectl apply -f %s", o.SuiteFile)
			}
			if arch.to != "" {
				if _, err := arch.open(cmd.Context()); err != nil {
					return fmt.Errorf("--archive: %w", err)
				}
			}
			o.Stdout, o.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			out, err := localrun.RunSuite(cmd.Context(), o)
			if arch.to != "" && out != nil && out.Suite != nil && len(out.Summaries) > 0 {
				// The suite's directory as one archived unit: history
				// finds each cell's summary.json in it.
				var start time.Time
				for _, s := range out.Summaries {
					if start.IsZero() || s.Start.Before(start) {
						start = s.Start
					}
				}
				where, n, aerr := arch.archiveDir(cmd.Context(), out.Suite.Name, start, out.Dir)
				if aerr != nil {
					return errors.Join(err, aerr)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "archived %d files to %s\n", n, where)
			}
			return err
		},
	}
	fl := cmd.Flags()
	arch.add(cmd, "archive", "archive-", "also copy the suite's results (every cell's) into this archive (s3://bucket/prefix or a directory) at runs/local/<suite>/<start>/, for streambench history (docs/archive.md)")
	fl.StringVarP(&o.SuiteFile, "file", "f", "", "BenchmarkSuite YAML file")
	fl.BoolVar(&local, "local", false, "run on this machine (brokers as local JVM processes)")
	fl.StringVar(&o.ResultsDir, "results-dir", "results", "results go to <results-dir>/<suite-name>/")
	fl.StringVar(&o.PriceModelFile, "price-model", "", "price model file (YAML, docs/cost.md) that prices every cell instead of spec.cost's or the default list prices")
	fl.StringVar(&o.SecretsFile, "secrets", "", "Secret manifests (v1 Secrets, as kubectl apply takes them) that a secured existing cluster's spec.systems[].cluster.existing.tls and authentication name; every cell's keys are written to a private directory for that cell only")
	fl.StringVar(&o.DataDir, "data-dir", "", "keep the brokers' data and logs here, a directory per cluster (default: temporary, removed at the end)")
	fl.BoolVar(&o.ClustersOneAtATime, "clusters-one-at-a-time", false, "with spec.repeats > 1 on several clusters, still stand one cluster at a time (for a machine short of memory); the repeats then alternate within each cluster only, not across systems")
	return cmd
}
