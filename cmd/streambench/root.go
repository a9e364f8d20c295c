// Command streambench is the one binary of streambench: the operator
// (manager), the load generator (coordinator, worker), local mode (run) and
// the result tools (report, compare). Each sub-command lives in its own file
// and registers itself with rootCmd from an init function.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
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
		os.Exit(1)
	}
}
