package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/streambench/streambench-operator/internal/testbed"
)

func init() {
	rootCmd.AddCommand(newProbeCmd())
	rootCmd.AddCommand(&cobra.Command{
		Use:   "drop-page-cache",
		Short: "Drop the node's page cache (needs a privileged container)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := testbed.DropPageCache(); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "page cache dropped")
			return nil
		},
	})
}

func newProbeCmd() *cobra.Command {
	var (
		volumes         []string
		node, termLog   string
		o               testbed.Options
		writeMB         int64
		perTestDuration time.Duration
	)
	cmd := &cobra.Command{
		Use:   "probe --volume NAME=DIR...",
		Short: "Measure a node's disks: sequential write MB/s and write+fdatasync latency",
		Long: `probe measures each directory given: bounded sequential writes (1 MiB
blocks ended by an fdatasync, like dd conv=fdatasync) and small synchronous
appends (write + fdatasync, as a journal does) with HDR percentiles; and the
node's CPU model and count, memory and kernel. It writes only a temporary
subdirectory it removes again, and needs no privileges.

The result is one JSON object on stdout (and in --termination-log, which the
operator reads from the probe pod's status).`,
		Example: `  streambench probe --volume data=/var/lib/kafka
  streambench probe --volume journal=/mnt/journal --volume ledgers=/mnt/ledgers --write-mb 128`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(volumes) == 0 {
				return fmt.Errorf("--volume: give at least one NAME=DIR to probe, e.g. --volume data=/var/lib/kafka")
			}
			o.WriteBytes = writeMB << 20
			o.WriteTime, o.AppendTime = perTestDuration, perTestDuration
			if node == "" {
				node, _ = os.Hostname()
			}
			out := testbed.Host(node)
			for _, v := range volumes {
				name, dir, ok := strings.Cut(v, "=")
				if !ok || name == "" || dir == "" {
					return fmt.Errorf("--volume %q: want NAME=DIR, e.g. data=/var/lib/kafka", v)
				}
				p, err := testbed.Probe(dir, name, o)
				if err != nil {
					out.Error = fmt.Sprintf("volume %s: %v", name, err)
					break
				}
				out.Volumes = append(out.Volumes, p)
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: write %.1f MB/s; write+fdatasync of %d B: p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, max %.3f ms (%d appends)\n",
					name, p.WriteMBPerSec, p.FsyncLatencyMs.AppendBytes, p.FsyncLatencyMs.P50, p.FsyncLatencyMs.P99, p.FsyncLatencyMs.P999, p.FsyncLatencyMs.Max, p.FsyncLatencyMs.Count)
			}
			b, err := json.Marshal(out)
			if err != nil {
				return err
			}
			if termLog != "" {
				if err := os.WriteFile(termLog, b, 0o644); err != nil {
					return fmt.Errorf("--termination-log: %w", err)
				}
			}
			fmt.Fprintln(cmd.OutOrStdout(), string(b))
			if out.Error != "" {
				return fmt.Errorf("%s", out.Error)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&volumes, "volume", nil, "NAME=DIR: a directory to probe and its role (data, journal, ledgers); repeatable")
	cmd.Flags().StringVar(&node, "node", "", "node name to report (default: the host name)")
	cmd.Flags().StringVar(&termLog, "termination-log", "", "also write the JSON result to this file (a pod's terminationMessagePath)")
	cmd.Flags().Int64Var(&writeMB, "write-mb", 256, "bound of the sequential write test, in MiB")
	cmd.Flags().IntVar(&o.Appends, "appends", 2000, "bound of the append test, in appends")
	cmd.Flags().IntVar(&o.AppendBytes, "append-bytes", 4096, "size of each append")
	cmd.Flags().DurationVar(&perTestDuration, "max-time", 20*time.Second, "time bound of each of the two tests, per volume")
	return cmd
}
