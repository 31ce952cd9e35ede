package main

import "github.com/spf13/cobra"

func newReportCmd(s Streams) *cobra.Command {
	return &cobra.Command{Use: "report", Short: "Re-render saved results (not yet built)", Hidden: true,
		RunE: func(*cobra.Command, []string) error { return usageError{errNotYet} }}
}
