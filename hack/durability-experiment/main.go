// Command durability-experiment measures, on real local brokers, whether each
// durability level syncs to disk before it acknowledges a write: every
// fsync/fdatasync/msync of the brokers is delayed by an LD_PRELOAD shim, a
// small workload runs through streambench's coordinator and worker at every
// level, and the publish latency shows whether the ack waited for a sync.
// It prints the Markdown table of docs/methodology.md and exits non-zero if
// a level does not behave as promised.
//
//	go run ./hack/durability-experiment [--delay 30ms] [--measure 4s] [--only kafka|pulsar]
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
	"github.com/streambench/streambench-operator/internal/durability/experiment"
)

func main() {
	delay := flag.Duration("delay", 30*time.Millisecond, "delay added to every sync of the brokers")
	measure := flag.Duration("measure", 4*time.Second, "measured phase per level")
	rate := flag.Int64("rate", 200, "messages per second (1 KiB, one partition)")
	only := flag.String("only", "", "run only kafka or pulsar")
	quiet := flag.Bool("quiet", false, "print only the table")
	flag.Parse()

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

// loadAverage is uptime's summary, so a table says how busy the machine was.
func loadAverage() string {
	out, err := exec.Command("uptime").Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return strings.TrimSpace(string(out))
}
