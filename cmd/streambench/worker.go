package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/streambench/streambench-operator/internal/protocol"
	"github.com/streambench/streambench-operator/internal/worker"
)

func init() { rootCmd.AddCommand(newWorkerCmd()) }

func newWorkerCmd() *cobra.Command {
	var listen, name, cpuProfile string
	var drainIdle time.Duration
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
			// The first signal starts the drain (worker.ServeDraining); a
			// second one ends the process at once, as Ctrl-C twice should.
			context.AfterFunc(ctx, stop)
			if cpuProfile != "" {
				f, err := os.Create(cpuProfile)
				if err != nil {
					return fmt.Errorf("--cpu-profile: %w", err)
				}
				if err := pprof.StartCPUProfile(f); err != nil {
					return fmt.Errorf("--cpu-profile: %w", err)
				}
				// Written when the worker stops (SIGTERM, Ctrl-C or the
				// coordinator's shutdown), so a whole run is profiled.
				defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
			}
			rt := worker.TuneRuntime()
			// In a cluster the run's Secret gives the token (env, see
			// internal/provision/workers); without it any caller may drive
			// the worker, which local mode's loopback workers allow.
			w := worker.New(worker.Options{Name: name, Drivers: worker.DefaultDrivers(), Token: os.Getenv(protocol.TokenEnv)})
			cmd.PrintErrf("worker %s listening on %s (GC percent %s, memory limit %s)\n", name, listen, orUnset(rt.GCPercent), orUnset(rt.MemoryLimit))
			return worker.ServeDraining(ctx, listen, w, worker.Drain{Idle: drainIdle, Logf: func(format string, args ...any) {
				cmd.PrintErrf("worker %s: "+format+"\n", append([]any{name}, args...)...)
			}})
		},
	}
	cmd.Flags().StringVar(&listen, "listen", ":8080", "address of the worker's HTTP API")
	cmd.Flags().StringVar(&name, "name", "", "worker name in the results (default: the host name)")
	cmd.Flags().DurationVar(&drainIdle, "drain-idle", worker.DefaultDrainIdle, "after SIGTERM, keep answering the coordinator until it asks to shut down or makes no call for this long (0: stop at once)")
	cmd.Flags().StringVar(&cpuProfile, "cpu-profile", "", "write a Go CPU profile of the whole worker process to this file (go tool pprof), e.g. for hack/bench-omb --profile")
	return cmd
}

// orUnset prints a runtime setting the worker chose, or that it left it to
// the environment (GOGC, GOMEMLIMIT) or the default.
func orUnset[T int | int64](v T) string {
	if v == 0 {
		return "as set by the environment"
	}
	return fmt.Sprint(v)
}
