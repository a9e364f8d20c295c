package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/streambench/streambench-operator/internal/version"
)

func init() { rootCmd.AddCommand(newVersionCmd()) }

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version and commit of this binary",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := version.Get()
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(info)
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), info)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {\"version\", \"commit\"} as JSON")
	return cmd
}
