package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/streambench/streambench-operator/internal/protocol"
	"github.com/streambench/streambench-operator/internal/worker"
)

func init() { rootCmd.AddCommand(newWorkerCmd()) }

func newWorkerCmd() *cobra.Command {
	var listen, name string
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run a load-generating worker (HTTP API driven by the coordinator)",
		Long: `worker serves the coordinator's HTTP API: it creates the producers and
consumers assigned to it, publishes on an intended-time schedule and records
publish, send-delay, corrected and end-to-end latency.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				name, _ = os.Hostname()
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// In a cluster the run's Secret gives the token (env, see
			// internal/provision/workers); without it any caller may drive
			// the worker, which local mode's loopback workers allow.
			w := worker.New(worker.Options{Name: name, Drivers: worker.DefaultDrivers(), Token: os.Getenv(protocol.TokenEnv)})
			cmd.PrintErrf("worker %s listening on %s\n", name, listen)
			return worker.Serve(ctx, listen, w)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", ":8080", "address of the worker's HTTP API")
	cmd.Flags().StringVar(&name, "name", "", "worker name in the results (default: the host name)")
	return cmd
}
