// Command streambench is the one binary of streambench: the operator
// (manager), the load generator (coordinator, worker), local mode (run) and
// the result tools (report, compare). Each sub-command lives in its own file
// and registers itself with rootCmd from an init function.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/streambench/streambench-operator/internal/protocol"
)

var rootCmd = &cobra.Command{
	Use:   "streambench",
	Short: "Fair and reproducible Kafka and Pulsar benchmarks",
	Long: `streambench runs OpenMessaging-Benchmark style workloads against Kafka and
Pulsar at a declared durability level, on Kubernetes (manager) or locally.`,
	SilenceUsage:  true,
	SilenceErrors: true,
}

func main() {
	if err := rootCmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "streambench:", err)
		writeTerminationLog(os.Getenv(protocol.TerminationLogEnv), err)
		os.Exit(1)
	}
}

// maxTerminationMessage is what the kubelet keeps of a termination
// message file (4096 bytes); the error's start, its cause, is kept.
const maxTerminationMessage = 4096

// writeTerminationLog writes err to path (a pod's terminationMessagePath;
// nothing when path is empty, outside a pod). A failure to write is said
// and otherwise ignored: the log still has the error, and the kubelet
// falls back to its tail.
func writeTerminationLog(path string, err error) {
	if path == "" {
		return
	}
	msg := "streambench: " + err.Error()
	if len(msg) > maxTerminationMessage {
		msg = strings.ToValidUTF8(msg[:maxTerminationMessage], "")
	}
	if werr := os.WriteFile(path, []byte(msg), 0o644); werr != nil {
		fmt.Fprintf(os.Stderr, "streambench: writing the termination message to %s (%s): %v\n", path, protocol.TerminationLogEnv, werr)
	}
}
