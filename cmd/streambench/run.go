package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/streambench/streambench-operator/internal/localrun"
)

func init() { rootCmd.AddCommand(newRunCmd()) }

// maxRepeats bounds --repeats: beyond it a comparison's figures are tight
// enough that the machine's drift over the hours it takes matters more.
const maxRepeats = 50

func newRunCmd() *cobra.Command {
	var (
		o         localrun.Options
		local     bool
		brokerJVM string
		arch      archiveFlags
		cf        clusterFlags
		wait      time.Duration
	)
	cmd := &cobra.Command{
		Use:   "run -f FILE [--local]",
		Short: "Run a BenchmarkRun on this machine (--local: local brokers, workers and coordinator), or create it in the cluster and wait for it",
		Long: `run reads a BenchmarkRun file (the same YAML kubectl apply takes), starts the
brokers it asks for as local JVM processes (jars fetched from Maven Central on
first use; needs Java 17+ and Maven), runs the workers and the coordinator in
this process, prints progress every 10 s (2 s in a run with faults, whose
recovery is read over three intervals) and a summary table at the end, and
writes summary.json, omb-result.json and report.html into
<results-dir>/<run-name>/.

An existing cluster's TLS and authentication (spec.cluster.existing.tls and
authentication) name Secrets: give their manifests with --secrets FILE; the
keys the run names are written to a private directory removed at the end. An
OMB driver file's security keys (security.protocol, sasl.*, ssl.*, Pulsar's
TLS and authentication) are mapped with the stores and files they name.

--repeats N (default: the file's spec.repeats, else 1) runs the load N
times on the same brokers, fresh topics each time, each repeat's results in <run-name>/repeat-<i>/; the run's summary.json
then holds each figure's median over the repeats with its interval, which
streambench compare tests for differences between runs.

Ctrl-C stops the run and the brokers; a second Ctrl-C kills the brokers at once.

Without --local, run creates the BenchmarkRun in the cluster (its name, if
it has one, becomes a generateName prefix: each call makes a new run), waits
until it finished and its results were archived (spec.results.archive or
the operator's default), and exits non-zero unless it Succeeded: what a
nightly CronJob runs before its regression gate (docs/archive.md).`,
		Example: `  streambench run -f config/samples/run-ack2-async.yaml --local \
    --workload workloads/latency-1-topic-16-partitions-1kb-local.yaml

  # OMB's own files, run from OMB's repository root (workloads/ beside payload/):
  streambench run -f run.yaml --local --driver driver-kafka/kafka-latency.yaml \
    --workload workloads/1-topic-16-partitions-1kb.yaml

  # An existing SASL_SSL cluster: the Secrets the run names, as kubectl apply takes them:
  kubectl create secret generic kafka-ca --from-file=ca.crt --dry-run=client -o yaml > secrets.yaml
  echo --- >> secrets.yaml
  kubectl create secret generic alice --from-file=password=alice.txt --dry-run=client -o yaml >> secrets.yaml
  streambench run -f run-sasl.yaml --local --secrets secrets.yaml

  # Five repeats each, then whether they differ beyond their own spread:
  streambench run -f kafka.yaml --local --repeats 5
  streambench run -f pulsar.yaml --local --repeats 5
  streambench compare results/kafka results/pulsar`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.RunFile == "" {
				return errors.New("-f FILE is required: the BenchmarkRun to run (e.g. -f config/samples/run-ack2-async.yaml)")
			}
			if !local {
				if arch.to != "" {
					return errors.New("--archive is for --local runs; in a cluster, spec.results.archive says where the results go")
				}
				return submitRun(cmd.Context(), cmd.OutOrStdout(), cf, o.RunFile, wait)
			}
			if o.Repeats < 0 || o.Repeats > maxRepeats {
				return fmt.Errorf("--repeats %d: give 1 (once) to %d; 6 or more bound each figure's median at 95 %%", o.Repeats, maxRepeats)
			}
			if brokerJVM != "" {
				o.BrokerJVM = strings.Fields(brokerJVM)
			}
			if arch.to != "" {
				// Refused before the run, not after it.
				if _, err := arch.open(cmd.Context()); err != nil {
					return fmt.Errorf("--archive: %w", err)
				}
			}
			o.Stdout, o.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			out, err := localrun.Run(cmd.Context(), o)
			if arch.to != "" && out != nil && out.Summary != nil && out.Dir != "" {
				// A failed run's results are archived too: what it
				// measured before it failed, marked partial.
				where, n, aerr := arch.archiveDir(cmd.Context(), out.Run.Name, out.Summary.Start, out.Dir)
				if aerr != nil {
					return errors.Join(err, aerr)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "archived %d files to %s\n", n, where)
			}
			return err
		},
	}
	fl := cmd.Flags()
	cf.add(cmd)
	fl.DurationVar(&wait, "timeout", 2*time.Hour, "without --local: how long to wait for the run to finish")
	arch.add(cmd, "archive", "archive-", "also copy the results into this archive (s3://bucket/prefix or a directory) at runs/local/<run>/<start>/, for streambench history (docs/archive.md)")
	fl.StringVarP(&o.RunFile, "file", "f", "", "BenchmarkRun YAML file")
	fl.BoolVar(&local, "local", false, "run on this machine (brokers as local JVM processes)")
	fl.StringVar(&o.WorkloadFile, "workload", "", "OMB workload YAML file that replaces spec.workload")
	fl.StringVar(&o.PriceModelFile, "price-model", "", "price model file (YAML, docs/cost.md) that prices the results instead of spec.cost's or the default list prices")
	fl.StringVar(&o.DriverFile, "driver", "", "OMB driver YAML file (driver-kafka/kafka*.yaml, driver-pulsar/pulsar*.yaml) mapped onto spec.driver; its durability keys must match spec.durability; its security keys (security.protocol, sasl.*, ssl.*, Pulsar's TLS and auth) are mapped with the files they name")
	fl.StringVar(&o.SecretsFile, "secrets", "", "Secret manifests (v1 Secrets with data or stringData, as kubectl apply takes them) that spec.cluster.existing.tls and authentication name; their keys are written to a private directory for the run only")
	fl.StringVar(&o.ResultsDir, "results-dir", "results", "results go to <results-dir>/<run-name>/")
	fl.StringVar(&o.DataDir, "data-dir", "", "keep the brokers' data and logs here (default: a temporary directory, removed at the end)")
	fl.IntVar(&o.Repeats, "repeats", 0, "run the load this many times on the same brokers (fresh topics each), for the median of each figure with its interval and compare's test of differences (default: the file's spec.repeats, else once)")
	fl.StringVar(&brokerJVM, "broker-jvm", "", "the local brokers' heap, collector and compiler options, replacing streambench's small defaults (e.g. \"-Xms1g -Xmx1g -XX:+UseG1GC\"); the results state them either way")
	return cmd
}
