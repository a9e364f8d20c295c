// Command durability-experiment measures, on real local brokers, whether each
// durability level syncs to disk before it acknowledges a write: every
// fsync/fdatasync/msync of the brokers is delayed by an LD_PRELOAD shim, a
// small workload runs through streambench's coordinator and worker at every
// level, and the publish latency shows whether the ack waited for a sync.
// It prints the Markdown table of docs/methodology.md and exits non-zero if
// a level does not behave as promised.
//
// With --stall it runs the replica-stall experiment instead: how many
// replicas an acknowledgement waits for, with one Kafka follower stopped
// (SIGSTOP) or one bookie's journal syncs stalled while a producer writes
// (internal/lab/experiment/stall.go), and prints its table.
//
//	go run ./hack/durability-experiment [--delay 30ms] [--measure 4s] [--only kafka|pulsar]
//	go run ./hack/durability-experiment --stall [--stall-for 4s] [--lag-max 12s] [--add-timeout 8s]
//
// Needs Go, a C compiler (cc), Java 17+ and Maven; the brokers it starts are
// stopped before it returns.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/lab/experiment"
)

func main() {
	delay := flag.Duration("delay", 30*time.Millisecond, "delay added to every sync of the brokers")
	measure := flag.Duration("measure", 4*time.Second, "measured phase per level")
	rate := flag.Int64("rate", 200, "messages per second (1 KiB, one partition)")
	only := flag.String("only", "", "run only kafka or pulsar")
	quiet := flag.Bool("quiet", false, "print only the table")
	stall := flag.Bool("stall", false, "run the replica-stall experiment (how many replicas an ack waits for) instead")
	stallFor := flag.Duration("stall-for", 4*time.Second, "with --stall: how long a replica is stopped (under --lag-max)")
	lagMax := flag.Duration("lag-max", 12*time.Second, "with --stall: the Kafka brokers' replica.lag.time.max.ms")
	addTimeout := flag.Duration("add-timeout", 8*time.Second, "with --stall: the Pulsar broker's bookkeeperClientTimeoutInSeconds (whole seconds), after which it replaces a stalled bookie")
	flag.Parse()
	if *stall {
		os.Exit(runStalls(*stallFor, *lagMax, *addTimeout, *rate, *quiet))
	}

	var cells []experiment.Cell
	for _, c := range experiment.Cells() {
		if *only == "" || string(c.System) == *only {
			cells = append(cells, c)
		}
	}
	if len(cells) == 0 {
		fmt.Fprintf(os.Stderr, "--only %q: want %s or %s\n", *only, v1alpha1.SystemKafka, v1alpha1.SystemPulsar)
		os.Exit(2)
	}
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	if *quiet {
		logf = nil
	}
	// Ctrl-C cancels the run; the brokers are stopped on the way out.
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	start := time.Now()
	rs, err := experiment.Run(ctx, experiment.Options{Cells: cells, Delay: *delay, Measure: *measure, Rate: *rate, Log: logf})
	fmt.Print(experiment.Table(rs, *delay))
	fmt.Printf("\n%d cells in %s; load: %s\n", len(rs), time.Since(start).Round(time.Second), loadAverage())
	failed := err != nil
	if err != nil {
		fmt.Fprintln(os.Stderr, "durability-experiment:", err)
	}
	for _, r := range rs {
		if cerr := r.Check(*delay); cerr != nil {
			fmt.Fprintln(os.Stderr, cerr)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

// runStalls runs the replica-stall experiment and prints its table; the
// exit code is 1 if a cell could not tell what its acks waited for.
func runStalls(stallFor, lagMax, addTimeout time.Duration, rate int64, quiet bool) int {
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	if quiet {
		logf = nil
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	start := time.Now()
	rs, err := experiment.RunStalls(ctx, experiment.StallOptions{Stall: stallFor, LagMax: lagMax, AddTimeout: addTimeout, Rate: rate, Log: logf})
	fmt.Print(experiment.StallTable(rs))
	fmt.Printf("\n%d stalls in %s; load: %s\n", len(rs), time.Since(start).Round(time.Second), loadAverage())
	code := 0
	if err != nil {
		fmt.Fprintln(os.Stderr, "durability-experiment:", err)
		code = 1
	}
	for _, r := range rs {
		if r.Cell.PastLag {
			continue
		}
		if _, verr := r.Verdict(); verr != nil {
			fmt.Fprintln(os.Stderr, verr)
			code = 1
		}
	}
	return code
}

// loadAverage is uptime's summary, so a table says how busy the machine was.
func loadAverage() string {
	out, err := exec.Command("uptime").Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return strings.TrimSpace(string(out))
}
