package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/report"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/suite"
)

func init() { rootCmd.AddCommand(newReportCmd()) }

// clusterFlags reach the cluster that holds BenchmarkRuns named on the
// command line.
type clusterFlags struct {
	kubeconfig, namespace string
}

func (f *clusterFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "", "namespace of the BenchmarkRuns (default: the kubeconfig context's)")
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
}

func newReportCmd() *cobra.Command {
	var cf clusterFlags
	var out, hist string
	cmd := &cobra.Command{
		Use:   "report <results dir | run name | suite name>",
		Short: "Render a run's results as a self-contained HTML report",
		Long: `report renders the results of one run as report.html: latency percentile
curves, throughput and p99 over time, the backlog drain, and tables of the
latency, message counts, durability settings, workload and clock offsets.

The argument is a results directory (summary.json, omb-result.json, as
written by 'streambench run --local' or the coordinator's --output-dir): the
report is written into it. Otherwise it is the name of a BenchmarkRun: its
results ConfigMap is read from the cluster, and the JSON files and the
report are written to results/<run>/ (or --output).

A BenchmarkSuite's results (a directory with suite.json, as 'streambench
suite --local' writes it, or a suite's name, whose <suite>-results ConfigMap
is read) render as one page: every cell's headline figures, then one table
per workload and achieved durability level, Kafka beside Pulsar, with the
unfair-comparison flags of 'compare' and the charts beside each table.

--history <results dir> adds how the run stands against the other runs of
its configuration in that archive (as 'streambench history' reads it): a
card "Against its series" with each figure against the series' last
segment.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			arg := args[0]
			if isDir(arg) && isFile(filepath.Join(arg, report.SuiteFile)) {
				if hist != "" {
					return fmt.Errorf("--history: %s is a suite's results; give one run's directory (a suite's cells are each a run)", arg)
				}
				path, err := report.RenderSuiteDir(arg)
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), path)
				return nil
			}
			if isDir(arg) {
				path, err := renderRun(arg, hist)
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), path)
				return nil
			}
			if err := checkRunName(arg); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			c, ns, err := cf.client()
			if err != nil {
				return err
			}
			dir := out
			if dir == "" {
				dir = filepath.Join("results", arg)
			}
			if path, ok, err := reportSuite(ctx, c, ns, arg, dir); ok || err != nil {
				if err == nil {
					fmt.Fprintln(cmd.OutOrStdout(), path)
				}
				return err
			}
			cm, faults, err := fetchResults(ctx, c, ns, arg)
			if err != nil {
				return err
			}
			if err := writeConfigMapFiles(cm, dir, faults); err != nil {
				return err
			}
			path, err := renderRun(dir, hist)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), path)
			return nil
		},
	}
	cf.add(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "directory for a cluster run's files (default results/<run>)")
	cmd.Flags().StringVar(&hist, "history", "", "a results directory of earlier runs ('streambench history' reads it): add how the run stands against its series")
	return cmd
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// reportSuite renders the BenchmarkSuite called name from its results
// ConfigMap, if there is such a suite (ok false otherwise: name is a run).
func reportSuite(ctx context.Context, c client.Reader, ns, name, dir string) (path string, ok bool, err error) {
	var s v1alpha1.BenchmarkSuite
	err = c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &s)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return "", false, nil
	case err != nil:
		return "", true, fmt.Errorf("get BenchmarkSuite %s/%s: %w", ns, name, err)
	}
	var cm corev1.ConfigMap
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: suite.ConfigMapName(name)}, &cm); err != nil {
		if apierrors.IsNotFound(err) {
			return "", true, fmt.Errorf("BenchmarkSuite %s/%s has no results ConfigMap %s yet (phase %q, progress %s); it is written when the first cell ends", ns, name, suite.ConfigMapName(name), s.Status.Phase, s.Status.Progress)
		}
		return "", true, err
	}
	if err := suite.WriteFiles(&cm, dir); err != nil {
		return "", true, err
	}
	path, err = report.RenderSuiteDir(dir)
	return path, true, err
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// checkRunName tells a mistyped directory from a run name: a Kubernetes name
// has no slashes.
func checkRunName(arg string) error {
	if strings.ContainsAny(arg, `/\`) || arg == "." || arg == ".." {
		return fmt.Errorf("%s: no such results directory (give a directory with summary.json, or the name of a BenchmarkRun)", arg)
	}
	return nil
}

func (f clusterFlags) client() (client.Client, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if f.kubeconfig != "" {
		rules.ExplicitPath = f.kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("no cluster to read BenchmarkRuns from (--kubeconfig, $KUBECONFIG or ~/.kube/config): %w", err)
	}
	ns := f.namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil {
			return nil, "", fmt.Errorf("--namespace: %w", err)
		}
	}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, "", err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, "", err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, "", err
	}
	return c, ns, nil
}

// fetchResults reads the results ConfigMap of a run: the one its status
// names, or <run>-results when the BenchmarkRun is gone (the ConfigMap may
// outlive it only briefly, as it is owned by the run). faults are the
// run's status.faults: the controller injects a cluster run's faults and
// records them there, not in the coordinator's summary.json.
func fetchResults(ctx context.Context, c client.Reader, ns, run string) (cm *corev1.ConfigMap, faults []v1alpha1.FaultStatus, err error) {
	name := results.ConfigMapName(run)
	var br v1alpha1.BenchmarkRun
	err = c.Get(ctx, types.NamespacedName{Namespace: ns, Name: run}, &br)
	switch {
	case err == nil && br.Status.ResultsRef != "":
		name = br.Status.ResultsRef
	case err == nil:
		return nil, nil, fmt.Errorf("BenchmarkRun %s/%s has no results yet (phase %q%s); wait until it is Succeeded", ns, run, br.Status.Phase, message(br.Status.Message))
	case !apierrors.IsNotFound(err):
		return nil, nil, fmt.Errorf("get BenchmarkRun %s/%s: %w", ns, run, err)
	}
	cm = &corev1.ConfigMap{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, fmt.Errorf("no BenchmarkRun %s and no results ConfigMap %s in namespace %s; check the name and -n", run, name, ns)
		}
		return nil, nil, fmt.Errorf("get results ConfigMap %s/%s: %w", ns, name, err)
	}
	return cm, br.Status.Faults, nil
}

func message(m string) string {
	if m == "" {
		return ""
	}
	return ": " + m
}

// writeConfigMapFiles writes a results ConfigMap as the files of a local
// run: summary.json, omb-result.json and the histogram logs; a repeated
// run's repeat-<i>.<key> as <key> in repeat-<i>/, each repeat with its
// own HTML report, as local mode lays a repeated run out. The run's
// status.faults, when it has any, go beside them as status-faults.json
// (report.StatusFaultsFile), each repeat's in its directory, so the
// reports show them however often they are rendered again.
func writeConfigMapFiles(cm *corev1.ConfigMap, dir string, faults []v1alpha1.FaultStatus) error {
	if _, err := results.Read(cm); err != nil {
		return err
	}
	files, err := report.ConfigMapFiles(cm.Data, cm.BinaryData, faults)
	if err != nil {
		return err
	}
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
