package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestCLIReferenceListsVisibleCommandsAndFlags(t *testing.T) {
	root := &cobra.Command{Use: "tool", Short: "the tool"}
	run := &cobra.Command{Use: "run -f FILE", Short: "run it", RunE: func(*cobra.Command, []string) error { return nil }}
	run.Flags().String("file", "", "the run's file")
	root.PersistentFlags().String("kubeconfig", "", "kubeconfig file")
	root.AddCommand(run, &cobra.Command{Use: "secret", Short: "hidden", Hidden: true, Run: func(*cobra.Command, []string) {}})

	var b strings.Builder
	if err := writeCLIReference(&b, root); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"- [`tool run`](#tool-run)",
		"## tool run\n\nrun it\n",
		"tool run -f FILE [flags]",
		"--file string   the run's file",
		"Flags of `tool`:",
		"--kubeconfig string",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("reference lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "secret") {
		t.Errorf("reference lists the hidden command:\n%s", out)
	}
}

func TestCLIReferenceCoversTheBinary(t *testing.T) {
	var b strings.Builder
	if err := writeCLIReference(&b, rootCmd); err != nil {
		t.Fatal(err)
	}
	for _, c := range rootCmd.Commands() {
		if c.Hidden != strings.Contains(b.String(), "\n## streambench "+c.Name()+"\n") {
			continue
		}
		t.Errorf("command %q (hidden %v) is wrongly in or out of the reference", c.Name(), c.Hidden)
	}
}
