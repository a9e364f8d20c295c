package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/streambench/streambench-operator/internal/faults"
)

func init() { rootCmd.AddCommand(newSignalContainerCmd()) }

// newSignalContainerCmd is what a fault's signal Job runs on the
// target's node (internal/provision/faultjob).
func newSignalContainerCmd() *cobra.Command {
	var (
		ids          []string
		sig, termLog string
		pause        time.Duration
		procRoot     string
	)
	cmd := &cobra.Command{
		Use:   "signal-container --container-ids ID,... --signal KILL|STOP [--pause D]",
		Short: "SIGKILL, or SIGSTOP for a while, a container's processes from the host's PID namespace (a fault's Job)",
		Long: `signal-container finds the processes of the given containers by their
cgroup and signals them: KILL sends SIGKILL; STOP sends SIGSTOP, waits
--pause and sends SIGCONT (also when it is stopped early, so nothing is left
stopped). It needs the host's PID namespace (hostPID) and root: the kernel
ignores SIGSTOP and SIGKILL sent to a container's init from inside its own
namespace. The result is one JSON object on stdout and in --termination-log.

Each id must be a whole containerd, CRI-O or Docker id (64 lowercase hex
digits), and a process is the container's only when a whole component of
its cgroup path is the id or the runtime's scope of it
(cri-containerd-<id>.scope, crio-<id>.scope, docker-<id>.scope): never a
part of an id, never a substring.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pids, err := faults.ContainerPids(procRoot, ids)
			if err != nil {
				return err
			}
			if len(pids) == 0 {
				return fmt.Errorf("no process of container(s) %s on this node: the container ended, or the Job does not run in the host's PID namespace (hostPID)", strings.Join(ids, ","))
			}
			var res faults.SignalResult
			switch sig {
			case "KILL":
				res, err = faults.Kill(pids, time.Now)
			case "STOP":
				if pause <= 0 {
					return fmt.Errorf("--signal STOP needs --pause above 0: how long the processes stay stopped")
				}
				// SIGTERM (the Job's deadline, a deletion) ends the pause
				// early; Pause then lets the processes go.
				ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
				defer stop()
				res, err = faults.Pause(ctx, pids, pause, time.Now)
			default:
				return fmt.Errorf("--signal %q: use KILL or STOP", sig)
			}
			b, jerr := json.Marshal(res)
			if jerr != nil {
				return jerr
			}
			fmt.Fprintln(cmd.OutOrStdout(), string(b))
			if termLog != "" && err == nil {
				// The operator reads the outcome from the pod's status.
				if werr := os.WriteFile(termLog, b, 0o644); werr != nil {
					return fmt.Errorf("writing %s: %w", termLog, werr)
				}
			}
			return err
		},
	}
	cmd.Flags().StringSliceVar(&ids, "container-ids", nil, "the containers' ids: 64 lowercase hex digits each, without the runtime's containerd:// prefix; anything else is refused")
	cmd.Flags().StringVar(&sig, "signal", "", "KILL, or STOP (then CONT after --pause)")
	cmd.Flags().DurationVar(&pause, "pause", 0, "how long STOP lasts")
	cmd.Flags().StringVar(&termLog, "termination-log", "/dev/termination-log", "also write the result here")
	cmd.Flags().StringVar(&procRoot, "proc", "/proc", "the host's /proc")
	return cmd
}
